"""Random tensors with TensorFlow's seeding contract.

``set_seed(s)`` makes every later sequence of random ops reproducible. An
op-level ``seed`` gives a stream of its own: calling the same op with the same
seed again gives the next values of that stream, as in TensorFlow eager.
"""
import numpy as np

from ..framework import dtypes
from ..framework.tensor import Tensor
from .common import int_list, to_tensor

_state = {"global_seed": None, "rng": np.random.default_rng(), "streams": {}}


def set_seed(seed):
    """tf.random.set_seed: resets the global generator and every op-seed stream."""
    _state["global_seed"] = None if seed is None else int(seed)
    _state["rng"] = np.random.default_rng(seed)
    _state["streams"] = {}


def get_global_generator():
    return _state["rng"]


def _generator(seed):
    if seed is None:
        return _state["rng"]
    key = int(seed)
    gen = _state["streams"].get(key)
    if gen is None:
        base = _state["global_seed"]
        gen = np.random.default_rng([key] if base is None else [base, key])
        _state["streams"][key] = gen
    return gen


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Invalid dtype {dtype!r} for a random float tensor; use a floating-point dtype")
    return dtype


def _scalar(value):
    return to_tensor(value)._value if not isinstance(value, (int, float)) else value


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = _float_dtype(dtype)
    values = _generator(seed).standard_normal(int_list(shape))
    return Tensor((values * _scalar(stddev) + _scalar(mean)).astype(dtype._np))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values redrawn until within two standard deviations of the mean."""
    dtype = _float_dtype(dtype)
    gen = _generator(seed)
    shape = int_list(shape)
    values = gen.standard_normal(shape)
    bad = np.abs(values) > 2
    while bad.any():
        values[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(values) > 2
    return Tensor((values * _scalar(stddev) + _scalar(mean)).astype(dtype._np))


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    gen = _generator(seed)
    shape = int_list(shape)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("uniform: maxval must be specified for integer dtypes")
        return Tensor(gen.integers(_scalar(minval), _scalar(maxval), size=shape).astype(dtype._np))
    maxval = 1 if maxval is None else maxval
    lo, hi = _scalar(minval), _scalar(maxval)
    return Tensor((gen.random(shape) * (hi - lo) + lo).astype(dtype._np))


def shuffle(value, seed=None, name=None):
    x = to_tensor(value)._value
    return Tensor(x[_generator(seed).permutation(x.shape[0])] if x.ndim else x)


def categorical(logits, num_samples, dtype=dtypes.int64, seed=None, name=None):
    z = np.asarray(to_tensor(logits)._value, np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    gen = _generator(seed)
    out = np.stack([gen.choice(p.shape[-1], size=int(num_samples), p=row) for row in p])
    return Tensor(out.astype(dtypes.as_dtype(dtype)._np))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
    gen = np.random.default_rng([int(s) for s in int_list(seed)])
    return Tensor((gen.standard_normal(int_list(shape)) * stddev + mean).astype(_float_dtype(dtype)._np))


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None):
    gen = np.random.default_rng([int(s) for s in int_list(seed)])
    maxval = 1 if maxval is None else maxval
    return Tensor((gen.random(int_list(shape)) * (maxval - minval) + minval).astype(dtypes.as_dtype(dtype)._np))
