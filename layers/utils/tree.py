"""Nested structures for the layers (Keras 3's ``keras.tree``).

``flatten``, ``map_structure`` and ``pack_sequence_as`` are the engine's
(``tapeflow.framework.nest``): dict values by sorted key, the order of tf.nest
and of keras.tree, and ``map_structure`` visits leaves in that same order, so a
flatten pairs with every map and pack in the package. What is Keras's own is
that a shape tuple can be a single leaf (``map_shape_structure``).
"""
from tapeflow.framework.nest import flatten, map_structure, pack_sequence_as  # noqa: F401


def is_shape(x):
    """A tuple/list of ints and Nones (a shape) is a leaf, not a nest."""
    return isinstance(x, (tuple, list)) and all(d is None or isinstance(d, int) for d in x) and not (
        len(x) and all(isinstance(d, (tuple, list)) for d in x))


def map_shape_structure(fn, structure):
    """Like map_structure, but a shape tuple is a single leaf."""
    if is_shape(structure):
        return fn(tuple(structure))
    if isinstance(structure, dict):
        return {k: map_shape_structure(fn, v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_shape_structure(fn, v) for v in structure)
    return fn(structure)
