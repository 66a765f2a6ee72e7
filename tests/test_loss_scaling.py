"""loss_scale_factor as Keras 3 does it: the gradients are taken of ``optimizer.scale_loss(loss)`` and
``apply`` divides them back, so a step with the factor is the step without it.

fit (Keras's train_step scales the loss under its tape and logs the unscaled loss), a custom loop
that calls ``optimizer.scale_loss`` itself, and ``optimizer.minimize`` are checked against one
optimizer step computed by hand in float64 (Keras's SGD and Adam formulas), and against the same
run without the factor.
"""
import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
Y = np.array([[1.0], [0.0], [2.0]], np.float32)
W0 = np.array([[0.5], [-1.0]], np.float32)
B0 = np.array([0.25], np.float32)
LR = 0.1
ADAM_EPSILON = 0.01  # large enough that Adam's step depends on the gradients' scale, not only their sign


@pytest.fixture(autouse=True)
def fresh_session():
    K.backend.clear_session()
    yield


def hand_loss_and_gradients():
    """mse of the Dense model at (W0, B0) and its gradients, in float64."""
    x, y, w, b = (a.astype(np.float64) for a in (X, Y, W0, B0))
    residual = x @ w + b - y
    n = residual.size
    return np.mean(residual ** 2), [2 / n * x.T @ residual, 2 / n * residual.sum(0)]


def hand_step(kind):
    """The weights after one step of SGD(LR) or Adam(LR, epsilon=ADAM_EPSILON), in float64."""
    _, grads = hand_loss_and_gradients()
    out = []
    for w, g in zip((W0.astype(np.float64), B0.astype(np.float64)), grads):
        if kind == "sgd":
            out.append(w - LR * g)
        else:
            beta_1, beta_2 = 0.9, 0.999
            m = (1 - beta_1) * g
            v = (1 - beta_2) * g * g
            alpha = LR * np.sqrt(1 - beta_2) / (1 - beta_1)
            out.append(w - m * alpha / (np.sqrt(v) + ADAM_EPSILON))
    return out


def make_optimizer(kind, factor):
    if kind == "sgd":
        return K.optimizers.SGD(LR, loss_scale_factor=factor)
    return K.optimizers.Adam(LR, epsilon=ADAM_EPSILON, loss_scale_factor=factor)


def make_model():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    model.set_weights([W0, B0])
    return model


def assert_step(weights, kind):
    for got, expected in zip(weights, hand_step(kind)):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-6, atol=1e-7)


def mse(model):
    return tf.reduce_mean(tf.square(model(tf.constant(X)) - tf.constant(Y)))


# ------------------------------------------------------------------- fit ---
@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("factor", [128.0, 1000.0])
def test_fit_step_with_loss_scale_factor_is_the_unscaled_step(kind, factor):
    model = make_model()
    model.compile(make_optimizer(kind, factor), "mse")
    history = model.fit(X, Y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    assert_step(model.get_weights(), kind)
    loss, _ = hand_loss_and_gradients()
    np.testing.assert_allclose(history.history["loss"], [loss], rtol=1e-6)   # logs show the unscaled loss

    plain = make_model()
    plain.compile(make_optimizer(kind, None), "mse")
    plain.fit(X, Y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), plain.get_weights()):
        if factor == 128.0:  # a power of two scales and unscales exactly
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_sgd_fit_moves_the_weights_by_the_full_step():
    """The issue's numbers: SGD(0.1, loss_scale_factor=128) moved the weights by 1/128 of the step."""
    model = make_model()
    model.compile(K.optimizers.SGD(LR, loss_scale_factor=128.0), "mse")
    model.train_on_batch(X, Y)
    _, grads = hand_loss_and_gradients()
    np.testing.assert_allclose(model.get_weights()[1] - B0, -LR * grads[1], rtol=1e-5)


# ------------------------------------------------------------ custom loop ---
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_custom_loop_with_scale_loss_and_apply_gradients(kind):
    model = make_model()
    optimizer = make_optimizer(kind, 128.0)
    with tf.GradientTape() as tape:
        loss = mse(model)
        scaled = optimizer.scale_loss(loss)
    np.testing.assert_allclose(float(scaled), 128.0 * float(loss), rtol=1e-7)
    grads = tape.gradient(scaled, model.trainable_variables)
    _, hand_grads = hand_loss_and_gradients()
    np.testing.assert_allclose(grads[0].numpy(), 128.0 * hand_grads[0], rtol=1e-6)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    assert_step(model.get_weights(), kind)


def test_custom_loop_inside_tf_function():
    model = make_model()
    optimizer = make_optimizer("sgd", 128.0)
    variables = model.trainable_variables

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            scaled = optimizer.scale_loss(mse(model))
        optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))

    step()
    assert_step(model.get_weights(), "sgd")


# --------------------------------------------------------------- minimize ---
@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_minimize_with_a_loss_callable(kind):
    model = make_model()
    make_optimizer(kind, 128.0).minimize(lambda: mse(model), model.trainable_variables)
    assert_step(model.get_weights(), kind)


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_minimize_with_a_loss_tensor_and_its_tape(kind):
    model = make_model()
    optimizer = make_optimizer(kind, 128.0)
    with tf.GradientTape() as tape:
        loss = mse(model)
    optimizer.minimize(loss, model.trainable_variables, tape=tape)
    assert_step(model.get_weights(), kind)


def test_minimize_on_a_tape_that_is_still_recording():
    model = make_model()
    optimizer = make_optimizer("sgd", 128.0)
    with tf.GradientTape() as tape:
        loss = mse(model)
        optimizer.minimize(loss, model.trainable_variables, tape=tape)
    assert_step(model.get_weights(), "sgd")


def test_minimize_with_a_callable_var_list_and_a_given_tape():
    model = make_model()
    tape = tf.GradientTape()
    make_optimizer("adam", 1000.0).minimize(lambda: mse(model), lambda: model.trainable_variables, tape=tape)
    assert_step(model.get_weights(), "adam")
