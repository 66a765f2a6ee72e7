"""tf.random.log_uniform_candidate_sampler: negative classes drawn from Zipf's (log-uniform) distribution.

P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1). A class is drawn as TensorFlow documents it,
``floor(exp(u * log(range_max + 1))) - 1`` for a uniform u, from tapeflow's uniform stream: the distribution and
the expected counts are TensorFlow's, the particular classes drawn for a seed are not.
"""
import numpy as np

from .framework import dtypes
from .framework.errors import InvalidArgumentError
from .framework.tensor import host_array
from .ops.common import to_tensor
from .ops.random_ops import uniform


def _probability(classes, range_max):
    classes = np.asarray(classes, np.float64)
    return np.log((classes + 2.0) / (classes + 1.0)) / np.log(range_max + 1.0)


def _expected_count(probability, num_sampled, num_tries):
    """How often each class is expected among the draws: p * n for independent draws; for unique sampling,
    the chance a class turned up at least once in all ``num_tries`` draws."""
    if num_tries == num_sampled:
        return probability * num_sampled
    return -np.expm1(num_tries * np.log1p(-probability))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates int64 [num_sampled], true_expected_count float32 [batch, num_true],
    sampled_expected_count float32 [num_sampled]). With ``unique``, draws repeat until ``num_sampled`` distinct
    classes came up (eager: the number of draws depends on the values)."""
    true = host_array(true_classes)
    if true.dtype != np.int64:
        raise TypeError(f"log_uniform_candidate_sampler: true_classes must be int64, got {true.dtype}.")
    num_true, num_sampled, range_max = int(num_true), int(num_sampled), int(range_max)
    if true.ndim != 2 or true.shape[1] != num_true:
        raise InvalidArgumentError(f"log_uniform_candidate_sampler: true_classes must be a matrix with num_true="
                                   f"{num_true} columns; got shape {true.shape}.")
    if num_true < 1 or num_sampled < 1 or range_max < 1:
        raise InvalidArgumentError("log_uniform_candidate_sampler: num_true, num_sampled and range_max must be "
                                   f"positive; got {num_true}, {num_sampled}, {range_max}.")
    if unique and num_sampled > range_max:
        raise InvalidArgumentError(f"Sampler's range is too small: {num_sampled} unique samples requested from "
                                   f"range_max={range_max}.")
    log_range = np.log(range_max + 1.0)
    sampled, seen, num_tries = [], set(), 0
    while len(sampled) < num_sampled:
        u = host_array(uniform([num_sampled], dtype=dtypes.float64, seed=seed))
        for value in (np.floor(np.exp(u * log_range)).astype(np.int64) - 1) % range_max:
            if len(sampled) == num_sampled:
                break
            num_tries += 1
            if unique and value in seen:
                continue
            seen.add(int(value))
            sampled.append(int(value))
    sampled = np.array(sampled, np.int64)
    true_expected = _expected_count(_probability(true, range_max), num_sampled, num_tries)
    sampled_expected = _expected_count(_probability(sampled, range_max), num_sampled, num_tries)
    return (to_tensor(sampled), to_tensor(true_expected.astype(np.float32)),
            to_tensor(sampled_expected.astype(np.float32)))
