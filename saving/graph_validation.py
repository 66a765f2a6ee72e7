"""Checks every field of a SavedModel's saved_model.json before anything is built from it.

The loader trusts nothing in the file: counts, indices, references between nodes,
inputs, constants, captures and variables, op types (registered ops only), each
op's attributes (saving/op_attributes.py), dtypes, shapes and nesting depth. A bad
field raises FileContentError naming the file, where in the document it is (the
function and node), and what is wrong with it; nothing is registered or created.
"""
from tapeflow.framework import dtypes
from tapeflow.framework.recording import _FORWARDS
from tapeflow.framework.recording import state_op_variable_counts
from tapeflow.function import VARIABLE_ASSIGN, VARIABLE_READ
from tapeflow.graph_replay import ASSIGN_METHODS
from tapeflow.module import Module

from . import op_attributes as attributes
from .op_attributes import describe
from .errors import FileContentError

MAX_DEPTH = 64                   # nesting of output structures and of module children
MAX_COUNT = 2 ** 24              # constants, captures, gradient inputs and outputs
MAX_UNPACKED_OUTPUTS = 2 ** 20   # outputs of variadic ops whose count nothing else in the file fixes
_CONTROL_FLOW = {"If": ("then_branch", "else_branch"), "While": ("cond", "body")}   # their sub-graph attributes
_RESERVED_ATTRIBUTES = ({name for name in dir(Module) if not name.startswith("__")}
                        | {"signatures", "_name", "_scope_name"})


def _ensure_ops_registered():
    """Op families that tapeflow imports lazily register their ops here, so that a fresh process
    knows every op a file may name."""
    from tapeflow.ops import batchnorm_ops  # noqa: F401


class _Invalid(Exception):
    def __init__(self, where, problem):
        super().__init__(where, problem)
        self.where, self.problem = where, problem


def _fail(where, problem):
    raise _Invalid(where, problem)


def _index(value):
    return value if isinstance(value, int) else describe(value)


def _key(name):
    """A name from the file as it appears in an error's location: quoted, and cut short."""
    text = repr(name)
    return text if len(text) <= 60 else text[:57] + "..."


def _mapping(value, where):
    if not isinstance(value, dict):
        _fail(where, f"expected an object, got {describe(value)}")
    return value


def _list(value, where, max_len=None):
    if not isinstance(value, list):
        _fail(where, f"expected a list, got {describe(value)}")
    if max_len is not None and len(value) > max_len:
        _fail(where, f"has {len(value)} entries, more than {max_len}")
    return value


def _field(data, key, where):
    if key not in data:
        _fail(where, f"the field {key!r} is missing")
    return data[key]


def _check(checker, value, where):
    problem = checker(value)
    if problem:
        _fail(where, problem)
    return value


def _int(value, where, lo=0, hi=MAX_COUNT):
    return _check(attributes.int_in(lo, hi + 1), value, where)


def _bool(value, where):
    return _check(attributes.boolean, value, where)


def _text(value, where):
    return _check(attributes.string, value, where)


def _dims(value, where, unknown_allowed):
    """A shape as saved: a list of sizes (None for unknown ones when ``unknown_allowed``)."""
    _list(value, where, attributes.MAX_RANK)
    for i, d in enumerate(value):
        if d is None and unknown_allowed:
            continue
        _int(d, f"{where}[{i}]", 0, attributes.MAX_DIMENSION)
    return value


def _spec(value, where):
    spec = _mapping(value, where)
    shape = _field(spec, "shape", where)
    if shape is not None:
        _dims(shape, f"{where}.shape", unknown_allowed=True)
    dtype = _field(spec, "dtype", where)
    if not isinstance(dtype, str) or dtype not in dtypes._BY_NAME:
        _fail(f"{where}.dtype", f"expected a dtype name, got {describe(dtype)}")
    name = spec.get("name")
    if name is not None:
        _text(name, f"{where}.name")


def _specs(value, where):
    for i, spec in enumerate(_list(value, where, MAX_COUNT)):
        _spec(spec, f"{where}[{i}]")


def _attribute_name(name, where):
    if not isinstance(name, str) or not name.isidentifier() or len(name) > attributes.MAX_STRING:
        _fail(where, f"{describe(name)} is not a valid attribute name")
    if (name.startswith("__") and name != "__call__") or name in _RESERVED_ATTRIBUTES:
        _fail(where, f"the attribute name {name!r} is reserved by tf.Module")


def _safe_key(key, where):
    """``constants_key`` names an HDF5 group: relative, with no empty, '.' or '..' parts."""
    _text(key, where)
    if not key or any(part in ("", ".", "..") for part in key.split("/")):
        _fail(where, f"{_key(key)} is not a valid member name of variables.h5")


def _optional_mapping(document, key):
    value = document.get(key)
    return {} if value is None else _mapping(value, key)


def _check_acyclic(uses):
    """Tracing makes a custom gradient's graph name only gradients traced after it; a cycle would
    keep its bound gradients registered forever (each entry holding the next one's name)."""
    done = set()
    for root in uses:
        path, on_path, stack = [], set(), [(root, iter(sorted(uses[root])))]
        path.append(root)
        on_path.add(root)
        while stack:
            name, pending = stack[-1]
            following = next(pending, None)
            if following is None:
                stack.pop()
                on_path.discard(path.pop())
                done.add(name)
            elif following in on_path:
                cycle = path[path.index(following):] + [following]
                _fail(f"custom_gradients[{_key(following)}]", "the custom gradients name each other in a cycle: "
                      + " -> ".join(_key(n) for n in cycle))
            elif following not in done:
                stack.append((following, iter(sorted(uses[following]))))
                path.append(following)
                on_path.add(following)


class _DocumentChecker:
    def __init__(self, document):
        self.document = _mapping(document, "the document")
        self.kinds = []
        self.gradients = {}
        self.used = set()     # the saved gradients that the graph being checked names
        self.unpacked_outputs = 0
        self.depth = 0        # control-flow sub-graphs being checked, one inside the other

    def check(self):
        doc = self.document
        entries = _list(_field(doc, "objects", "the document"), "objects")
        if not entries:
            _fail("objects", "is empty: a SavedModel has at least its root module")
        for i, entry in enumerate(entries):
            where = f"objects[{i}]"
            kind = _field(_mapping(entry, where), "kind", where)
            if kind not in ("variable", "module"):
                _fail(f"{where}.kind", f"unknown object kind {describe(kind)}")
            self.kinds.append(kind)
        if self.kinds[0] != "module":
            _fail("objects[0].kind", "the root object must be a module")
        gradients = _optional_mapping(doc, "custom_gradients")
        for name, info in gradients.items():
            where = f"custom_gradients[{_key(name)}]"
            _text(name, where)
            info = _mapping(info, where)
            self.gradients[name] = tuple(_int(_field(info, key, where), f"{where}.{key}")
                                         for key in ("n_outputs", "n_differentiable", "n_captures"))
        uses = {}
        for name, info in gradients.items():
            where = f"custom_gradients[{_key(name)}]"
            self.used = uses[name] = set()
            self.graph(_field(info, "graph", where), f"{where}.graph", gradient=self.gradients[name])
        _check_acyclic(uses)
        self.used = set()
        for name, info in _optional_mapping(doc, "signatures").items():
            where = f"signatures[{_key(name)}]"
            _text(name, where)
            info = _mapping(info, where)
            _bool(_field(info, "polymorphic", where), f"{where}.polymorphic")
            self.graph(_field(info, "graph", where), f"{where}.graph")
        for i, entry in enumerate(entries):
            (self.variable if self.kinds[i] == "variable" else self.module)(entry, f"objects[{i}]")

    # -- objects ---------------------------------------------------------------------
    def variable(self, entry, where):
        _text(_field(entry, "name", where), f"{where}.name")
        _bool(_field(entry, "trainable", where), f"{where}.trainable")
        dtype = _field(entry, "dtype", where)
        _check(attributes.dtype_name, dtype, f"{where}.dtype")
        _dims(_field(entry, "shape", where), f"{where}.shape", unknown_allowed=False)

    def module(self, entry, where):
        name = entry.get("name")
        if name is not None:
            _text(name, f"{where}.name")
        for attr, child in _mapping(_field(entry, "children", where), f"{where}.children").items():
            _attribute_name(attr, f"{where}.children")
            self.child(child, f"{where}.children[{_key(attr)}]", 0)
        for attr, function in _mapping(_field(entry, "functions", where), f"{where}.functions").items():
            _attribute_name(attr, f"{where}.functions")
            self.function(function, f"{where}.functions[{_key(attr)}]")

    def child(self, value, where, depth):
        if depth > MAX_DEPTH:
            _fail(where, f"nested more than {MAX_DEPTH} levels deep")
        value = _mapping(value, where)
        if len(value) != 1 or next(iter(value)) not in ("object", "list", "dict"):
            _fail(where, f"expected one of 'object', 'list' or 'dict', got the keys {sorted(value)}")
        (kind, content), = value.items()
        if kind == "object":
            _int(content, f"{where}.object", 0, len(self.kinds) - 1)
            return
        items = _list(content, f"{where}.list") if kind == "list" else \
            _mapping(content, f"{where}.dict").items()
        for key, item in (enumerate(items) if kind == "list" else items):
            if item is not None:
                self.child(item, f"{where}.{kind}[{_key(key)}]", depth + 1)

    def function(self, value, where):
        function = _mapping(value, where)
        signature = _field(function, "input_signature", where)
        if signature is not None:
            _specs(signature, f"{where}.input_signature")
        for k, concrete in enumerate(_list(_field(function, "concretes", where), f"{where}.concretes")):
            at = f"{where}.concretes[{k}]"
            concrete = _mapping(concrete, at)
            _bool(_field(concrete, "polymorphic", at), f"{at}.polymorphic")
            self.graph(_field(concrete, "graph", at), f"{at}.graph")

    # -- graphs ----------------------------------------------------------------------
    def graph(self, value, where, gradient=None, subgraph=False):
        graph = _mapping(value, where)
        _text(_field(graph, "name", where), f"{where}.name")
        inputs = _field(graph, "inputs", where)
        _specs(inputs, f"{where}.inputs")
        traced = _list(_field(graph, "traced_shapes", where), f"{where}.traced_shapes")
        if len(traced) != len(inputs):
            _fail(f"{where}.traced_shapes", f"has {len(traced)} shapes for {len(inputs)} inputs")
        for i, (shape, spec) in enumerate(zip(traced, inputs)):
            _dims(shape, f"{where}.traced_shapes[{i}]", unknown_allowed=False)
            declared = spec["shape"]
            if declared is not None and (len(declared) != len(shape)
                                         or any(d is not None and d != s for d, s in zip(declared, shape))):
                _fail(f"{where}.traced_shapes[{i}]", f"{shape} does not match the input's shape {declared}")
        n_captures = _int(_field(graph, "n_captures", where), f"{where}.n_captures")
        n_constants = _int(_field(graph, "n_constants", where), f"{where}.n_constants")
        if subgraph:   # a control-flow branch or loop body: everything it uses is an input of its node
            if n_constants or n_captures:
                _fail(where, "a control-flow sub-graph has no constants and no captures, but this one has "
                      f"{n_constants} and {n_captures}")
            output_specs = _list(_field(graph, "output_specs", where), f"{where}.output_specs", MAX_COUNT)
            for j, spec in enumerate(output_specs):
                at = f"{where}.output_specs[{j}]"
                _check(attributes.dtype_name, _field(_mapping(spec, at), "dtype", at), f"{at}.dtype")
                _dims(_field(spec, "shape", at), f"{at}.shape", unknown_allowed=False)
        else:
            _safe_key(_field(graph, "constants_key", where), f"{where}.constants_key")
        specs = graph.get("constant_specs")     # absent from files written before it was added
        if specs is not None:
            if len(_list(specs, f"{where}.constant_specs")) != n_constants:
                _fail(f"{where}.constant_specs", f"has {len(specs)} entries for {n_constants} constants")
            for j, spec in enumerate(specs):
                at = f"{where}.constant_specs[{j}]"
                _check(attributes.dtype_name, _field(_mapping(spec, at), "dtype", at), f"{at}.dtype")
                _dims(_field(spec, "shape", at), f"{at}.shape", unknown_allowed=False)
        if gradient is None and n_captures:
            _fail(f"{where}.n_captures", f"is {n_captures}, but only a custom gradient's graph captures tensors")
        if gradient is not None:
            n_outputs, n_differentiable, expected_captures = gradient
            if len(inputs) != n_outputs:
                _fail(f"{where}.inputs", f"has {len(inputs)} entries, but the gradient has {n_outputs} "
                      "upstream gradients (n_outputs)")
            if n_captures != expected_captures:
                _fail(f"{where}.n_captures", f"is {n_captures}, but the gradient's n_captures is {expected_captures}")
        sources = {"in": len(inputs), "const": n_constants, "capture": n_captures}
        outputs_of = []
        for k, node in enumerate(_list(_field(graph, "nodes", where), f"{where}.nodes")):
            outputs_of.append(self.node(node, f"{where}.nodes[{k}]", sources, outputs_of))
        structure = _field(graph, "outputs", where)
        self.structure(structure, f"{where}.outputs", sources, outputs_of, 0)
        if subgraph:
            returned = structure.get("list") if isinstance(structure, dict) else None
            if not isinstance(returned, list) or any("ref" not in _mapping(r, f"{where}.outputs") for r in returned):
                _fail(f"{where}.outputs", "a control-flow sub-graph returns a list of tensors")
            if len(returned) != len(output_specs):
                _fail(f"{where}.output_specs", f"has {len(output_specs)} entries for {len(returned)} outputs")
        if gradient is not None:
            returned = structure.get("list") if isinstance(structure, dict) else None
            if not isinstance(returned, list) or len(returned) != gradient[1]:
                _fail(f"{where}.outputs", f"a custom gradient returns a list of {gradient[1]} gradients "
                      "(n_differentiable)")

    def ref(self, value, where, sources, outputs_of):
        if not isinstance(value, list) or not value or value[0] not in ("in", "const", "capture", "node"):
            _fail(where, f"expected a reference such as [\"in\", 0] or [\"node\", 3, 0], got {describe(value)}")
        kind = value[0]
        if kind != "node":
            if len(value) != 2:
                _fail(where, f"expected [{kind!r}, index], got {describe(value)}")
            if sources[kind] == 0:
                _fail(where, f"refers to {kind!r} {_index(value[1])}, but the graph has none")
            _int(value[1], f"{where}[1]", 0, sources[kind] - 1)
            return
        if len(value) != 3:
            _fail(where, f"expected [\"node\", node, output], got {describe(value)}")
        if not outputs_of:
            _fail(where, f"refers to node {_index(value[1])}, but no node precedes it")
        k = _int(value[1], f"{where}[1]", 0, len(outputs_of) - 1)
        if outputs_of[k] == 0:
            _fail(where, f"refers to an output of node {k}, which has none")
        _int(value[2], f"{where}[2]", 0, outputs_of[k] - 1)

    def node(self, value, where, sources, outputs_of):
        node = _mapping(value, where)
        op = _field(node, "op", where)
        if not isinstance(op, str):
            _fail(f"{where}.op", f"expected an op type name, got {describe(op)}")
        where = f"{where} ({op if len(op) <= 60 else op[:57] + '...'})"
        inputs = _list(_field(node, "inputs", where), f"{where}.inputs", MAX_COUNT)
        for i, ref in enumerate(inputs):
            self.ref(ref, f"{where}.inputs[{i}]", sources, outputs_of)
        attrs = _mapping(_field(node, "attrs", where), f"{where}.attrs")
        num_outputs = _field(node, "num_outputs", where)
        _int(num_outputs, f"{where}.num_outputs", 0, MAX_COUNT)
        if op in (VARIABLE_READ, VARIABLE_ASSIGN):
            self.variable_node(op, inputs, attrs, num_outputs, where)
        elif op not in _FORWARDS:
            _fail(f"{where}.op", f"unknown op type {_key(op)}")
        elif state_op_variable_counts(op) is not None:
            self.state_node(op, inputs, attrs, num_outputs, where)
        else:
            self.op_node(op, inputs, attrs, num_outputs, where)
        return num_outputs

    def state_node(self, op, inputs, attrs, num_outputs, where):
        """A state op: ``variables`` names the variable objects it updates; the rest is an op's."""
        fewest, most = state_op_variable_counts(op)
        updated = _list(_field(attrs, "variables", f"{where}.attrs"), f"{where}.attrs.variables", most)
        if len(updated) < fewest:
            _fail(f"{where}.attrs.variables", f"{op} updates at least {fewest} variables, got {len(updated)}")
        for i, index in enumerate(updated):
            index = _int(index, f"{where}.attrs.variables[{i}]", 0, len(self.kinds) - 1)
            if self.kinds[index] != "variable":
                _fail(f"{where}.attrs.variables[{i}]", f"object {index} is a {self.kinds[index]}, not a variable")
        if num_outputs != 0:
            _fail(f"{where}.num_outputs", f"is {num_outputs}, expected 0 ({op} has no outputs)")
        gated = _bool(attrs["gated"], f"{where}.attrs.gated") if "gated" in attrs else False
        if gated and not inputs:
            _fail(f"{where}.inputs", "a gated update needs its condition as the last input")
        own = {k: v for k, v in attrs.items() if k not in ("variables", "gated")}
        self.op_node(op, inputs[:-1] if gated else inputs, own, 0, where)

    def variable_node(self, op, inputs, attrs, num_outputs, where):
        expected = {"variable"} if op == VARIABLE_READ else {"variable", "mode"}
        if set(attrs) != expected:
            _fail(f"{where}.attrs", f"expected the attributes {sorted(expected)}, got {sorted(attrs)}")
        index = _int(attrs["variable"], f"{where}.attrs.variable", 0, len(self.kinds) - 1)
        if self.kinds[index] != "variable":
            _fail(f"{where}.attrs.variable", f"object {index} is a {self.kinds[index]}, not a variable")
        if op == VARIABLE_ASSIGN and (not isinstance(attrs["mode"], str) or attrs["mode"] not in ASSIGN_METHODS):
            _fail(f"{where}.attrs.mode", f"expected one of {sorted(ASSIGN_METHODS)}, got {describe(attrs['mode'])}")
        n_in, n_out = (0, 1) if op == VARIABLE_READ else (1, 0)
        if len(inputs) != n_in:
            _fail(f"{where}.inputs", f"has {len(inputs)} entries, expected {n_in}")
        if num_outputs != n_out:
            _fail(f"{where}.num_outputs", f"is {num_outputs}, expected {n_out}")

    def op_node(self, op, inputs, attrs, num_outputs, where):
        forward, registered_outputs = _FORWARDS[op]
        schema = attributes.schema_of(op)
        for name, value in attrs.items():
            checker = schema.attrs.get(name)
            if checker is None:
                _fail(f"{where}.attrs", f"{op} has no attribute {_key(name)}")
            _check(checker, value, f"{where}.attrs.{name}")
        missing = sorted(set(schema.attrs) - set(attrs) - schema.optional)
        if missing:
            _fail(f"{where}.attrs", f"the attributes {missing} are missing")
        arity = attributes.input_arity(forward, schema)
        if arity is not None and not (arity[0] <= len(inputs) and (arity[1] is None or len(inputs) <= arity[1])):
            expected = arity[0] if arity[0] == arity[1] else f"at least {arity[0]}"
            _fail(f"{where}.inputs", f"{op} takes {expected} inputs, got {len(inputs)}")
        if op in _CONTROL_FLOW:
            expected = self.control_flow_node(op, inputs, attrs, where)
        elif registered_outputs >= 0:
            expected = registered_outputs
        elif op in ("IdentityN", "CollectiveAllReduce"):
            expected = len(inputs)
        elif op == "SplitV":
            expected = len(attrs["sizes"])
        else:
            self.unpacked_outputs += num_outputs
            if self.unpacked_outputs > MAX_UNPACKED_OUTPUTS:
                _fail(f"{where}.num_outputs", f"the file's variadic-output nodes have more than "
                      f"{MAX_UNPACKED_OUTPUTS} outputs in all")
            expected = num_outputs
        if num_outputs != expected:
            _fail(f"{where}.num_outputs", f"is {num_outputs}, but {op} makes {expected} outputs here")
        gradient = attrs.get("_gradient_op_type")
        if gradient in self.gradients:
            self.used.add(gradient)
            n_outputs, n_differentiable, n_captures = self.gradients[gradient]
            if len(inputs) != n_outputs + n_differentiable + n_captures:
                _fail(f"{where}.inputs", f"has {len(inputs)} entries, but its custom gradient {_key(gradient)} needs "
                      f"{n_outputs} + {n_differentiable} + {n_captures}")

    def control_flow_node(self, op, inputs, attrs, where):
        """Checks an If / While node's sub-graphs (nested at most MAX_DEPTH deep) against its inputs;
        returns its number of outputs."""
        if self.depth >= MAX_DEPTH:
            _fail(where, f"control flow nested more than {MAX_DEPTH} levels deep")
        self.depth += 1
        counts = {}
        for name in _CONTROL_FLOW[op]:
            graph = attrs[name]["subgraph"]
            self.graph(graph, f"{where}.attrs.{name}.subgraph", subgraph=True)
            counts[name] = (len(graph["inputs"]), len(graph["outputs"]["list"]))
        self.depth -= 1
        if op == "If":
            for name in ("then_branch", "else_branch"):
                if counts[name][0] != len(inputs) - 1:
                    _fail(f"{where}.attrs.{name}", f"takes {counts[name][0]} inputs, but the node passes "
                          f"{len(inputs) - 1} (its inputs after the predicate)")
            if counts["then_branch"][1] != counts["else_branch"][1]:
                _fail(f"{where}.attrs", "the branches return different numbers of outputs")
            return counts["then_branch"][1]
        for name in ("cond", "body"):
            if counts[name][0] != len(inputs):
                _fail(f"{where}.attrs.{name}", f"takes {counts[name][0]} inputs, but the node has {len(inputs)}")
        if counts["cond"][1] != 1:
            _fail(f"{where}.attrs.cond", "returns more than one value")
        if counts["body"][1] > len(inputs):
            _fail(f"{where}.attrs.body", f"returns {counts['body'][1]} loop variables for {len(inputs)} inputs")
        return counts["body"][1] + 1

    def structure(self, value, where, sources, outputs_of, depth):
        if depth > MAX_DEPTH:
            _fail(where, f"nested more than {MAX_DEPTH} levels deep")
        value = _mapping(value, where)
        if len(value) != 1 or next(iter(value)) not in ("ref", "python", "dict", "tuple", "list"):
            _fail(where, f"expected one of 'ref', 'python', 'dict', 'tuple' or 'list', got the keys {sorted(value)}")
        (kind, content), = value.items()
        if kind == "ref":
            self.ref(content, f"{where}.ref", sources, outputs_of)
        elif kind == "python":
            if content is not None and not isinstance(content, (bool, int, float, str)):
                _fail(f"{where}.python", f"expected null, a boolean, a number or a string, got {describe(content)}")
        elif kind == "dict":
            for key, item in _mapping(content, f"{where}.dict").items():
                self.structure(item, f"{where}.dict[{_key(key)}]", sources, outputs_of, depth + 1)
        else:
            for i, item in enumerate(_list(content, f"{where}.{kind}")):
                self.structure(item, f"{where}.{kind}[{i}]", sources, outputs_of, depth + 1)


def validate_document(document, source):
    """Raises FileContentError, naming ``source`` and the field, unless ``document`` is well formed."""
    _ensure_ops_registered()
    try:
        _DocumentChecker(document).check()
    except _Invalid as invalid:
        raise FileContentError(f"Malformed SavedModel {source}: {invalid.where}: {invalid.problem}") from None


def _declared(spec):
    return tuple(spec["shape"]), attributes.numpy_dtype(spec["dtype"])


def variable_specs(document):
    """{object index: (shape, numpy dtype)} of a validated document's variables."""
    return {i: _declared(entry) for i, entry in enumerate(document["objects"]) if entry["kind"] == "variable"}


def constant_specs(graph):
    """[(shape, numpy dtype) or (None, None) when the file does not say] of a validated graph's constants."""
    specs = graph.get("constant_specs")
    return [(None, None)] * graph["n_constants"] if specs is None else [_declared(s) for s in specs]

