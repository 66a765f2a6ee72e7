"""Jacobians inside tf.function: computed at each call from that call's inputs, replayed or compiled.

A target proven block-diagonal over the batch has its full jacobian assembled from
batch_jacobian's blocks; inside a trace that assembly must be ops of the graph, not
numpy run once at trace time (which would return the first call's jacobian forever).
"""
import numpy as np
import pytest

import tapeflow as tf

rng = np.random.default_rng(7)
W1 = tf.constant(rng.normal(size=(3, 4)).astype(np.float32))
W2 = tf.constant(rng.normal(size=(4, 2)).astype(np.float32))


def jacobian(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.nn.elu(x @ W1) @ W2)
    return tape.jacobian(y, x)


def expected_jacobian(x):
    """d y[b, o] / d x[c, i] = (b == c) elu'(z)[b, o] sum_j W2[j, o] elu'(a)[b, j] W1[i, j], written out."""
    a = x @ W1.numpy()
    h = np.where(a > 0, a, np.expm1(a))
    z = h @ W2.numpy()
    d1, d2 = np.where(a > 0, 1, h + 1), np.where(z > 0, 1, np.expm1(z) + 1)
    blocks = np.einsum("bo,jo,bj,ij->boi", d2, W2.numpy(), d1, W1.numpy())
    return np.einsum("boi,bc->boci", blocks, np.eye(len(x)))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_each_call_differentiates_its_own_inputs(jit_compile):
    f = tf.function(jacobian, jit_compile=jit_compile)
    for sign in (1.0, -1.0, 0.5):
        x = (sign * rng.normal(size=(5, 3)) - sign).astype(np.float32)
        got = f(tf.constant(x)).numpy()
        assert got.shape == (5, 2, 5, 3)
        np.testing.assert_allclose(got, expected_jacobian(x), rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # numpy's, on 0 * inf
def test_compiled_assembly_keeps_the_einsums_nans_for_a_non_finite_block():
    def squares_jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x * 0.5
        return tape.jacobian(y, x)

    x = rng.normal(size=(4, 3)).astype(np.float32)
    x[2, 1] = np.inf                  # example 2's block holds inf; the einsum's inf * 0 is NaN
    replayed = tf.function(squares_jacobian)(tf.constant(x)).numpy()
    compiled = tf.function(squares_jacobian, jit_compile=True)(tf.constant(x)).numpy()
    assert np.isnan(replayed).any()
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(replayed))
    np.testing.assert_allclose(compiled, replayed, rtol=1e-6, atol=1e-7)
    x[2, 1] = 2.0
    compiled = tf.function(squares_jacobian, jit_compile=True)(tf.constant(x)).numpy()
    np.testing.assert_array_equal(compiled, np.diag(x.reshape(-1)).reshape(4, 3, 4, 3))
