"""Random tensors with TensorFlow's seeding contract.

``set_seed(s)`` makes every later sequence of random ops reproducible. An
op-level ``seed`` gives a stream of its own: calling the same op with the same
seed again gives the next values of that stream, as in TensorFlow eager.

normal, truncated_normal and uniform (floats and integers) draw TensorFlow's own numbers, as eager
TensorFlow on CPU does: the pair (global seed, op seed) keys a Philox stream (key = global seed, counter
high word = op seed) that each op type and dtype continues at every call, 256 counter blocks per value.
An op without a seed takes a fresh op seed from ``random.Random(global seed)``; an op seed without a global
seed uses TensorFlow's default global seed. shuffle, categorical and dropout_mask draw tapeflow's own
numbers (numpy's PCG64), reproducible under the same contract.
"""
import random as _py_random

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.recording import forward_of
from .common import execute, int_list, no_gradient, register_op, to_tensor
from .stateless_random_ops import categorical_from_stream as _categorical_from_stream
from .stateless_random_ops import (_normal_fwd as _philox_normal, _truncated_normal_fwd as _philox_truncated,
                                   _uniform_fwd as _philox_uniform, _uniform_int_fwd as _philox_uniform_int)

_state = {"global_seed": None, "rng": np.random.default_rng(), "streams": {}, "op_seeds": None, "philox": {}}
_DEFAULT_GLOBAL_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1
_BLOCKS_PER_VALUE = 256


def set_seed(seed):
    """tf.random.set_seed: resets the global generator and every op-seed stream."""
    _state["global_seed"] = None if seed is None else int(seed)
    _state["rng"] = np.random.default_rng(seed)
    _state["streams"] = {}
    _state["op_seeds"] = None if seed is None else _py_random.Random(int(seed))
    _state["philox"] = {}


def seed_pair(seed):
    """(global seed, op seed) of a stateful op or a dataset, by TensorFlow's rules; random ones when neither is
    set."""
    global_seed = _state["global_seed"]
    if global_seed is None and seed is None:
        return tuple(int(v) for v in _state["rng"].integers(0, 2 ** 63, size=2))
    if global_seed is None:
        global_seed = _DEFAULT_GLOBAL_SEED
    op_seed = _state["op_seeds"].randint(0, _MAXINT32) if seed is None else int(seed)
    if global_seed == 0 and op_seed == 0:
        op_seed = _MAXINT32
    return global_seed, op_seed


def _philox_state(op_type, dtype, seed, shape, blocks=None):
    """The Philox state (counter low, counter high, key) for this call, and the stream moved past it: by
    ``blocks``, else by 256 blocks per value of ``shape`` (what TensorFlow's random ops reserve)."""
    global_seed, op_seed = seed_pair(seed)
    stream = (op_type, dtype, global_seed, op_seed)
    position = _state["philox"].get(stream, 0)
    if blocks is None:
        blocks = _BLOCKS_PER_VALUE * int(np.prod(shape, dtype=np.int64))
    _state["philox"][stream] = position + blocks
    return np.array([position, op_seed, global_seed], np.uint64).view(np.int64)


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


def _drawn_without_advancing(op_type):
    """What a stateful random op computes on a trace's placeholders: the values it would draw, with every
    stream left where it was. The draws happen when the traced graph runs, so a traced function (a Keras
    step traced by fit) draws the numbers the same code draws eagerly, however often it was traced."""
    def at_trace(*args, **attrs):
        saved = _saved_streams()
        try:
            return forward_of(op_type)[0](*args, **attrs)
        finally:
            _restore_streams(saved)
    return at_trace


def _saved_streams():
    op_seeds = _state["op_seeds"]
    return (_state["rng"], _state["rng"].bit_generator.state, dict(_state["streams"]),
            {k: g.bit_generator.state for k, g in _state["streams"].items()},
            op_seeds, None if op_seeds is None else op_seeds.getstate(), dict(_state["philox"]))


def _restore_streams(saved):
    rng, rng_state, streams, stream_states, op_seeds, op_seeds_state, philox = saved
    rng.bit_generator.state = rng_state
    for key, generator in streams.items():
        generator.bit_generator.state = stream_states[key]
    if op_seeds is not None:
        op_seeds.setstate(op_seeds_state)
    _state.update(rng=rng, streams=streams, op_seeds=op_seeds, philox=philox)


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
# Scaling by Python numbers happens in the output dtype, as TensorFlow multiplies and adds tensors.
@register_op("RandomStandardNormal", at_trace=_drawn_without_advancing("RandomStandardNormal"))
def _normal_fwd(shape, dtype, seed, mean=0.0, stddev=1.0):
    np_dtype = np.dtype(dtypes.as_dtype(dtype)._np).type
    values = _philox_normal(_philox_state("RandomStandardNormal", dtype, seed, shape), shape, dtype)
    return values * np_dtype(stddev) + np_dtype(mean)


@register_op("TruncatedNormal", at_trace=_drawn_without_advancing("TruncatedNormal"))
def _truncated_normal_fwd(shape, dtype, seed, mean=0.0, stddev=1.0):
    np_dtype = np.dtype(dtypes.as_dtype(dtype)._np).type
    values = _philox_truncated(_philox_state("TruncatedNormal", dtype, seed, shape), shape, dtype)
    return values * np_dtype(stddev) + np_dtype(mean)


@register_op("RandomUniform", at_trace=_drawn_without_advancing("RandomUniform"))
def _uniform_fwd(shape, dtype, seed, minval=0.0, maxval=1.0):
    np_dtype = np.dtype(dtypes.as_dtype(dtype)._np).type
    values = _philox_uniform(_philox_state("RandomUniform", dtype, seed, shape), shape, dtype)
    return values * (np_dtype(maxval) - np_dtype(minval)) + np_dtype(minval)


@register_op("RandomUniformInt", at_trace=_drawn_without_advancing("RandomUniformInt"))
def _uniform_int_fwd(shape, dtype, seed, minval, maxval):
    return _philox_uniform_int(_philox_state("RandomUniformInt", dtype, seed, shape), shape, dtype, minval, maxval)


@register_op("RandomShuffle", at_trace=_drawn_without_advancing("RandomShuffle"))
def _shuffle_fwd(x, seed):
    """The rows of x in TensorFlow's order for the seed (one 32-bit word per row, four per block)."""
    n = x.shape[0] if x.ndim else 0
    if n > 2 ** 32 - 1:
        raise InvalidArgumentError(f"random.shuffle: {n} rows are more than this kernel's 2**32 - 1")
    state = _philox_state("RandomShuffle", x.dtype.name, seed, (), blocks=(n + 3) // 4)
    if n < 2:
        return x.copy()
    from ..kernels import philox   # numba loads on first use
    lo, hi, key = state.view(np.uint64)
    return x[philox.shuffle_order(key, lo, hi, n)]


def first_shuffle_order(n):
    """The order RandomShuffle puts n rows in on a fresh kernel whose op seed is 0 under the global seed (what
    Keras 3 on TensorFlow shuffles ``fit``'s arrays with, the same order every epoch); None without a global
    seed."""
    if _state["global_seed"] is None:
        return None
    from ..kernels import philox   # numba loads on first use
    return philox.shuffle_order(np.uint64(_state["global_seed"] % 2 ** 64), np.uint64(0), np.uint64(0), int(n))


@register_op("Multinomial", at_trace=_drawn_without_advancing("Multinomial"))
def _multinomial_fwd(logits, num_samples, dtype, seed):
    """TensorFlow's sampling (see stateless_random_ops.categorical_from_stream) on the op's stateful stream."""
    rows = logits.shape[0] if np.ndim(logits) == 2 else 0
    # TensorFlow reserves 256 blocks per float64 of two per sample, samples rounded up to a multiple of 4
    blocks = rows * ((num_samples + 3) // 4 * 4) * 2 * 256
    lo, hi, key = _philox_state("Multinomial", np.asarray(logits).dtype.name, seed, (), blocks=blocks).view(np.uint64)
    return _categorical_from_stream((key, lo, hi), logits, num_samples, dtype)


@register_op("DropoutMask", at_trace=_drawn_without_advancing("DropoutMask"))
def _dropout_mask_fwd(shape, rate, dtype, seed):
    """0 with probability ``rate``, 1/(1 - rate) otherwise."""
    np_dtype = np.dtype(dtypes.as_dtype(dtype)._np).type
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
