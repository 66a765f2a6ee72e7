"""Common-subexpression elimination: equal constants and equal pure nodes are computed once.

Two pure nodes are equal when they have the same op type, the same inputs (after
earlier merges) and attributes equal value for value and type for type (1.0 and
np.float64(1.0), or 0.0 and -0.0, differ). A node with an attribute that cannot
be compared this way is never merged.
"""
import numpy as np


class _Incomparable(Exception):
    pass


def attribute_key(value):
    """A hashable key equal for two attributes exactly when they are the same value of the same type."""
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return (kind.__name__, value)
    if kind is float:
        return ("float", value.hex())
    if kind in (list, tuple):
        return (kind.__name__, tuple(attribute_key(v) for v in value))
    if kind is dict:
        return ("dict", tuple(sorted((str(k), attribute_key(v)) for k, v in value.items())))
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind not in "OV":
        return (kind.__name__, value.dtype.str, np.shape(value), value.tobytes())
    if isinstance(value, str):   # a str subclass, e.g. a bound gradient name: its identity matters
        return ("object", id(value))
    raise _Incomparable


def _constant_key(array):
    if array.dtype.kind in "OV":
        return None
    return (array.dtype.str, array.shape, array.tobytes())


def eliminate_common_subexpressions(graph):
    """Merges equal constants and equal pure nodes of ``graph`` (a PassGraph); returns the nodes merged."""
    constants = {}
    for i, array in enumerate(graph.constants):
        key = _constant_key(array)
        if key is None:
            continue
        if key in constants:
            graph.replace(("const", i), constants[key])
        else:
            constants[key] = ("const", i)
    seen = {}
    merged = 0
    for k, node in enumerate(graph.nodes):
        if node is None:
            continue
        node[1] = [graph.resolve(r) for r in node[1]]
        if not graph.is_pure(k):
            continue
        try:
            key = (node[0], tuple(node[1]), attribute_key(node[2]), node[3])
        except _Incomparable:
            continue
        first = seen.setdefault(key, k)
        if first != k:
            for j in range(node[3]):
                graph.replace(("node", k, j), ("node", first, j))
            graph.nodes[k] = None
            merged += 1
    graph.apply_replacements()
    return merged
