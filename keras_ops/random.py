"""``keras.random``: random tensors drawn from explicit seeds, and ``SeedGenerator``.

Keras's seeding contract: an integer ``seed`` gives the same numbers on every
call; a ``SeedGenerator`` gives new numbers on each call, reproducibly (two
generators built with the same seed give the same sequence); with
``seed=None`` a process-wide generator is used, reseeded by
``keras.utils.set_random_seed``. Every draw is a stateless op of a seed
tensor, and a generator's state is a variable, so a traced function draws new
numbers on each call.
"""
import random as _python_random

import numpy as np

from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import stateless_random_ops as S
from tapeflow.ops.common import normalize_axis

from .dtypes import convert, is_float, is_int, standardize_dtype


class SeedGenerator:
    """A seed state that advances at each draw: ``SeedGenerator(1337)`` gives the same sequence of random
    tensors in every run, and different tensors at each call."""

    def __init__(self, seed=None, name=None, **kwargs):
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        if seed is None:
            seed = _python_random.randint(1, int(1e9))
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed!r}")
        self._initial_seed = int(seed)
        self.name = name or "seed_generator"
        self.state = Variable(np.array([int(seed), 0], dtype=np.int64), trainable=False,
                              name=f"{self.name}_state")

    def next(self, ordered=True):
        """The current seed (two int64s); the state then moves on: its counter by one, or (``ordered=False``,
        how Keras draws for ``seed=None``) both numbers to ``(n + 1) * 5387 % 933199``, as Keras's do."""
        current = A.identity(self.state)
        if ordered:
            self.state.assign_add(np.array([0, 1], dtype=np.int64))
        else:
            self.state.assign(M.floormod(M.multiply(M.add(current, np.int64(1)), np.int64(5387)), np.int64(933199)))
        return current

    def get_config(self):
        return {"seed": self._initial_seed}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


_global = {"generator": None}


def global_seed_generator():
    """The generator behind ``seed=None``, made at its first use after ``keras.utils.set_random_seed`` or
    ``clear_session`` (so its seed is Python's next random number then, as in Keras)."""
    if _global["generator"] is None:
        _global["generator"] = SeedGenerator(name="global_seed_generator")
    return _global["generator"]


def reset_global_seed_generator():
    _global["generator"] = None


_SEED_MODULUS = np.int64(2 ** 31 - 2)


def draw_seed(seed):
    """The seed tensor of one draw, from an int, a SeedGenerator or None: as Keras's TensorFlow backend draws
    it, each of its two integers modulo 2**31 - 2 (so that the stateless ops see what TensorFlow's see)."""
    if isinstance(seed, SeedGenerator):
        return M.floormod(seed.next(), _SEED_MODULUS)
    if seed is None:
        return M.floormod(global_seed_generator().next(ordered=False), _SEED_MODULUS)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return convert(np.array([int(seed), 0], dtype=np.int64) % _SEED_MODULUS)
    raise ValueError(f"Argument `seed` must be either an integer or an instance of `SeedGenerator`. Received: "
                     f"seed={seed} (of type {type(seed)})")


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _float_dtype(dtype, name):
    dtype = standardize_dtype(dtype)
    if not is_float(dtype):
        raise ValueError(f"`keras.random.{name}` requires a floating point `dtype`. Received: dtype={dtype}")
    return dtype


def _scaled(z, scale, shift):
    """z * scale + shift, by ops (differentiable when scale or shift are tensors)."""
    dtype = z.dtype.name
    if not (isinstance(scale, (int, float)) and float(scale) == 1.0):
        z = M.multiply(z, convert(scale, dtype))
    if not (isinstance(shift, (int, float)) and float(shift) == 0.0):
        z = M.add(z, convert(shift, dtype))
    return z


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "normal")
    return _scaled(S.standard_normal(_shape(shape), draw_seed(seed), dtype), stddev, mean)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal values, those more than two standard deviations from the mean drawn again."""
    dtype = _float_dtype(dtype, "truncated_normal")
    return _scaled(S.standard_normal(_shape(shape), draw_seed(seed), dtype, truncated=True), stddev, mean)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "uniform")
    unit = S.uniform_unit(_shape(shape), draw_seed(seed), dtype)
    width = M.subtract(convert(maxval, dtype), convert(minval, dtype))
    return M.add(M.multiply(unit, width), convert(minval, dtype))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    dtype = standardize_dtype(dtype)
    if not is_int(dtype):
        raise ValueError(f"`keras.random.randint` requires an integer `dtype`. Received: dtype={dtype}")
    return S.uniform_int(_shape(shape), draw_seed(seed), int(convert(minval)), int(convert(maxval)), dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Zeroes each element with probability ``rate`` and scales the others by 1 / (1 - rate)."""
    inputs = convert(inputs)
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"Invalid value received for argument `rate`. Expected a float value in [0, 1). "
                         f"Received: rate={rate}")
    shape = tuple(inputs.shape) if noise_shape is None else tuple(
        d if n is None else int(n) for n, d in zip(noise_shape, inputs.shape))
    mask = S.dropout_mask(shape, rate, draw_seed(seed), inputs.dtype.name)
    return M.multiply(inputs, mask)


def shuffle(x, axis=0, seed=None):
    """``x`` with its slices along ``axis`` in a random order (differentiable in x): the order that sorts
    uniform values of the seed, as Keras draws it on TensorFlow."""
    x = convert(x)
    axis = normalize_axis(int(axis), x.ndim, op="shuffle")
    keys = S.uniform_unit((x.shape[axis],), draw_seed(seed), "float32")
    return A.gather(x, A.argsort(keys, stable=True), axis=axis)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """``num_samples`` class indices per row, drawn with probabilities softmax(logits)."""
    logits = convert(logits)
    if logits.ndim != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. Received: "
                         f"logits={tuple(logits.shape)}")
    return S.multinomial(logits, num_samples, draw_seed(seed), standardize_dtype(dtype))


def gamma(shape, alpha, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "gamma")
    return S.gamma(_shape(shape), convert(alpha, dtype), draw_seed(seed), dtype)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "binomial")
    return S.binomial(_shape(shape), convert(counts, dtype), convert(probabilities, dtype), draw_seed(seed), dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "beta")
    return S.beta(_shape(shape), convert(alpha, dtype), convert(beta, dtype), draw_seed(seed), dtype)
