"""jacobian and batch_jacobian: shapes, errors, and equality with a per-element loop of gradient()."""
import numpy as np
import pytest

import tapeflow as tf


def loop_jacobian(make, source):
    """d y[i] / d source by one gradient() per output element (the definition)."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(source)
        y = make()
    rows = []
    flat_n = int(np.prod(y.shape.as_list()))
    for i in range(flat_n):
        seed = np.zeros(flat_n, y.dtype.as_numpy_dtype)
        seed[i] = 1
        g = tape.gradient(y, source, output_gradients=tf.constant(seed.reshape(y.shape.as_list())))
        rows.append(np.zeros(source.shape.as_list()) if g is None else g.numpy())
    return np.array(rows).reshape(y.shape.as_list() + source.shape.as_list())


def dense_elu_stack(x, w1, b1, w2, b2):
    return tf.nn.elu(tf.nn.elu(x @ w1 + b1) @ w2 + b2)


@pytest.fixture
def mlp():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(7, 5)))
    params = [tf.constant(rng.normal(size=s) * 0.5) for s in [(5, 8), (8,), (8, 6), (6,)]]
    return x, params


def test_jacobian_matches_loop_for_a_two_layer_network(mlp):
    x, params = mlp
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = dense_elu_stack(x, *params)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    np.testing.assert_allclose(j.numpy(), loop_jacobian(lambda: dense_elu_stack(x, *params), x), atol=1e-12)


def test_batch_jacobian_is_the_diagonal_of_the_jacobian(mlp):
    x, params = mlp
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = dense_elu_stack(x, *params)
    j = tape.jacobian(y, x)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    np.testing.assert_allclose(jb.numpy(), tf.einsum('bxby->bxy', j).numpy(), atol=1e-12)
    np.testing.assert_allclose(jb.numpy(), tf.reduce_sum(j, axis=2).numpy(), atol=1e-12)


def test_jacobian_with_respect_to_weights_sums_to_the_gradient(mlp):
    x, params = mlp
    w1 = tf.Variable(params[0])
    with tf.GradientTape(persistent=True) as tape:
        y = dense_elu_stack(x, w1, *params[1:])
    j = tape.jacobian(y, w1)
    g = tape.gradient(y, w1)
    assert j.shape == (7, 6, 5, 8)
    np.testing.assert_allclose(tf.reduce_sum(j, axis=[0, 1]).numpy(), g.numpy(), atol=1e-12)


def test_hessian_by_jacobian_of_gradient():
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_sum(w ** 3)
        g = t1.gradient(loss, w)
    np.testing.assert_allclose(t2.jacobian(g, w).numpy(), [[6.0, 0.0], [0.0, 12.0]])


def test_hessian_of_a_network_matches_finite_differences(mlp):
    x, params = mlp
    w1 = tf.Variable(params[0])

    def loss_and_grad(w):
        with tf.GradientTape() as t:
            t.watch(w)
            loss = tf.reduce_mean(dense_elu_stack(x, w, *params[1:]) ** 2)
        return t.gradient(loss, w)

    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_mean(dense_elu_stack(x, w1, *params[1:]) ** 2)
        g = t1.gradient(loss, w1)
    h = t2.jacobian(g, w1).numpy().reshape(40, 40)
    np.testing.assert_allclose(h, h.T, atol=1e-10)
    eps = 1e-6
    w0 = params[0].numpy()
    for k in (0, 7, 23):
        dw = np.zeros(40)
        dw[k] = eps
        plus = loss_and_grad(tf.constant(w0 + dw.reshape(5, 8))).numpy().ravel()
        minus = loss_and_grad(tf.constant(w0 - dw.reshape(5, 8))).numpy().ravel()
        np.testing.assert_allclose(h[:, k], (plus - minus) / (2 * eps), atol=1e-6)


@pytest.mark.parametrize("target_shape, source_shape", [((3,), (3,)), ((), (3,)), ((), ()), ((2,), ())])
def test_jacobian_shapes(target_shape, source_shape):
    x = tf.ones(source_shape)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x) * tf.ones(target_shape)
    assert tape.jacobian(y, x).shape == target_shape + source_shape


def test_jacobian_structure_and_unconnected():
    x, w, u = tf.ones([3]), tf.ones([3, 2]), tf.ones([4])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w, u])
        y = tf.reshape(tf.reduce_sum(x) * tf.reduce_sum(w, 0), [1, 2])
    jx, jw, ju = tape.jacobian(y, [x, w, u])
    assert (jx.shape, jw.shape, ju) == ((1, 2, 3), (1, 2, 3, 2), None)
    d = tape.jacobian(y, {'u': u, 'x': x}, unconnected_gradients='zero')
    assert d['u'].shape == (1, 2, 4) and float(tf.reduce_sum(d['u'])) == 0.0
    y_int = tf.cast(y, tf.int32)
    assert tape.jacobian(y_int, x) is None


def test_jacobian_errors_and_consumption():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="jacobian: target must be a single tf.Tensor, got list"):
        tape.jacobian([y], x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True to compute the jacobian with eager execution"):
        tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), [[2, 0], [0, 4]])
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)


def test_jacobian_accepts_pfor_options_on_persistent_tape():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    a = tape.jacobian(y, x, experimental_use_pfor=False)
    b = tape.jacobian(y, x, parallel_iterations=4)
    np.testing.assert_allclose(a.numpy(), b.numpy())


def test_batch_jacobian_shapes_and_values():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        y3 = tf.stack([y, y * 2.0, y * 3.0], axis=1)
        y1 = tf.reduce_sum(y, axis=1, keepdims=True)
    np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])
    assert tape.batch_jacobian(y3, x).shape == (2, 3, 2, 2)
    assert tape.batch_jacobian(y1, x).shape == (2, 1, 2)
    z = tf.ones([2, 3])
    assert tape.batch_jacobian(y, z).numpy().tolist() == np.zeros((2, 2, 3)).tolist()


def test_batch_jacobian_errors():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        v = tf.reduce_sum(x, 1)
        big = tf.concat([y, y, y], 0)
    with pytest.raises(ValueError, match=r"Shape \(2,\) must have rank at least 2"):
        tape.batch_jacobian(v, x)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(6, 2\)\) and source shape "
                                         r"\(\(2, 2\)\) to match."):
        tape.batch_jacobian(big, x)
    with pytest.raises(TypeError, match="batch_jacobian: source must be a single tf.Tensor"):
        tape.batch_jacobian(y, [x])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True to compute the batch_jacobian with parallel_iterations"):
        t.batch_jacobian(y, x, parallel_iterations=2)
    with pytest.raises(RuntimeError, match="batch_jacobian with eager execution enabled"):
        t.batch_jacobian(y, x, experimental_use_pfor=False)


def test_jacobian_through_a_custom_gradient_uses_it_row_by_row():
    @tf.custom_gradient
    def double_grad(x):
        return tf.identity(x), lambda dy: dy * 2.0

    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = double_grad(x) * x
    # d/dx [c(x) * x] with c'(x) := 2 is 2x + x.
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag([3.0, 6.0, 9.0]))


def test_large_jacobian_is_computed_in_blocks(monkeypatch):
    from tapeflow import backprop
    monkeypatch.setattr(backprop, "_JACOBIAN_BLOCK_ELEMENTS", 64)
    x = tf.constant(np.linspace(0.1, 1.0, 30))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(x) * tf.reduce_sum(x)
    j = tape.jacobian(y, x).numpy()
    xs = np.linspace(0.1, 1.0, 30)
    expected = np.diag(np.cos(xs) * xs.sum()) + np.sin(xs)[:, None]
    np.testing.assert_allclose(j, expected, atol=1e-12)


def test_cross_example_coupling_is_detected_and_computed_densely():
    rng = np.random.default_rng(5)
    x = tf.constant(rng.normal(size=(6, 3)))

    def coupled():
        centred = x - tf.reduce_mean(x, axis=0)  # every example depends on every other one
        return tf.tanh(centred) * 2.0

    with tf.GradientTape() as tape:
        tape.watch(x)
        y = coupled()
    j = tape.jacobian(y, x)
    np.testing.assert_allclose(j.numpy(), loop_jacobian(coupled, x), atol=1e-12)
    assert np.abs(j.numpy()[0, :, 1, :]).max() > 1e-3  # off-diagonal blocks are really there


def test_block_diagonal_jacobian_is_differentiable():
    rng = np.random.default_rng(6)
    x = tf.constant(rng.normal(size=(5, 2)))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.sin(x) * x
        j = inner.jacobian(y, x)
        total = tf.reduce_sum(j * j)
    g = outer.gradient(total, x).numpy()
    # J is diagonal with d/dx (x sin x) = sin x + x cos x; d/dx sum(J^2) = 2 J J'.
    xs = x.numpy()
    d = np.sin(xs) + xs * np.cos(xs)
    np.testing.assert_allclose(g, 2 * d * (2 * np.cos(xs) - xs * np.sin(xs)), atol=1e-10)
