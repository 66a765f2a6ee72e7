"""Randomly drawn colour adjustments: one draw per call, from the seeded stream or a stateless seed."""
from ..ops import random_ops, stateless_random_ops
from . import color


def _draw(low, high, seed):
    return random_ops.uniform([], low, high, seed=seed)


def _stateless_draw(low, high, seed):
    from ..ops import math_ops
    return math_ops.add(math_ops.multiply(stateless_random_ops.uniform_unit([], seed), high - low), low)


def _check_range(lower, upper, what, low_bound=0.0):
    if upper <= lower:
        raise ValueError(f"{what}: upper must be > lower.")
    if lower < low_bound:
        raise ValueError(f"{what}: lower must be non-negative.")


def random_brightness(image, max_delta, seed=None):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return color.adjust_brightness(image, _draw(-max_delta, max_delta, seed))


def random_contrast(image, lower, upper, seed=None):
    _check_range(lower, upper, "random_contrast")
    return color.adjust_contrast(image, _draw(lower, upper, seed))


def random_saturation(image, lower, upper, seed=None):
    _check_range(lower, upper, "random_saturation")
    return color.adjust_saturation(image, _draw(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    if not 0 <= max_delta <= 0.5:
        raise ValueError("max_delta must be in the interval [0, 0.5].")
    return color.adjust_hue(image, _draw(-max_delta, max_delta, seed))


def stateless_random_brightness(image, max_delta, seed):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return color.adjust_brightness(image, _stateless_draw(-max_delta, max_delta, seed))


def stateless_random_contrast(image, lower, upper, seed):
    _check_range(lower, upper, "stateless_random_contrast")
    return color.adjust_contrast(image, _stateless_draw(lower, upper, seed))
