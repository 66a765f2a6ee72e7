"""What converted code calls (``ag__.if_stmt``, ...): Python control flow for Python values,
``cond``/``while_loop`` for a condition or iterable that is a symbolic tensor.

A statement's state is the tuple of the variables it assigns, in the order of
``names``. In a tensor statement, entries that are tensors or Python numbers
become the outputs / loop variables; any other value (a list, a module, None)
must come out as the very object that went in. A variable first assigned inside
a tensor loop (a temporary) is not carried out of it: it is left undefined.
"""
import numpy as np

from ..control_flow import cond, while_loop
from ..data import graph_iteration
from ..framework import nest, recording
from ..framework.conversion import convert_to_tensor
from ..framework.tensor import Tensor
from ..framework.variables import Variable
from ..function import GraphTensor
from ..ops import array_ops, math_ops
from ..tensor_array import TensorArray
from .calls import converted_call  # noqa: F401  (what converted code calls as ag__.converted_call)


class Undefined:
    """The value of a variable that was not assigned before a converted statement."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def _error(self, *args, **kwargs):
        raise NameError(f"'{self.name}' is used before it has a value: it is assigned inside a loop or branch that "
                        "runs as a TensorFlow op (its condition is a tensor) and has no value before it; give it "
                        "one before the loop or if statement")

    __bool__ = __add__ = __radd__ = __sub__ = __mul__ = __getattr__ = __getitem__ = __call__ = __iter__ = _error
    __truediv__ = __lt__ = __gt__ = __le__ = __ge__ = __neg__ = __float__ = __int__ = __len__ = _error

    def __repr__(self):
        return f"<undefined {self.name}>"


def values(local_variables, names):
    """The current values of ``names`` (Undefined for those not assigned yet)."""
    return tuple(local_variables.get(n, Undefined(n)) for n in names)


def defined(value):
    """``value``, unless it holds a variable a tensor statement left without a value (then its error)."""
    for leaf in nest.flatten(value):
        if isinstance(leaf, Undefined):
            leaf._error()
    return value


def _symbolic(value):
    return recording.tracing_graph() is not None and isinstance(value, GraphTensor)


def _is_tensor_value(value):
    """A value a tensor statement carries as a tensor (a Variable that a statement assigns to the name
    becomes its value, as a tensor)."""
    return isinstance(value, (Tensor, Variable, TensorArray, bool, int, float, np.generic, np.ndarray))


def _tensor(value):
    if isinstance(value, TensorArray):   # carried as the tensor behind it (control_flow.py flattens it)
        return value
    return value._as_tensor() if isinstance(value, Variable) else convert_to_tensor(value)


def python_condition(test, what):
    """The test of a statement kept as Python (it holds ``what``)."""
    if _symbolic(test):
        raise NotImplementedError(f"tapeflow's AutoGraph does not convert {what} whose condition is a tensor; "
                                  "compute the result with tf.cond/tf.where, or move the statement out of the "
                                  "tf.function")
    return test


def python_iterable(iterable, what):
    if _symbolic(iterable):
        raise NotImplementedError(f"tapeflow's AutoGraph does not convert {what} over a tensor; use "
                                  "tf.while_loop, or move the loop out of the tf.function")
    if recording.tracing_graph() is not None and graph_iteration.is_iterable_in_graph(iterable):
        raise NotImplementedError(f"tapeflow's AutoGraph does not convert {what} over a dataset; keep the "
                                  "result in a variable and break out of the loop instead of returning")
    return iterable


# ------------------------------------------------------------- logic ---
def and_(left, right):
    a = left()
    if _symbolic(a):
        return cond(a, lambda: convert_to_tensor(right()), lambda: convert_to_tensor(False))
    return a and right()


def or_(left, right):
    a = left()
    if _symbolic(a):
        return cond(a, lambda: convert_to_tensor(True), lambda: convert_to_tensor(right()))
    return a or right()


def not_(value):
    if _symbolic(value):
        return math_ops.logical_not(value)
    return not value


# ------------------------------------------------------------- if ---
def if_stmt(test, true_fn, false_fn, state, names):
    if not _symbolic(test):
        return true_fn(*state) if test else false_fn(*state)
    skipped = set()   # variables new in the statement that only one branch assigns: left undefined after it
    while True:
        kept = {}

        def branch(fn, key):
            def run():
                result = fn(*state)
                kept[key] = result
                return [_tensor(v) for i, v in enumerate(result) if i not in skipped and _is_tensor_value(v)]
            return run
        try:
            outputs = cond(test, branch(true_fn, "true"), branch(false_fn, "false"))
        except (ValueError, TypeError) as error:
            one_sided = _one_sided(kept, state) - skipped
            if one_sided:
                skipped |= one_sided
                continue
            _explain_branches(kept, names, error)
            raise
        break
    skipped |= _one_sided(kept, state)   # a Python object (a GradientTape) new in one branch only
    _explain_branches(kept, names, None, skipped)
    outputs = iter(outputs)
    return tuple(Undefined(names[i]) if i in skipped else next(outputs) if _is_tensor_value(t) else t
                 for i, t in enumerate(kept["true"]))


def _one_sided(kept, state):
    if "true" not in kept or "false" not in kept:
        return set()
    return {i for i, (before, a, b) in enumerate(zip(state, kept["true"], kept["false"]))
            if isinstance(before, Undefined) and isinstance(a, Undefined) != isinstance(b, Undefined)}


def _explain_branches(kept, names, error, skipped=()):
    if "true" not in kept or "false" not in kept:
        return
    for i, (name, a, b) in enumerate(zip(names, kept["true"], kept["false"])):
        if i in skipped or (isinstance(a, Undefined) and isinstance(b, Undefined)):
            continue
        if _is_tensor_value(a) != _is_tensor_value(b) or (not _is_tensor_value(a) and a is not b):
            branch = "else" if isinstance(b, Undefined) else "main"
            if isinstance(a, Undefined) or isinstance(b, Undefined):
                raise ValueError(f"'{name}' must also be initialized in the {branch} branch: the if statement's "
                                 "condition is a tensor, so both branches run as a tf.cond and must give it a "
                                 "value") from error
            raise TypeError(f"'{name}' is a {_kind(a)} in the if branch and a {_kind(b)} in the "
                            "else branch of an if statement whose condition is a tensor (tf.cond); both must be "
                            "tensors, or the same Python object") from error


def _kind(value):
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


# ------------------------------------------------------------- loops ---
def _loop(test, body, state, names, what):
    """A while_loop over the tensor entries of ``state``. ``test(state)`` and ``body(state)`` take and
    return full states."""
    carried = [i for i, v in enumerate(state) if _is_tensor_value(v)]
    fixed = list(state)

    def merge(tensors):
        full = list(fixed)
        for i, t in zip(carried, tensors):
            full[i] = t
        return full

    def loop_body(*tensors):
        new = body(merge(tensors))
        for i, (before, after) in enumerate(zip(fixed, new)):
            if i not in carried and not isinstance(before, Undefined) and after is not before:
                raise TypeError(f"'{names[i]}' is a {type(before).__name__} that {what} changes, but the loop runs "
                                "as a tf.while_loop (its condition is a tensor), which can only carry tensors")
        return [_tensor(new[i]) for i in carried]

    if not carried:   # a loop run only for its effects (assignments, printing): a counter carries it
        def effects(count):
            loop_body()
            return math_ops.add(count, np.int32(1))
        while_loop(lambda count: test(fixed), effects, [convert_to_tensor(np.int32(0))])
        return tuple(fixed)
    result = while_loop(lambda *t: test(merge(t)), loop_body, [_tensor(state[i]) for i in carried])
    return tuple(merge(result))


def while_stmt(test_fn, body_fn, state, names):
    state = tuple(state)
    test = test_fn(*state)
    while not _symbolic(test):
        if not test:
            return state
        state = tuple(body_fn(*state))
        test = test_fn(*state)
    return _loop(lambda s: test_fn(*s), lambda s: body_fn(*s), state, names, "the while loop")


def for_stmt(iterable, body_fn, state, names, break_flag):
    state = tuple(state)
    flag = None if break_flag is None else names.index(break_flag)
    if isinstance(iterable, Variable):
        iterable = iterable._as_tensor()
    if recording.tracing_graph() is not None:
        iterator = graph_iteration.graph_iterator(iterable)
        if iterator is not None:
            from .dataset_loops import dataset_loop
            return dataset_loop(iterator, body_fn, state, names, flag)
    if not _symbolic(iterable):
        for item in iterable:
            if flag is not None and state[flag]:
                break
            state = tuple(body_fn(item, *state))
            if flag is not None and _symbolic(state[flag]):
                raise NotImplementedError(f"tapeflow's AutoGraph cannot break out of a Python for loop on a tensor "
                                          f"condition; iterate over a tensor (tf.range) instead")
        return state
    if iterable.shape.rank == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    n = array_ops.shape(iterable)[0]
    state = (convert_to_tensor(np.int32(0)),) + state
    names = ("<index>",) + tuple(names)

    def test(s):
        more = math_ops.less(s[0], n)
        return more if flag is None else math_ops.logical_and(more, math_ops.logical_not(s[1 + flag]))

    def body(s):
        item = array_ops.gather(iterable, s[0])   # 0 <= s[0] < n
        return (math_ops.add(s[0], np.int32(1)),) + tuple(body_fn(item, *s[1:]))
    return _loop(test, body, state, names, "the for loop")[1:]

