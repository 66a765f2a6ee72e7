"""tf.random.Generator: random numbers from a state held in a tf.Variable.

Each draw reads the state as the seed of a stateless random op and advances the
state with ``assign_add``: both are ops, so eager code and a traced function
draw the same sequence (a traced function draws new numbers at every call), and
a checkpoint of the state resumes it. The numbers are tapeflow's own (numpy's
PCG64 keyed by the state), not TensorFlow's Philox stream.
"""
import os

import numpy as np

from .framework import dtypes
from .framework.variables import Variable
from .module import Module
from .ops import math_ops, stateless_random_ops

_global = [None]


class Generator(Module):
    """A random-number generator; make one with ``from_seed`` or ``from_non_deterministic_state``.
    A tf.Module: its state variable is saved by checkpoints and SavedModels."""

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise ValueError("tf.random.Generator needs `copy_from` or `state`; use Generator.from_seed(seed) "
                             "or Generator.from_non_deterministic_state().")
        self._state = Variable(np.asarray(state, np.int64).reshape(2), trainable=False, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(state=[int(seed), 0])

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls(state=[int.from_bytes(os.urandom(8), "little", signed=True), 0])

    @classmethod
    def from_state(cls, state, alg=None):
        return cls(state=state)

    @property
    def state(self):
        return self._state

    @property
    def algorithm(self):
        return "pcg64"

    def reset(self, state):
        self._state.assign(np.asarray(state, np.int64).reshape(2))

    def reset_from_seed(self, seed):
        self.reset([int(seed), 0])

    def _next_seed(self):
        seed = self._state.read_value()
        self._state.assign_add(np.array([0, 1], np.int64))
        return seed

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        z = stateless_random_ops.standard_normal(shape, self._next_seed(), dtype)
        return math_ops.add(math_ops.multiply(z, math_ops.cast(stddev, dtype)), math_ops.cast(mean, dtype))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        z = stateless_random_ops.standard_normal(shape, self._next_seed(), dtype, truncated=True)
        return math_ops.add(math_ops.multiply(z, math_ops.cast(stddev, dtype)), math_ops.cast(mean, dtype))

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if maxval is None:
                raise ValueError("Must specify maxval for integer dtype %s" % dtype.name)
            return stateless_random_ops.uniform_int(shape, self._next_seed(), minval, maxval, dtype)
        maxval = 1 if maxval is None else maxval
        u = stateless_random_ops.uniform_unit(shape, self._next_seed(), dtype)
        low = math_ops.cast(minval, dtype)
        return math_ops.add(math_ops.multiply(u, math_ops.subtract(math_ops.cast(maxval, dtype), low)), low)

    def make_seeds(self, count=1):
        """A [2, count] int64 tensor of seeds for stateless ops."""
        return stateless_random_ops.uniform_int((2, count), self._next_seed(), -2 ** 62, 2 ** 62, dtypes.int64)

    def split(self, count=1):
        """``count`` new generators, seeded from this one (which advances)."""
        seeds = self.make_seeds(count).numpy()
        return [Generator(state=[int(seeds[0, i]), int(seeds[1, i])]) for i in range(count)]


def get_global_generator():
    if _global[0] is None:
        _global[0] = Generator.from_non_deterministic_state()
    return _global[0]


def set_global_generator(generator):
    _global[0] = generator
