"""How a saved trace was called: the structure of its arguments, with Python values kept literally.

TensorFlow keys a tf.function's traces by their arguments' structure, in which Python values (numbers,
strings, None, and lists of them) are literals: ``module([[2.0, 2.0, 2.0]])`` traces with no tensor input at
all. A loaded function finds the trace to run the same way: a call matches a trace when its arguments have
the traced nesting, equal Python values where the trace had them, and anything convertible to a tensor where
the trace had a tensor. Saved as JSON; loading checks every entry (FileContentError) and builds only data.
"""
from tapeflow.framework.tensor_spec import TensorSpec

from .errors import FileContentError

MAX_DEPTH = 64
_LITERALS = (bool, int, float, str, type(None))


class _Unsaveable(Exception):
    pass


class TensorSlot:
    """The place of the trace's tensor input ``index``."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class Literal:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def encode_inputs(graph):
    """The JSON form of ``graph.structured_inputs`` ([args, kwargs]), or None when it holds something other
    than tensors, Python scalars/strings/None, lists, tuples and string-keyed dicts (variables, objects)."""
    structure = getattr(graph, "structured_inputs", None)
    if structure is None:
        return None
    counter = iter(range(len(graph.input_specs)))

    def encode(value, depth):
        if depth > MAX_DEPTH:
            raise _Unsaveable
        if isinstance(value, TensorSpec):
            return {"tensor": next(counter)}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise _Unsaveable
            # in flatten order (sorted keys), so tensor indices follow the trace's placeholders
            return {"dict": {k: encode(value[k], depth + 1) for k in sorted(value)}}
        if isinstance(value, (list, tuple)):
            return {"tuple" if isinstance(value, tuple) else "list": [encode(v, depth + 1) for v in value]}
        if type(value) in _LITERALS:
            return {"literal": value}
        raise _Unsaveable
    try:
        encoded = encode(list(structure), 0)
    except (_Unsaveable, StopIteration):
        return None
    return encoded if next(counter, None) is None else None


def decode_inputs(data, n_inputs, where):
    """The structure saved by ``encode_inputs`` (TensorSlot and Literal leaves), checked entry by entry."""
    seen = set()

    def fail(at, problem):
        raise FileContentError(f"Corrupt SavedModel: {at}: {problem}")

    def decode(value, at, depth):
        if depth > MAX_DEPTH:
            fail(at, f"nested deeper than {MAX_DEPTH}")
        if not isinstance(value, dict) or len(value) != 1:
            fail(at, "expected an object with one of the keys tensor, literal, list, tuple, dict")
        (kind, item), = value.items()
        if kind == "tensor":
            if type(item) is not int or not 0 <= item < n_inputs or item in seen:
                fail(at, f"tensor index {item!r} is not a distinct input index below {n_inputs}")
            seen.add(item)
            return TensorSlot(item)
        if kind == "literal":
            if type(item) not in _LITERALS:
                fail(at, "a literal must be a number, a string, a boolean or null")
            return Literal(item)
        if kind in ("list", "tuple"):
            if not isinstance(item, list):
                fail(at, f"{kind} must be a JSON array")
            items = [decode(v, f"{at}.{kind}[{i}]", depth + 1) for i, v in enumerate(item)]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict":
            if not isinstance(item, dict):
                fail(at, "dict must be a JSON object")
            return {k: decode(v, f"{at}.dict[{k!r}]", depth + 1) for k, v in item.items()}
        fail(at, f"unknown entry {kind!r}")

    structure = decode(data, where, 0)
    if not (isinstance(structure, list) and len(structure) == 2 and isinstance(structure[0], list)
            and isinstance(structure[1], dict)) or len(seen) != n_inputs:
        fail(where, "expected [positional arguments, keyword arguments] naming every tensor input once")
    return structure


def match_inputs(structure, args, kwargs):
    """The values at the tensor places of ``structure`` (by input index) when the call fits it, else None."""
    found = {}

    def match(saved, given):
        if isinstance(saved, TensorSlot):
            found[saved.index] = given
            return True
        if isinstance(saved, Literal):
            return (type(given) in _LITERALS and isinstance(given, bool) == isinstance(saved.value, bool)
                    and given == saved.value)
        if isinstance(saved, dict):
            return (isinstance(given, dict) and set(given) == set(saved)
                    and all(match(saved[k], given[k]) for k in saved))
        if type(given) is not type(saved) and not (isinstance(given, list) and isinstance(saved, list)):
            return False
        return len(given) == len(saved) and all(match(s, g) for s, g in zip(saved, given))

    if not match(structure, [list(args), dict(kwargs)]):
        return None
    return [found[i] for i in range(len(found))]
