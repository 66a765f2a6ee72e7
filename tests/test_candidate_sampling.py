"""tf.random.log_uniform_candidate_sampler against TensorFlow's documented semantics (checked on TF 2.21):
P(c) = log((c + 2) / (c + 1)) / log(range_max + 1); expected counts p * num_sampled for independent draws and
1 - (1 - p) ** num_tries for unique ones. The drawn classes themselves are not TF's stream."""
import numpy as np
import pytest

import tapeflow as tf


def _p(classes, range_max):
    return np.log((np.asarray(classes, float) + 2) / (np.asarray(classes, float) + 1)) / np.log(range_max + 1)


def test_independent_draws_expected_counts_and_frequencies():
    tf.random.set_seed(7)
    true = tf.constant([[1, 3], [0, 9]], dtype=tf.int64)
    sampled, true_expected, sampled_expected = tf.random.log_uniform_candidate_sampler(true, 2, 20000, False, 10)
    assert (sampled.dtype, true_expected.dtype, sampled_expected.dtype) == (tf.int64, tf.float32, tf.float32)
    assert tuple(sampled.shape) == (20000,) and tuple(true_expected.shape) == (2, 2)
    s = sampled.numpy()
    assert s.min() >= 0 and s.max() < 10
    np.testing.assert_allclose(true_expected.numpy(), _p([[1, 3], [0, 9]], 10) * 20000, rtol=1e-6)
    np.testing.assert_allclose(sampled_expected.numpy(), _p(s, 10) * 20000, rtol=1e-6)
    # 20000 draws: each frequency within ~4 standard deviations of its probability.
    np.testing.assert_allclose(np.bincount(s, minlength=10) / 20000, _p(np.arange(10), 10), atol=0.013)


def test_unique_draws_are_distinct_and_counts_use_one_number_of_tries():
    tf.random.set_seed(3)
    true = np.array([[1], [5]], np.int64)
    sampled, true_expected, sampled_expected = tf.random.log_uniform_candidate_sampler(true, 1, 6, True, 10, seed=4)
    s = sampled.numpy()
    assert len(set(s.tolist())) == 6 and s.min() >= 0 and s.max() < 10
    tries = np.log1p(-sampled_expected.numpy().astype(float)) / np.log1p(-_p(s, 10))
    n = int(round(tries[0]))
    assert n >= 6 and np.allclose(tries, n, rtol=1e-5)
    np.testing.assert_allclose(true_expected.numpy().ravel(), -np.expm1(n * np.log1p(-_p([1, 5], 10))), rtol=1e-5)
    full = tf.random.log_uniform_candidate_sampler(true, 1, 10, True, 10)[0].numpy()
    assert sorted(full.tolist()) == list(range(10))


def test_bad_arguments_are_named():
    true = tf.constant([[1], [5]], dtype=tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        tf.random.log_uniform_candidate_sampler(true, 1, 11, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_true=2"):
        tf.random.log_uniform_candidate_sampler(true, 2, 3, False, 10)
    with pytest.raises(TypeError, match="int64"):
        tf.random.log_uniform_candidate_sampler(tf.constant([[1]]), 1, 3, False, 10)
