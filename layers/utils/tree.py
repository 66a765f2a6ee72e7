"""Small structure helpers: map over nested lists/tuples/dicts, treating shapes as leaves.

``flatten`` is the engine's (``tapeflow.framework.nest``): dict values by sorted key, the order of
tf.nest and of Keras 3's tree.flatten, so every flattening in the package pairs the same leaves.
"""
from tapeflow.framework.nest import flatten  # noqa: F401


def is_shape(x):
    """A tuple/list of ints and Nones (a shape) is a leaf, not a nest."""
    return isinstance(x, (tuple, list)) and all(d is None or isinstance(d, int) for d in x) and not (
        len(x) and all(isinstance(d, (tuple, list)) for d in x))


def map_structure(fn, structure):
    """``fn`` applied to every leaf of nested lists, tuples and dicts (structure kept)."""
    if isinstance(structure, dict):
        return type(structure)((k, map_structure(fn, v)) for k, v in structure.items())
    if isinstance(structure, (list, tuple)):
        items = [map_structure(fn, v) for v in structure]
        if isinstance(structure, tuple) and hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items)
    return fn(structure)


def map_shape_structure(fn, structure):
    """Like map_structure, but a shape tuple is a single leaf."""
    if is_shape(structure):
        return fn(tuple(structure))
    if isinstance(structure, dict):
        return {k: map_shape_structure(fn, v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_shape_structure(fn, v) for v in structure)
    return fn(structure)
