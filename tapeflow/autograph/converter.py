"""AutoGraph's source rewrite: Python ``if``/``while``/``for`` become calls of operators.py.

The function's source (inspect.getsource) is parsed with ``ast``; each ``if``,
``while`` and ``for`` statement becomes nested functions plus one call that
decides at run time (operators.py): a Python condition or iterable runs as
Python, a symbolic tensor becomes ``cond``/``while_loop``. The variables a
statement assigns are passed in and returned, so the generated functions are
pure::

    if x > 0:                        def ag__if_true_1(x):
        x = x * x           ->           x = x * x
                                         return (x,)
                                     def ag__if_false_1(x):
                                         return (x,)
                                     (x,) = ag__.if_stmt(x > 0, ag__if_true_1, ag__if_false_1,
                                                         ag__.values(locals(), ('x',)), ('x',))

``break`` and ``continue`` in a converted loop become boolean loop variables;
a ``return`` inside a converted statement (or a loop's ``else``) is kept as
Python, behind a test that raises a clear error when the condition is a tensor.

Every call ``f(args)`` becomes ``ag__.converted_call(f, (args,), kwargs)``,
which converts ``f`` first when it is user code (calls.py): conversion is
recursive, as in TensorFlow. Calls of ``super()``, ``locals()`` and the other
builtins that read their caller's frame are left as they are.

The rewritten function is compiled from the tree once per code object (a cache
keyed by the original code) and rebuilt with ``types.FunctionType`` from its
code object, sharing the original's globals and closure cells: nothing is
exec'd or eval'd, and only the user's own functions are ever compiled.
"""
import ast
import functools
import inspect
import textwrap
import types

from . import operators

PREFIX = "ag__"


class _Names(ast.NodeVisitor):
    """Names bound by statements (not inside nested functions, classes or comprehensions)."""

    def __init__(self):
        self.names = []

    def _add(self, name):
        if name not in self.names:
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_FunctionDef(self, node):
        if not node.name.startswith(PREFIX):   # the generated functions are not state
            self._add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def visit_ListComp(self, node):
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Import(self, node):
        for alias in node.names:
            self._add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import


def assigned_names(statements):
    finder = _Names()
    for s in statements:
        finder.visit(s)
    return finder.names


def _contains(statements, kinds, through_loops):
    """Whether ``statements`` hold a node of ``kinds`` outside nested functions (and, unless
    ``through_loops``, outside nested loops, whose own break/continue they are)."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if not through_loops and isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _call(func, args):
    return ast.Call(func=ast.Attribute(value=_name(PREFIX), attr=func, ctx=ast.Load()), args=args, keywords=[])


def _names_tuple(names, store=False):
    return ast.Tuple(elts=[_name(n, store) for n in names], ctx=ast.Store() if store else ast.Load())


def _strings(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _function(name, params, body, declarations):
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=declarations + (body or [ast.Pass()]), decorator_list=[],
                           returns=None, type_comment=None, type_params=[])


def _return(names):
    return ast.Return(value=_names_tuple(names))


class ControlFlowTransformer(ast.NodeTransformer):
    """Rewrites the control flow of one function body (see the module docstring)."""

    def __init__(self):
        self.counter = 0
        self.declarations = []   # the function's global/nonlocal statements, repeated in generated functions
        self.declared = set()    # their names, which the generated functions reach through them, not as state

    def _next(self, kind):
        self.counter += 1
        return f"{PREFIX}{kind}_{self.counter}"

    def _state_call(self, names):
        return _call("values", [ast.Call(func=_name("locals"), args=[], keywords=[]), _strings(names)])

    def _assign(self, names, value):
        if not names:
            return ast.Expr(value=value)
        return ast.Assign(targets=[_names_tuple(names, store=True)], value=value)

    def _guarded(self, node, test_attr, what):
        """Keeps ``node`` as Python; a tensor condition gets a clear error naming ``what``."""
        self.counter += 1
        setattr(node, test_attr, _call("python_condition", [getattr(node, test_attr), ast.Constant(what)]))
        return node

    def visit_FunctionDef(self, node):
        saved = self.declarations, self.declared
        self.declarations = [s for s in node.body if isinstance(s, (ast.Global, ast.Nonlocal))]
        self.declared = {name for s in self.declarations for name in s.names}
        node.body = _single_return(node.body)
        self.generic_visit(node)
        self.declarations, self.declared = saved
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Return(self, node):
        if node.value is not None:   # a variable left undefined by a tensor statement says so when returned
            node.value = _call("defined", [node.value])
        return node

    def _test(self, test):
        return _BoolOps().visit(test)

    def visit_If(self, node):
        self.generic_visit(node)
        if _contains(node.body + node.orelse, (ast.Return, ast.Break, ast.Continue, ast.Yield), True):
            return self._guarded(node, "test", "a return, break or continue inside an if statement")
        names = [n for n in assigned_names(node.body + node.orelse) if n not in self.declared]
        true_name, false_name = self._next("if_true"), self._next("if_false")
        declarations = list(self.declarations)
        true_fn = _function(true_name, names, node.body + [_return(names)], declarations)
        false_fn = _function(false_name, names, node.orelse + [_return(names)], declarations)
        call = _call("if_stmt", [self._test(node.test), _name(true_name), _name(false_name),
                                 self._state_call(names), _strings(names)])
        return [true_fn, false_fn, self._assign(names, call)]

    def _loop_flags(self, body):
        """``break``/``continue`` as flags: (rewritten body, the break flag or None, the flags the loop carries)."""
        has_break = _contains(body, ast.Break, False)
        has_continue = _contains(body, ast.Continue, False)
        if not (has_break or has_continue):
            return body, None, []
        brk = self._next("break") if has_break else None
        cont = self._next("continue") if has_continue else None
        body = _FlagRewriter(brk, cont).rewrite(body)
        prelude = [ast.Assign(targets=[_name(cont, True)], value=ast.Constant(False))] if cont else []
        return prelude + body, brk, [brk] if brk else []

    def visit_While(self, node):
        if node.orelse or _contains(node.body, (ast.Return, ast.Yield), True):
            self.generic_visit(node)
            return self._guarded(node, "test", "a while loop with a return statement or an else clause")
        node.body, brk, flags = self._loop_flags(node.body)
        self.generic_visit(node)
        names = flags + [n for n in assigned_names(node.body) if n not in flags and n not in self.declared]
        test = self._test(node.test)
        if brk:
            test = _call("and_", [ast.Lambda(args=_no_args(), body=_call("not_", [_name(brk)])),
                                  ast.Lambda(args=_no_args(), body=test)])
        test_name, body_name = self._next("while_test"), self._next("while_body")
        declarations = list(self.declarations)
        test_fn = _function(test_name, names, [ast.Return(value=test)], declarations)
        body_fn = _function(body_name, names, node.body + [_return(names)], declarations)
        call = _call("while_stmt", [_name(test_name), _name(body_name), self._state_call(names), _strings(names)])
        return self._flag_init(brk) + [test_fn, body_fn, self._assign(names, call)]

    def visit_For(self, node):
        if node.orelse or _contains(node.body, (ast.Return, ast.Yield), True):
            self.generic_visit(node)
            self.counter += 1
            node.iter = _call("python_iterable", [node.iter, ast.Constant(
                "a for loop with a return statement or an else clause")])
            return node
        item = self._next("item")
        body, brk, flags = self._loop_flags(node.body)
        node.body = [ast.Assign(targets=[node.target], value=_name(item))] + body
        self.generic_visit(node)
        names = flags + [n for n in assigned_names(node.body) if n not in flags and n not in self.declared]
        body_name = self._next("for_body")
        body_fn = _function(body_name, [item] + names, node.body + [_return(names)], list(self.declarations))
        call = _call("for_stmt", [node.iter, _name(body_name), self._state_call(names), _strings(names),
                                  ast.Constant(brk)])
        return self._flag_init(brk) + [body_fn, self._assign(names, call)]

    @staticmethod
    def _flag_init(brk):
        return [ast.Assign(targets=[_name(brk, True)], value=ast.Constant(False))] if brk else []


RETURN_VALUE = PREFIX + "return_value"


def _single_return(body):
    """A body whose ``return`` statements sit in ``if`` statements (not in loops) rewritten to assign one
    variable, returned at the end: what follows an ``if`` moves into both of its branches, so each path
    still runs the same statements. Bodies with a return in a loop, or a yield, are left as they are."""
    ifs_return = any(isinstance(s, ast.If) and _contains([s], ast.Return, True) for s in ast.walk(ast.Module(
        body=body, type_ignores=[])) if not isinstance(s, (ast.FunctionDef, ast.Lambda)))
    loops_return = any(isinstance(s, (ast.For, ast.While)) and _contains(s.body + s.orelse, ast.Return, True)
                       for s in _statements(body))
    if not ifs_return or loops_return or _contains(body, (ast.Yield, ast.YieldFrom), True):
        return body
    declarations = [s for s in body if isinstance(s, (ast.Global, ast.Nonlocal))]
    rest = [s for s in body if not isinstance(s, (ast.Global, ast.Nonlocal))]
    start = [ast.Assign(targets=[_name(RETURN_VALUE, True)], value=ast.Constant(None))]
    return declarations + start + _fold_returns(rest) + [ast.Return(value=_name(RETURN_VALUE))]


def _statements(body):
    """Every statement of ``body``, nested blocks included (not inside nested functions)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, field, []))


def _fold_returns(statements):
    out = []
    for k, stmt in enumerate(statements):
        if isinstance(stmt, ast.Return):
            value = stmt.value if stmt.value is not None else ast.Constant(None)
            out.append(ast.Assign(targets=[_name(RETURN_VALUE, True)], value=value))
            return out
        if isinstance(stmt, ast.If) and _contains([stmt], ast.Return, True):
            rest = statements[k + 1:]
            stmt.body = _fold_returns(stmt.body + rest)
            stmt.orelse = _fold_returns(stmt.orelse + rest)
            out.append(stmt)
            return out
        out.append(stmt)
    return out


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


class _BoolOps(ast.NodeTransformer):
    """``a and b``, ``a or b`` and ``not a`` in a condition: tensor logic when an operand is a tensor,
    Python's (short-circuiting) otherwise."""

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        func = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(func, [ast.Lambda(args=_no_args(), body=value), ast.Lambda(args=_no_args(), body=result)])
        return result

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand])
        return node

    def visit_Lambda(self, node):
        return node


class _FlagRewriter:
    """``break`` -> ``brk = True``, ``continue`` -> ``cont = True``; the statements after one (in its
    block and the enclosing blocks of the loop body) run under ``if not (brk or cont)``."""

    def __init__(self, brk, cont):
        self.brk, self.cont = brk, cont

    def _stop(self):
        flags = [_name(f) for f in (self.brk, self.cont) if f]
        test = flags[0] if len(flags) == 1 else ast.BoolOp(op=ast.Or(), values=flags)
        return ast.UnaryOp(op=ast.Not(), operand=test)

    def rewrite(self, statements):
        out = []
        for k, stmt in enumerate(statements):
            if isinstance(stmt, ast.Break):
                out.append(ast.Assign(targets=[_name(self.brk, True)], value=ast.Constant(True)))
                return out
            if isinstance(stmt, ast.Continue):
                out.append(ast.Assign(targets=[_name(self.cont, True)], value=ast.Constant(True)))
                return out
            if isinstance(stmt, ast.If) and _contains([stmt], (ast.Break, ast.Continue), False):
                stmt.body = self.rewrite(stmt.body)
                stmt.orelse = self.rewrite(stmt.orelse)
                out.append(stmt)
                rest = self.rewrite(statements[k + 1:])
                if rest:
                    out.append(ast.If(test=self._stop(), body=rest, orelse=[]))
                return out
            if isinstance(stmt, (ast.With, ast.Try)) and _contains([stmt], (ast.Break, ast.Continue), False):
                stmt.body = self.rewrite(stmt.body)
                out.append(stmt)
                rest = self.rewrite(statements[k + 1:])
                if rest:
                    out.append(ast.If(test=self._stop(), body=rest, orelse=[]))
                return out
            out.append(stmt)
        return out


_FRAME_BUILTINS = frozenset(("super", "locals", "globals", "vars", "dir", "eval", "exec", "__import__"))


class _CallRewriter(ast.NodeTransformer):
    """``f(a, *b, k=c, **d)`` -> ``ag__.converted_call(f, (a, *b), {'k': c, **d})``: the functions the
    converted function calls are converted too when they are user code (calls.py decides at run time).
    Calls of builtins that read the calling frame (``super()``, ``locals()``) stay as they are."""

    def __init__(self):
        self.count = 0

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_BUILTINS:
            return node
        self.count += 1
        args = ast.Tuple(elts=list(node.args), ctx=ast.Load())
        if node.keywords:
            kwargs = ast.Dict(keys=[None if k.arg is None else ast.Constant(k.arg) for k in node.keywords],
                              values=[k.value for k in node.keywords])
        else:
            kwargs = ast.Constant(None)
        return _call("converted_call", [node.func, args, kwargs])


# ------------------------------------------------------------------ conversion ---
def _function_node(fn):
    """The definition of ``fn``'s own code (not of a function a decorator's wrapper names itself after)."""
    code = fn.__code__
    source = textwrap.dedent(inspect.getsource(code))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            return tree, node, source
    raise ValueError(f"no definition of {code.co_name} in its source")


def _converted_node(fn):
    """(the converted definition, how many statements and calls were rewritten)."""
    tree, node, source = _function_node(fn)
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - (node.decorator_list or [node])[0].lineno)
    node.decorator_list = []
    calls = _CallRewriter()
    node.body = [calls.visit(statement) for statement in node.body]
    transformer = ControlFlowTransformer()
    node = transformer.visit(node)
    if "__class__" in fn.__code__.co_freevars:   # zero-argument super() finds the class through this cell
        _explicit_super(node)
        node.body.insert(0, ast.Expr(value=_name("__class__")))
    return node, transformer.counter + calls.count


def _explicit_super(node):
    """``super()`` -> ``super(__class__, self)`` in a method: a statement AutoGraph moves into a generated
    function would otherwise look for the class and instance in that function's frame."""
    params = node.args.posonlyargs + node.args.args
    if not params:
        return
    stack = list(node.body)
    while stack:
        call = stack.pop()
        if isinstance(call, ast.ClassDef):   # its methods' super() is their own class's
            continue
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "super" \
                and not call.args and not call.keywords:
            call.args = [_name("__class__"), _name(params[0].arg)]
        stack.extend(ast.iter_child_nodes(call))


def _locate(tree, line):
    """Generated nodes take the line of the statement they replace (tracebacks point at the user's code)."""
    def visit(node, line):
        if "lineno" in node._attributes:
            if getattr(node, "lineno", None) is None:
                node.lineno, node.col_offset = line, 0
            if getattr(node, "end_lineno", None) is None or node.end_lineno < node.lineno:
                node.end_lineno, node.end_col_offset = node.lineno, 0
            line = node.lineno
        for child in ast.iter_child_nodes(node):
            visit(child, line)
    visit(tree, line)


def to_code(fn, recursive=True, experimental_optional_features=None):
    """The converted source of ``fn`` (``tf.autograph.to_code``)."""
    fn = inspect.unwrap(getattr(fn, "python_function", fn))
    node, _ = _converted_node(fn)
    _locate(node, node.lineno)
    return ast.unparse(node) + "\n"


_CONVERTED = {}            # original code object -> the converted code object, or None (nothing to convert)
_PRODUCED = set()          # code objects compiled from converted sources, nested functions included


def convert(fn):
    """``fn`` with its control flow converted, or ``fn`` itself when there is nothing to convert or its
    source cannot be read (lambdas, functions typed at an interactive prompt, builtins). The converted
    code is compiled once per code object; each function gets its own globals, closure and defaults."""
    if isinstance(fn, functools.partial):
        converted = convert(fn.func)
        return fn if converted is fn.func else functools.partial(converted, *fn.args, **fn.keywords)
    if (not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>" or getattr(fn, "__ag_skip__", False)
            or inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn)):
        return fn
    key = fn.__code__
    if key in _PRODUCED:     # already converted (a function defined inside converted code)
        return fn
    if key not in _CONVERTED:
        try:
            node, count = _converted_node(fn)
        except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
            node, count = None, 0
        _CONVERTED[key] = _compile(fn, node) if count else None
    code = _CONVERTED[key]
    return fn if code is None else _instantiate(fn, code)


def _compile(fn, node):
    """Compiles the converted definition inside a factory whose parameters are the original's free
    variables and ``ag__``; returns the converted function's code object."""
    freevars = list(fn.__code__.co_freevars)
    factory = _function("ag__factory", freevars + [PREFIX], [node, ast.Return(value=_name(node.name))], [])
    module = ast.Module(body=[factory], type_ignores=[])
    _locate(module, node.lineno)
    code = compile(module, fn.__code__.co_filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == "ag__factory")
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    stack = [inner]
    while stack:
        c = stack.pop()
        _PRODUCED.add(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return inner


def _instantiate(fn, inner):
    """The converted function for ``fn``: its code, with ``fn``'s globals, cells and defaults."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[PREFIX] = _OPERATORS_CELL
    closure = tuple(cells[name] for name in inner.co_freevars)
    converted = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    converted.__kwdefaults__ = fn.__kwdefaults__
    converted.__dict__.update(fn.__dict__)
    converted.__wrapped__ = fn
    return converted


_OPERATORS_CELL = types.CellType(operators)


def do_not_convert(func=None):
    """``tf.autograph.experimental.do_not_convert``: the function keeps its Python control flow."""
    if func is None:
        return do_not_convert
    func.__ag_skip__ = True
    return func
