"""Random ops whose values are a function of a seed *tensor*, as TensorFlow's stateless random ops: the same
seed gives the same numbers, and a traced function reads the seed on every call.

The normal, truncated-normal and uniform ops draw TensorFlow's own stream (Philox-4x32-10, its default on
CPU), bit for bit: a seed of two integers is turned into a key and counter as ``tf.random.stateless_*``
does, and a "seed" of three integers is a ``tf.random.Generator`` state (counter low, counter high, key)
used as is. The other ops (permutation, multinomial, gamma, binomial, beta, dropout mask) draw from numpy's
PCG64 keyed by a two-integer seed: their numbers are tapeflow's own, not TensorFlow's.

``keras.random`` draws these seeds from a ``SeedGenerator`` (a variable it
advances). None of these ops has a gradient; scaling and shifting by tensor
arguments is done with differentiable ops by the callers.
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from .common import execute, int_list, no_gradient, register_op, to_tensor

_OPS = ("StatelessStandardNormal", "StatelessTruncatedStandardNormal", "StatelessUniformUnit", "StatelessUniformInt",
        "StatelessUniformFullInt", "StatelessPermutation", "StatelessMultinomial", "StatelessGamma",
        "StatelessBinomial", "StatelessBeta", "StatelessDropoutMask")

# The fixed Philox key TensorFlow scrambles a two-integer seed with (its seed -> key/counter derivation).
_SEED_SCRAMBLE_KEY = np.uint64(0x02461E29_3EC8F720)


def _philox():
    """The numba kernels, imported on first use (importing numba costs ~0.2 s)."""
    from ..kernels import philox
    return philox


def _words(seed):
    return np.asarray(seed).reshape(-1).astype(np.int64).view(np.uint64)


def philox_stream(seed):
    """(key, counter_low, counter_high) as uint64 for a two-integer seed or a three-integer generator state."""
    words = _words(seed)
    if words.size == 3:
        return words[2], words[0], words[1]
    mixed = np.empty(4, np.uint32)
    _philox().fill_words(_SEED_SCRAMBLE_KEY, words[0], words[1], mixed)
    mixed = mixed.astype(np.uint64)
    return mixed[0] | (mixed[1] << np.uint64(32)), np.uint64(0), mixed[2] | (mixed[3] << np.uint64(32))


def _generator(seed):
    pair = _words(seed)    # negative seeds: two's complement
    return np.random.default_rng(pair.tolist())


def _np(dtype):
    return dtypes.as_dtype(dtype)._np


def _fill(kernel, seed, shape, np_dtype):
    out = np.empty(int(np.prod(shape, dtype=np.int64)), np_dtype)
    kernel(*philox_stream(seed), out)
    return out.reshape(shape)


def _raw_words(seed, count):
    return _fill(_philox().fill_words, seed, (count,), np.uint32)


def _float_kernels(dtype, kind):
    """The kernel drawing ``kind`` values of ``dtype``; float16 is drawn as float32 and rounded, as TF does."""
    K = _philox()
    table = {"normal": (K.fill_normal32, K.fill_normal64), "truncated": (K.fill_truncated_normal32,
                                                                         K.fill_truncated_normal64)}[kind]
    np_dtype = _np(dtype)
    if np_dtype == np.float64:
        return table[1], np.float64
    if np_dtype in (np.float32, np.float16):
        return table[0], np.float32
    raise InvalidArgumentError(f"random {kind} values of dtype {dtypes.as_dtype(dtype).name} are not supported")


@register_op("StatelessStandardNormal")
def _normal_fwd(seed, shape, dtype):
    kernel, draw_dtype = _float_kernels(dtype, "normal")
    return _fill(kernel, seed, shape, draw_dtype).astype(_np(dtype))


@register_op("StatelessTruncatedStandardNormal")
def _truncated_normal_fwd(seed, shape, dtype):
    """Standard normal values of magnitude below 2 (others are drawn again)."""
    kernel, draw_dtype = _float_kernels(dtype, "truncated")
    return _fill(kernel, seed, shape, draw_dtype).astype(_np(dtype))


_MANTISSA_BITS = {np.dtype(np.float16): 10}


@register_op("StatelessUniformUnit")
def _uniform_fwd(seed, shape, dtype):
    np_dtype = np.dtype(_np(dtype))
    if np_dtype == np.float32:
        return _fill(_philox().fill_uniform32, seed, shape, np.float32)
    if np_dtype == np.float64:
        return _fill(_philox().fill_uniform64, seed, shape, np.float64)
    if np_dtype in _MANTISSA_BITS:       # the low mantissa bits of one word each: m * 2**-bits, exact
        bits = _MANTISSA_BITS[np_dtype]
        words = _raw_words(seed, int(np.prod(shape, dtype=np.int64)))
        return ((words & np.uint32(2 ** bits - 1)).astype(np_dtype) * np_dtype.type(2.0 ** -bits)).reshape(shape)
    raise InvalidArgumentError(f"random uniform values of dtype {dtypes.as_dtype(dtype).name} are not supported")


def _int_words(seed, shape, np_dtype):
    """One word per 32-bit value, two (low word first) per 64-bit value, as unsigned integers."""
    n = int(np.prod(shape, dtype=np.int64))
    if np_dtype.itemsize == 8:
        words = _raw_words(seed, 2 * n).astype(np.uint64)
        return words[0::2] | (words[1::2] << np.uint64(32))
    if np_dtype.itemsize == 4:
        return _raw_words(seed, n)
    raise InvalidArgumentError(f"random integers of dtype {np_dtype.name} are not supported (use a 32- or 64-bit "
                               "integer dtype)")


@register_op("StatelessUniformInt")
def _uniform_int_fwd(seed, shape, dtype, minval, maxval):
    """minval + (bits mod (maxval - minval)), in unsigned arithmetic of the dtype's width."""
    np_dtype = np.dtype(_np(dtype))
    bits = _int_words(seed, shape, np_dtype)
    width = 2 ** (8 * bits.dtype.itemsize)
    span = (int(maxval) - int(minval)) % width           # 0 when the range is every value of the dtype
    if span:
        bits = bits % bits.dtype.type(span)
    return (bits + bits.dtype.type(int(minval) % width)).view(np_dtype).reshape(shape)


@register_op("StatelessUniformFullInt")
def _uniform_full_int_fwd(seed, shape, dtype):
    np_dtype = np.dtype(_np(dtype))
    return _int_words(seed, shape, np_dtype).view(np_dtype).reshape(shape)


@register_op("StatelessPermutation")
def _permutation_fwd(seed, n):
    """The order TensorFlow's StatelessShuffle puts n rows in for the seed."""
    if n > 2 ** 32 - 1:
        raise InvalidArgumentError(f"stateless_shuffle: {n} rows are more than this kernel's 2**32 - 1")
    return _philox().shuffle_order(*philox_stream(seed), n).astype(np.int64) if n > 1 else np.arange(n)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """tf.random.stateless_categorical: ``num_samples`` class indices per row of ``logits``, TensorFlow's for
    ``seed``."""
    return multinomial(logits, num_samples, seed, dtype)


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """tf.random.experimental.stateless_shuffle: the rows of ``value`` in the order TensorFlow gives them for
    ``seed``."""
    from . import array_ops
    _check_alg(alg)
    value = to_tensor(value)
    if value._value.ndim == 0:
        raise InvalidArgumentError("stateless_shuffle: value must have rank at least 1")
    return array_ops.gather(value, permutation(value._value.shape[0], seed))


@register_op("StatelessMultinomial")
def _multinomial_fwd(logits, seed, num_samples, dtype):
    return categorical_from_stream(philox_stream(seed), logits, num_samples, dtype)


def categorical_from_stream(stream, logits, num_samples, dtype):
    """Class indices drawn as TensorFlow's (Stateless)Multinomial draws them from a Philox stream (key,
    counter low, counter high), the logits taken as float32 as TensorFlow takes them."""
    logits = np.asarray(logits)
    if logits.ndim != 2 or logits.shape[1] == 0:
        raise InvalidArgumentError(f"categorical: logits must be [batch, classes] with classes > 0, got shape "
                                   f"{list(logits.shape)}")
    out = np.zeros((logits.shape[0], num_samples), np.int64)
    _philox().categorical(*stream, np.ascontiguousarray(logits, np.float32), out)
    return out.astype(_np(dtype))


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
    """0 with probability ``rate``, 1 / (1 - rate) otherwise: TensorFlow's stateless_dropout keeps the elements
    whose uniform value of the seed's Philox stream (in ``dtype``) is at least ``rate``."""
    np_dtype = np.dtype(_np(dtype))
    keep = _uniform_fwd(seed, shape, dtype) >= np_dtype.type(rate)
    return keep * np_dtype.type(1 / (1 - rate))


for _op in _OPS:
    no_gradient(_op)


def _seed(seed, allow_state=False):
    """A seed tensor of two integers (or, for the Philox ops, a generator state of three int64)."""
    seed = to_tensor(seed)
    shapes = ((2,), (3,)) if allow_state else ((2,),)
    if seed._value.dtype.kind not in "iu" or seed._value.shape not in shapes:
        raise InvalidArgumentError(f"a stateless random seed must be two integers, got shape {seed.shape} of "
                                   f"{seed.dtype.name}")
    return seed


def standard_normal(shape, seed, dtype="float32", truncated=False):
    op = "StatelessTruncatedStandardNormal" if truncated else "StatelessStandardNormal"
    return execute(op, (_seed(seed, True),), {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name})


def uniform_unit(shape, seed, dtype="float32"):
    """Uniform values in [0, 1)."""
    return execute("StatelessUniformUnit", (_seed(seed, True),), {"shape": int_list(shape),
                                                            "dtype": dtypes.as_dtype(dtype).name})


def uniform_int(shape, seed, minval, maxval, dtype="int32"):
    """Integers uniform in [minval, maxval)."""
    if int(minval) >= int(maxval):
        raise InvalidArgumentError(f"randint: minval ({minval}) must be less than maxval ({maxval})")
    attrs = {"shape": int_list(shape), "dtype": dtypes.as_dtype(dtype).name, "minval": int(minval),
             "maxval": int(maxval)}
    return execute("StatelessUniformInt", (_seed(seed, True),), attrs)


def uniform_full_int(shape, seed, dtype="int64"):
    """Integers uniform over every value of ``dtype`` (32- or 64-bit)."""
    return execute("StatelessUniformFullInt", (_seed(seed, True),), {"shape": int_list(shape),
                                                                     "dtype": dtypes.as_dtype(dtype).name})


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


# ------------------------------------------------------------------ tf.random.stateless_* ---
def _is_python_number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _as(value, dtype):
    from . import math_ops
    return to_tensor(value, dtype=dtype) if _is_python_number(value) else math_ops.cast(value, dtype)


def _scaled(z, scale, shift, dtype):
    """z * scale + shift, as TensorFlow's stateless ops compute it (in ``dtype``)."""
    from . import math_ops
    return math_ops.add(math_ops.multiply(z, _as(scale, dtype)), _as(shift, dtype))


def _float_dtype(dtype, op):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{op}: dtype must be a floating-point type, got {dtype.name}")
    return dtype


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """tf.random.stateless_normal: TensorFlow's Philox stream for ``seed`` (two integers)."""
    _check_alg(alg)
    seed = _seed(seed)
    dtype = _float_dtype(dtype, "stateless_normal")
    return _scaled(standard_normal(shape, seed, dtype), stddev, mean, dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                               alg="auto_select"):
    _check_alg(alg)
    seed = _seed(seed)
    dtype = _float_dtype(dtype, "stateless_truncated_normal")
    return _scaled(standard_normal(shape, seed, dtype, truncated=True), stddev, mean, dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Floats in [minval, maxval) (maxval defaults to 1); integers in [minval, maxval), or over every value of
    the dtype when both bounds are None."""
    _check_alg(alg)
    return _uniform(shape, _seed(seed), minval, maxval, dtype)


def _uniform(shape, seed, minval, maxval, dtype):
    """stateless_uniform for a seed or a generator state."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if minval is None and maxval is None:
            return uniform_full_int(shape, seed, dtype)
        if minval is None or maxval is None:
            raise ValueError("stateless_uniform: for an integer dtype give both minval and maxval, or neither "
                             "(for the full range of the dtype)")
        return uniform_int(shape, seed, int(to_tensor(minval)._value), int(to_tensor(maxval)._value), dtype)
    dtype = _float_dtype(dtype, "stateless_uniform")
    from . import math_ops
    maxval = 1 if maxval is None else maxval
    low = _as(minval, dtype)
    return math_ops.add(math_ops.multiply(uniform_unit(shape, seed, dtype), math_ops.subtract(_as(maxval, dtype),
                                                                                             low)), low)


def _check_alg(alg):
    """Only TensorFlow's CPU default (Philox) is drawn; asking for another algorithm is an error, not a
    silent substitute."""
    if alg is None:
        return
    name = getattr(alg, "name", alg)
    if isinstance(name, str) and name.lower() in ("auto_select", "philox"):
        return
    if not isinstance(name, str) and int(name) in (1, 3):     # RNG_ALG_PHILOX, RNG_ALG_AUTO_SELECT
        return
    raise ValueError(f"random algorithm {alg!r} is not supported: tapeflow draws TensorFlow's Philox stream "
                     "(alg='philox' or 'auto_select')")
