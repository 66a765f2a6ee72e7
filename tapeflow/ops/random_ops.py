"""Random tensors with TensorFlow's seeding contract.

``set_seed(s)`` makes every later sequence of random ops reproducible. An
op-level ``seed`` gives a stream of its own: calling the same op with the same
seed again gives the next values of that stream, as in TensorFlow eager.
"""
import numpy as np

from ..framework import dtypes
from .common import execute, int_list, no_gradient, register_op, to_tensor

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


def _seed_attr(seed):
    return None if seed is None else int(seed)


def _is_number(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


# Random tensors are ops (with no gradient), not constants: a traced tf.function
# re-runs them on every call instead of replaying the values seen while tracing.
@register_op("RandomStandardNormal")
def _normal_fwd(shape, dtype, seed, mean=0.0, stddev=1.0):
    values = _generator(seed).standard_normal(shape)
    return (values * stddev + mean).astype(dtypes.as_dtype(dtype)._np)


@register_op("TruncatedNormal")
def _truncated_normal_fwd(shape, dtype, seed, mean=0.0, stddev=1.0):
    gen = _generator(seed)
    values = gen.standard_normal(shape)
    bad = np.abs(values) > 2
    while bad.any():
        values[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(values) > 2
    return (values * stddev + mean).astype(dtypes.as_dtype(dtype)._np)


@register_op("RandomUniform")
def _uniform_fwd(shape, dtype, seed, minval=0.0, maxval=1.0):
    return (_generator(seed).random(shape) * (maxval - minval) + minval).astype(dtypes.as_dtype(dtype)._np)


@register_op("RandomUniformInt")
def _uniform_int_fwd(shape, dtype, seed, minval, maxval):
    return _generator(seed).integers(minval, maxval, size=shape).astype(dtypes.as_dtype(dtype)._np)


@register_op("RandomShuffle")
def _shuffle_fwd(x, seed):
    return x[_generator(seed).permutation(x.shape[0])] if x.ndim else x.copy()


@register_op("Multinomial")
def _multinomial_fwd(logits, num_samples, dtype, seed):
    z = np.asarray(logits, np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    gen = _generator(seed)
    out = np.stack([gen.choice(p.shape[-1], size=num_samples, p=row) for row in p.reshape(-1, p.shape[-1])])
    return out.reshape(p.shape[:-1] + (num_samples,)).astype(dtypes.as_dtype(dtype)._np)


@register_op("DropoutMask")
def _dropout_mask_fwd(shape, rate, dtype, seed):
    """0 with probability ``rate``, 1/(1 - rate) otherwise."""
    np_dtype = dtypes.as_dtype(dtype)._np
    keep = _generator(seed).random(shape).astype(np_dtype) >= rate
    return (keep / (1 - rate)).astype(np_dtype)


STATEFUL_RANDOM_OPS = ("RandomStandardNormal", "TruncatedNormal", "RandomUniform", "RandomUniformInt",
                      "RandomShuffle", "Multinomial", "DropoutMask")
for _op in STATEFUL_RANDOM_OPS:
    no_gradient(_op)


def _scale_and_shift(op_type, shape, dtype, seed, mean, stddev):
    """Python numbers are applied inside the op; tensors through differentiable ops (as TensorFlow)."""
    attrs = {"shape": int_list(shape), "dtype": dtype.name, "seed": _seed_attr(seed)}
    if _is_number(mean) and _is_number(stddev):
        attrs.update(mean=float(mean), stddev=float(stddev))
        return execute(op_type, (), attrs)
    from . import math_ops
    z = execute(op_type, (), attrs)
    return math_ops.add(math_ops.multiply(z, to_tensor(stddev, dtype=dtype) if _is_number(stddev) else stddev),
                        to_tensor(mean, dtype=dtype) if _is_number(mean) else mean)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    return _scale_and_shift("RandomStandardNormal", shape, _float_dtype(dtype), seed, mean, stddev)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values redrawn until within two standard deviations of the mean."""
    return _scale_and_shift("TruncatedNormal", shape, _float_dtype(dtype), seed, mean, stddev)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    attrs = {"shape": int_list(shape), "dtype": dtype.name, "seed": _seed_attr(seed)}
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("uniform: maxval must be specified for integer dtypes")
        lo, hi = int(_scalar(minval)), int(_scalar(maxval))
        if lo >= hi:
            raise ValueError(f"uniform: minval ({lo}) must be less than maxval ({hi}) for integer dtypes")
        return execute("RandomUniformInt", (), dict(attrs, minval=lo, maxval=hi))
    dtype = _float_dtype(dtype)
    maxval = 1 if maxval is None else maxval
    if _is_number(minval) and _is_number(maxval):
        return execute("RandomUniform", (), dict(attrs, minval=float(minval), maxval=float(maxval)))
    from . import math_ops
    lo = to_tensor(minval, dtype=dtype) if _is_number(minval) else to_tensor(minval)
    hi = to_tensor(maxval, dtype=dtype) if _is_number(maxval) else to_tensor(maxval)
    u = execute("RandomUniform", (), attrs)
    return math_ops.add(math_ops.multiply(u, math_ops.subtract(hi, lo)), lo)


def shuffle(value, seed=None, name=None):
    return execute("RandomShuffle", (to_tensor(value),), {"seed": _seed_attr(seed)})


def categorical(logits, num_samples, dtype=dtypes.int64, seed=None, name=None):
    return execute("Multinomial", (to_tensor(logits),), {"num_samples": int(num_samples),
                                                         "dtype": dtypes.as_dtype(dtype).name,
                                                         "seed": _seed_attr(seed)})


def dropout_mask(shape, rate, dtype=dtypes.float32, seed=None):
    """A random tensor of 0 (probability ``rate``) and 1/(1 - rate): multiply it into x for dropout."""
    return execute("DropoutMask", (), {"shape": int_list(shape), "rate": float(rate),
                                       "dtype": dtypes.as_dtype(dtype).name, "seed": _seed_attr(seed)})
