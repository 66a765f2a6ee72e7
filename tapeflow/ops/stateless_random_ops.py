"""Random ops whose values are a function of a seed *tensor* (two integers), as TensorFlow's stateless
random ops: the same seed gives the same numbers, and a traced function reads the seed on every call.

``keras.random`` draws these seeds from a ``SeedGenerator`` (a variable it
advances). None of these ops has a gradient; scaling and shifting by tensor
arguments is done with differentiable ops by the callers.
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from .common import execute, int_list, no_gradient, register_op, to_tensor

_OPS = ("StatelessStandardNormal", "StatelessTruncatedStandardNormal", "StatelessUniformUnit", "StatelessUniformInt",
        "StatelessPermutation", "StatelessMultinomial", "StatelessGamma", "StatelessBinomial", "StatelessBeta",
        "StatelessDropoutMask")


def _generator(seed):
    pair = np.asarray(seed).reshape(-1).astype(np.int64).view(np.uint64)    # negative seeds: two's complement
    return np.random.default_rng(pair.tolist())


def _np(dtype):
    return dtypes.as_dtype(dtype)._np


@register_op("StatelessStandardNormal")
def _normal_fwd(seed, shape, dtype):
    return _generator(seed).standard_normal(shape).astype(_np(dtype))


@register_op("StatelessTruncatedStandardNormal")
def _truncated_normal_fwd(seed, shape, dtype):
    """Standard normal values, those beyond two standard deviations drawn again."""
    gen = _generator(seed)
    values = gen.standard_normal(shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = gen.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2
    return values.astype(_np(dtype))


@register_op("StatelessUniformUnit")
def _uniform_fwd(seed, shape, dtype):
    return _generator(seed).random(shape).astype(_np(dtype))


@register_op("StatelessUniformInt")
def _uniform_int_fwd(seed, shape, dtype, minval, maxval):
    return _generator(seed).integers(minval, maxval, size=shape).astype(_np(dtype))


@register_op("StatelessPermutation")
def _permutation_fwd(seed, n):
    return _generator(seed).permutation(n).astype(np.int64)


@register_op("StatelessMultinomial")
def _multinomial_fwd(logits, seed, num_samples, dtype):
    z = np.asarray(logits, np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    gen = _generator(seed)
    rows = [gen.choice(p.shape[-1], size=num_samples, p=row) for row in p.reshape(-1, p.shape[-1])]
    return np.array(rows, dtype=np.int64).reshape(p.shape[:-1] + (num_samples,)).astype(_np(dtype))


@register_op("StatelessGamma")
def _gamma_fwd(seed, alpha, shape, dtype):
    return _generator(seed).standard_gamma(np.broadcast_to(alpha, shape)).astype(_np(dtype))


@register_op("StatelessBinomial")
def _binomial_fwd(seed, counts, probabilities, shape, dtype):
    n = np.broadcast_to(counts, shape)
    if np.any(n < 0) or np.any(n != np.floor(n)):
        raise InvalidArgumentError("binomial: counts must be non-negative whole numbers")
    return _generator(seed).binomial(n.astype(np.int64), np.broadcast_to(probabilities, shape)).astype(_np(dtype))


@register_op("StatelessBeta")
def _beta_fwd(seed, alpha, beta, shape, dtype):
    return _generator(seed).beta(np.broadcast_to(alpha, shape), np.broadcast_to(beta, shape)).astype(_np(dtype))


@register_op("StatelessDropoutMask")
def _dropout_mask_fwd(seed, shape, rate, dtype):
    """0 with probability ``rate``, 1 / (1 - rate) otherwise."""
    np_dtype = _np(dtype)
    keep = _generator(seed).random(shape) >= rate
    return (keep / (1 - rate)).astype(np_dtype)


for _op in _OPS:
    no_gradient(_op)


def _seed(seed):
    seed = to_tensor(seed)
    if seed._value.dtype.kind not in "iu" or seed._value.shape != (2,):
        raise InvalidArgumentError(f"a stateless random seed must be two integers, got shape {seed.shape} of "
                                   f"{seed.dtype.name}")
    return seed


def standard_normal(shape, seed, dtype="float32", truncated=False):
    op = "StatelessTruncatedStandardNormal" if truncated else "StatelessStandardNormal"
    return execute(op, (_seed(seed),), {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name})


def uniform_unit(shape, seed, dtype="float32"):
    """Uniform values in [0, 1)."""
    return execute("StatelessUniformUnit", (_seed(seed),), {"shape": int_list(shape),
                                                            "dtype": dtypes.as_dtype(dtype).name})


def uniform_int(shape, seed, minval, maxval, dtype="int32"):
    """Integers uniform in [minval, maxval)."""
    if int(minval) >= int(maxval):
        raise InvalidArgumentError(f"randint: minval ({minval}) must be less than maxval ({maxval})")
    attrs = {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name, "minval": int(minval),
             "maxval": int(maxval)}
    return execute("StatelessUniformInt", (_seed(seed),), attrs)


def permutation(n, seed):
    return execute("StatelessPermutation", (_seed(seed),), {"n": int(n)})


def multinomial(logits, num_samples, seed, dtype="int32"):
    return execute("StatelessMultinomial", (to_tensor(logits), _seed(seed)),
                   {"num_samples": int(num_samples), "dtype": dtypes.as_dtype(dtype).name})


def gamma(shape, alpha, seed, dtype="float32"):
    return execute("StatelessGamma", (_seed(seed), to_tensor(alpha)),
                   {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name})


def binomial(shape, counts, probabilities, seed, dtype="float32"):
    return execute("StatelessBinomial", (_seed(seed), to_tensor(counts), to_tensor(probabilities)),
                   {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name})


def beta(shape, alpha, beta, seed, dtype="float32"):
    return execute("StatelessBeta", (_seed(seed), to_tensor(alpha), to_tensor(beta)),
                   {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name})


def dropout_mask(shape, rate, seed, dtype="float32"):
    return execute("StatelessDropoutMask", (_seed(seed),), {"shape": int_list(shape), "rate": float(rate),
                                                            "dtype": dtypes.as_dtype(dtype).name})
