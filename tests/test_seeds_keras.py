"""The Keras examples of ../shared/seeds/004 (the Russian advanced-autodiff guide),
run with ``import tapeflow as tf``: Dense and BatchNormalization under nested tapes,
jacobians, a Hessian with a Newton step, and batch jacobians.

Each test is the guide's code (matplotlib lines left out) followed by the
shapes and values the guide prints. Where the guide's numbers are random,
the tests also check the values against an independent numpy computation.
"""
import numpy as np

import tapeflow as tf


def printed(capsys):
    return capsys.readouterr().out.rstrip("\n").split("\n")


def test_input_gradient_regularisation(capsys):
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x)**2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = tf.norm(g1)
    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    print([var.shape for var in dg1_mag])
    assert printed(capsys) == ["[TensorShape([5, 10]), TensorShape([10])]"]

    # The values: g1 = 2 * (relu'(z) * y) @ W.T, and d|g1| / dW by central differences in float64.
    W, b, xv = layer.kernel.numpy().astype(np.float64), layer.bias.numpy().astype(np.float64), x.numpy()

    def magnitude(W, b):
        z = xv @ W + b
        g = (2 * np.maximum(z, 0) * (z > 0)) @ W.T
        return np.linalg.norm(g)
    eps = 1e-6
    numeric_b = np.array([(magnitude(W, b + eps * e) - magnitude(W, b - eps * e)) / (2 * eps) for e in np.eye(10)])
    assert np.allclose(dg1_mag[1].numpy(), numeric_b, rtol=1e-3, atol=1e-3)
    assert np.isclose(float(g1_mag), magnitude(W, b), rtol=1e-5)


def test_jacobian_of_dense_output_wrt_kernel(capsys):
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    print(y.shape)
    print(layer.kernel.shape)
    j = tape.jacobian(y, layer.kernel)
    print(j.shape)
    g = tape.gradient(y, layer.kernel)
    print('g.shape:', g.shape)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    assert printed(capsys) == ["(7, 10)", "(5, 10)", "(7, 10, 5, 10)", "g.shape: (5, 10)"]
    # dy[b, o] / dW[i, p] = x[b, i] * relu'(z[b, o]) * (o == p)
    active = (y.numpy() > 0).astype(np.float32)
    expected = np.einsum("bi,bo,op->boip", x.numpy(), active, np.eye(10, dtype=np.float32))
    assert np.allclose(j.numpy(), expected, atol=1e-6)


def test_hessian_and_newton_step(capsys):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    x0 = x
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    print(f'layer.kernel.shape: {layer1.kernel.shape}')
    print(f'h.shape: {h.shape}')
    assert printed(capsys) == ["layer.kernel.shape: (5, 8)", "h.shape: (5, 8, 5, 8)"]

    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    # The Hessian matrix should be symmetric.
    assert np.allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)
    # Finite differences of the gradient, one kernel entry at a time, give the same matrix.
    W1, b1 = layer1.kernel.numpy().astype(np.float64), layer1.bias.numpy().astype(np.float64)
    W2, b2 = layer2.kernel.numpy().astype(np.float64), layer2.bias.numpy().astype(np.float64)
    xv = x0.numpy().astype(np.float64)

    def grad(W):
        z1 = xv @ W + b1
        a1 = np.maximum(z1, 0)
        z2 = a1 @ W2 + b2
        a2 = np.maximum(z2, 0)
        d2 = 2 * a2 / a2.size * (z2 > 0)
        d1 = (d2 @ W2.T) * (z1 > 0)
        return xv.T @ d1
    assert np.allclose(g.numpy(), grad(W1), atol=1e-5)
    eps = 1e-4
    columns = [((grad(W1 + eps * e.reshape(5, 8)) - grad(W1 - eps * e.reshape(5, 8))) / (2 * eps)).ravel()
               for e in np.eye(40)]
    assert np.allclose(h_mat.numpy(), np.array(columns).T, atol=1e-3)

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0])*eps
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    # Reshape the update and apply it to the variable.
    before = layer1.kernel.numpy()
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    expected = np.linalg.solve(h_mat.numpy() + eps * np.eye(40), g_vec.numpy())
    assert np.allclose(layer1.kernel.numpy(), before - expected.reshape(5, 8), atol=1e-4)


def test_batch_jacobian(capsys):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    print(y.shape)
    j = tape.jacobian(y, x)
    print(j.shape)
    # Each (batch, batch) slice of the full jacobian is diagonal.
    for b in range(7):
        off_diagonal = np.delete(j.numpy()[b], b, axis=1)
        assert np.all(off_diagonal == 0)
    j_sum = tf.reduce_sum(j, axis=2)
    print(j_sum.shape)
    j_select = tf.einsum('bxby->bxy', j)
    print(j_select.shape)
    jb = tape.batch_jacobian(y, x)
    print(jb.shape)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    print(error.numpy())
    assert printed(capsys) == ["(7, 6)", "(7, 6, 7, 5)", "(7, 6, 5)", "(7, 6, 5)", "(7, 6, 5)", "0.0"]
    assert np.array_equal(j_select.numpy(), jb.numpy())


def test_batch_jacobian_with_batch_normalization(capsys):
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    print(f'j.shape: {j.shape}')
    jb = tape.batch_jacobian(y, x)
    print(f'jb.shape: {jb.shape}')
    assert printed(capsys) == ["j.shape: (7, 6, 7, 5)", "jb.shape: (7, 6, 5)"]
    # BatchNormalization mixes the batch: the (batch, batch) slices are not diagonal any more ...
    assert np.abs(np.delete(j.numpy()[0], 0, axis=1)).max() > 1e-4
    # ... so batch_jacobian (which, like TensorFlow's, differentiates the sum over the batch of each
    # output) is not the diagonal blocks: it sums each block column, jb[c] = sum_b dy[b]/dx[c].
    assert np.allclose(jb.numpy(), np.einsum("bxcy->cxy", j.numpy()), atol=1e-5)
    assert not np.allclose(jb.numpy(), np.einsum("bxby->bxy", j.numpy()), atol=1e-4)
    # The jacobian agrees with central differences of the same forward pass (float64, BN in training mode).
    W1, b1 = layer1.kernel.numpy().astype(np.float64), layer1.bias.numpy().astype(np.float64)
    W2, b2 = layer2.kernel.numpy().astype(np.float64), layer2.bias.numpy().astype(np.float64)

    def forward(xv):
        def elu(z):
            return np.where(z > 0, z, np.expm1(z))
        h = elu(xv @ W1 + b1)
        h = (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-3)
        return elu(h @ W2 + b2)
    xv = x.numpy().astype(np.float64)
    eps = 1e-5
    numeric = np.zeros((7, 6, 7, 5))
    for b in range(7):
        for i in range(5):
            e = np.zeros_like(xv)
            e[b, i] = eps
            numeric[:, :, b, i] = (forward(xv + e) - forward(xv - e)) / (2 * eps)
    assert np.allclose(j.numpy(), numeric, atol=2e-3)
