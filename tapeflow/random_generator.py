"""tf.random.Generator: TensorFlow's Philox stream from a state held in a tf.Variable.

The state is TensorFlow's: three int64, a 128-bit counter (low, high) and a 64-bit key, in a variable named
``StateVar`` held as ``_state_var`` (so checkpoints have TensorFlow's keys and values). A draw of ``n`` values
reads the state as the Philox stream of a stateless op, then moves the counter on by 256 * n, as
TensorFlow does: the numbers, and the state after every draw, are TensorFlow's bit for bit. Both the read
and the update are ops, so eager code and a traced function draw the same sequence (a traced function draws
new numbers at every call), and a checkpoint of the state resumes it.
"""
import os

import numpy as np

from .framework import dtypes
from .framework.tensor import Tensor
from .framework.variables import Variable
from .module import Module
from .ops import array_ops, core_ops, math_ops, stateless_random_ops
from .ops.common import int_list

_global = [None]
_STATE_SIZE = 3
_COUNTER_STEP = 256          # counter blocks a draw reserves per value drawn
PHILOX = 1                   # TensorFlow's number for the Philox algorithm (tf.random.Algorithm.PHILOX)


def _check_alg(alg):
    if alg is not None:
        stateless_random_ops._check_alg(alg)


def _int64_words(value, count):
    """``count`` int64 holding the low 64 * count bits of an integer (two's complement), low word first."""
    value = int(value)
    words = [(value >> (64 * i)) & (2 ** 64 - 1) for i in range(count)]
    return np.array(words, np.uint64).view(np.int64)


def _state_from_seed(seed):
    """A Python int is spread over the state's words (low first); a numpy integer or an integer tensor is the
    key, with the counter at zero (TensorFlow's two rules)."""
    if isinstance(seed, bool):
        raise TypeError("tf.random.Generator seed must be an integer, got a bool")
    if isinstance(seed, int):
        return _int64_words(seed, _STATE_SIZE)
    value = seed.numpy() if isinstance(seed, (Tensor, Variable)) else np.asarray(seed)
    if value.dtype.kind not in "iu" or value.ndim != 0:
        raise TypeError(f"tf.random.Generator seed must be an integer scalar, got {value.dtype.name} of shape "
                        f"{value.shape}")
    return np.array([0, 0, value.astype(np.int64)], np.int64)


def _checked_state(state):
    value = state.numpy() if isinstance(state, (Tensor, Variable)) else np.asarray(state)
    if value.dtype.kind not in "iu" or value.shape != (_STATE_SIZE,):
        raise ValueError(f"a Philox generator state is {_STATE_SIZE} integers (counter low, counter high, key), "
                         f"got shape {value.shape} of {value.dtype.name}")
    return value.astype(np.int64)


class Generator(Module):
    """A random-number generator; make one with ``from_seed`` or ``from_non_deterministic_state``.
    A tf.Module: its state variable is saved by checkpoints and SavedModels."""

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        _check_alg(alg)
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise ValueError("tf.random.Generator needs `copy_from` or `state`; use Generator.from_seed(seed) "
                             "or Generator.from_non_deterministic_state().")
        self._state_var = Variable(_checked_state(state), trainable=False, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(state=_state_from_seed(seed), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls(state=np.frombuffer(os.urandom(8 * _STATE_SIZE), np.int64).copy(), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        key, counter = np.asarray(key, np.int64).reshape(-1), np.asarray(counter, np.int64).reshape(-1)
        if key.shape != (1,) or counter.shape != (2,):
            raise ValueError(f"a Philox key is one int64 and its counter two, got {key.shape} and {counter.shape}")
        return cls(state=np.concatenate([counter, key]), alg=alg)

    @property
    def state(self):
        return self._state_var

    @property
    def algorithm(self):
        return PHILOX

    @property
    def key(self):
        return self._state_var[2]

    def reset(self, state):
        self._state_var.assign(_checked_state(state))

    def reset_from_seed(self, seed):
        self.reset(_state_from_seed(seed))

    def reset_from_key_counter(self, key, counter):
        self.reset(Generator.from_key_counter(key, counter, PHILOX).state.numpy())

    def _read_and_skip(self, shape):
        """The state to draw ``shape`` values from, and the counter moved past them (a 128-bit addition)."""
        count = int(np.prod(int_list(shape), dtype=np.int64))
        state = self._state_var.read_value()
        step = np.int64(_COUNTER_STEP * count)
        low = state[0]
        moved = math_ops.add(low, step)
        # the low word overflows (as unsigned) when it goes from "negative" to non-negative
        carry = math_ops.multiply(math_ops.cast(math_ops.less(low, np.int64(0)), dtypes.int64),
                                  math_ops.cast(math_ops.greater_equal(moved, np.int64(0)), dtypes.int64))
        increment = math_ops.add(np.array([step, 0, 0], np.int64),
                                 math_ops.multiply(carry, np.array([0, 1, 0], np.int64)))
        self._state_var.assign_add(increment)
        return state

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = stateless_random_ops._float_dtype(dtype, "Generator.normal")
        z = stateless_random_ops.standard_normal(shape, self._read_and_skip(shape), dtype)
        return stateless_random_ops._scaled(z, stddev, mean, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = stateless_random_ops._float_dtype(dtype, "Generator.truncated_normal")
        z = stateless_random_ops.standard_normal(shape, self._read_and_skip(shape), dtype, truncated=True)
        return stateless_random_ops._scaled(z, stddev, mean, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer and maxval is None:
            raise ValueError("Must specify maxval for integer dtype %s" % dtype.name)
        return stateless_random_ops._uniform(shape, self._read_and_skip(shape), minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        return stateless_random_ops.uniform_full_int(shape, self._read_and_skip(shape), dtype)

    def make_seeds(self, count=1):
        """A [2, count] int64 tensor of seeds for stateless ops: random keys over zeros."""
        keys = self.uniform_full_int([count], dtypes.int64)
        return core_ops.stack([keys, array_ops.zeros_like(keys)])

    def split(self, count=1):
        """``count`` new generators, each keyed by a random int64 with its counter at zero (this one
        advances)."""
        keys = self.uniform_full_int([count], dtypes.int64).numpy()
        return [Generator(state=np.array([0, 0, key], np.int64)) for key in keys]


def get_global_generator():
    if _global[0] is None:
        _global[0] = Generator.from_non_deterministic_state()
    return _global[0]


def set_global_generator(generator):
    _global[0] = generator
