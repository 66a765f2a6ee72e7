"""Nested structures of lists, tuples, namedtuples and dicts (``tf.nest``)."""


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))


def _children(structure):
    if isinstance(structure, dict):
        return [structure[k] for k in sorted(structure, key=_sort_key)]
    return list(structure)


def _sort_key(key):
    return (type(key).__name__, key) if not isinstance(key, (int, float)) else ("", key)


def flatten(structure, expand_composites=False):
    """Leaves of ``structure`` in TensorFlow's order (dicts by sorted key)."""
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """Rebuilds ``structure`` with the leaves taken in order from ``flat_sequence``."""
    flat = list(flat_sequence)
    packed, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError(f"Structure had {used} leaves, but flat_sequence had {len(flat)} elements.")
    return packed


def _pack(structure, flat, index):
    if not is_nested(structure):
        if index >= len(flat):
            raise ValueError("flat_sequence has fewer elements than the structure has leaves.")
        return flat[index], index + 1
    if isinstance(structure, dict):
        values = {}
        for key in sorted(structure, key=_sort_key):
            values[key], index = _pack(structure[key], flat, index)
        return type(structure)((k, values[k]) for k in structure), index
    items = []
    for child in structure:
        item, index = _pack(child, flat, index)
        items.append(item)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items), index
    return type(structure)(items), index


def map_structure(func, *structures):
    """``func`` applied to the leaves (several structures: to their leaves side by side), in flatten's order."""
    if len(structures) == 1:
        return _map_one(func, structures[0])
    flats = [flatten(s) for s in structures]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("The two structures don't have the same nested structure.")
    return pack_sequence_as(structures[0], [func(*args) for args in zip(*flats)])


def _map_one(func, structure):
    """map_structure over one structure in a single walk."""
    if not is_nested(structure):
        return func(structure)
    if isinstance(structure, dict):
        values = {k: _map_one(func, structure[k]) for k in sorted(structure, key=_sort_key)}
        return type(structure)((k, values[k]) for k in structure)
    items = [_map_one(func, child) for child in structure]
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items)
    return type(structure)(items)


def assert_same_structure(nest1, nest2, check_types=True):
    if _shape_of(nest1) != _shape_of(nest2):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1}"
                         f"\n\nSecond structure: {nest2}")


def _shape_of(structure):
    if not is_nested(structure):
        return None
    if isinstance(structure, dict):
        return ("dict", tuple((k, _shape_of(structure[k])) for k in sorted(structure, key=_sort_key)))
    return ("seq", tuple(_shape_of(c) for c in structure))
