"""Padding/cropping amounts: an int, a (before, after) pair, or one pair per spatial axis."""
import numbers


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def pair(value, name):
    """``value`` as a non-negative (before, after) pair (an int gives the same on both sides)."""
    if _is_int(value):
        result = (int(value), int(value))
    else:
        try:
            result = tuple(value)
        except TypeError:
            result = None
        if result is None or len(result) != 2 or not all(_is_int(v) for v in result):
            raise ValueError(f"`{name}` should be an int or a tuple of 2 ints. Received: {name}={value}")
        result = tuple(int(v) for v in result)
    if min(result) < 0:
        raise ValueError(f"`{name}` must be non-negative. Received: {name}={value}")
    return result


def pairs(value, rank, name):
    """``value`` as ``rank`` (before, after) pairs: an int, ``rank`` ints (symmetric), or ``rank`` pairs."""
    if _is_int(value):
        return (pair(value, name),) * rank
    try:
        items = tuple(value)
    except TypeError:
        items = ()
    if len(items) != rank:
        raise ValueError(f"`{name}` should have {rank} elements (an int, or a pair, per spatial axis). "
                         f"Received: {name}={value}")
    return tuple(pair(item, name) for item in items)
