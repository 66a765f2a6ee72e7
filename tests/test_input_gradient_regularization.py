"""Input-gradient regularisation: the penalty, its gradient, and training through fit."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.layers import InputGradientRegularizedModel, input_gradient_penalty


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float64)
    y = (x[:, 0] + x[:, 1] ** 2 > 0.5).astype(np.int64)
    return x, y


@pytest.fixture(autouse=True)
def float64_keras():
    """Finite differences need float64 end to end, the model's own policy included."""
    previous = tf.keras.backend.floatx()
    tf.keras.backend.set_floatx("float64")
    yield
    tf.keras.backend.set_floatx(previous)


def _model(seed=0):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential([tf.keras.Input(shape=(6,)),
                                tf.keras.layers.Dense(16, activation="tanh"),
                                tf.keras.layers.Dense(2)])


def _compiled(model):
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_penalty_is_the_mean_squared_per_example_input_gradient():
    x, y = _data(8)
    model = _compiled(_model())
    _, _, penalty = input_gradient_penalty(model, x, y)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    norms = []
    for i in range(8):
        xi = tf.constant(x[i:i + 1])
        with tf.GradientTape() as tape:
            tape.watch(xi)
            li = loss_fn(y[i:i + 1], model(xi, training=True))
        norms.append(float(tf.reduce_sum(tape.gradient(li, xi) ** 2)))
    assert float(penalty) == pytest.approx(np.mean(norms), rel=1e-10)


def test_penalty_gradient_matches_finite_differences():
    x, y = _data(8)
    model = _compiled(_model())
    kernel = model.layers[0].kernel
    with tf.GradientTape() as tape:
        _, _, penalty = input_gradient_penalty(model, x, y)
    g = tape.gradient(penalty, kernel).numpy()
    k0 = kernel.numpy()
    eps = 1e-6
    for index in [(0, 0), (3, 5), (5, 15)]:
        bump = np.zeros_like(k0)
        bump[index] = eps
        kernel.assign(k0 + bump)
        plus = float(input_gradient_penalty(model, x, y)[2])
        kernel.assign(k0 - bump)
        minus = float(input_gradient_penalty(model, x, y)[2])
        kernel.assign(k0)
        assert g[index] == pytest.approx((plus - minus) / (2 * eps), rel=1e-5, abs=1e-9)


def test_training_with_the_penalty_lowers_the_input_gradient_norm():
    x, y = _data(128)
    plain, regular = _model(1), _model(1)
    _compiled(plain).fit(x, y, epochs=30, batch_size=32, verbose=0)
    robust = _compiled(InputGradientRegularizedModel(regular, weight=1.0))
    history = robust.fit(x, y, epochs=30, batch_size=32, verbose=0)
    assert "input_gradient_penalty" in history.history and "loss" in history.history
    _compiled(regular)
    plain_penalty = float(input_gradient_penalty(plain, x, y, training=False)[2])
    robust_penalty = float(input_gradient_penalty(regular, x, y, training=False)[2])
    assert robust_penalty < 0.5 * plain_penalty
    assert np.allclose(robust.predict(x, verbose=0), regular.predict(x, verbose=0))


def test_bad_arguments():
    with pytest.raises(TypeError, match="wraps a Keras model"):
        InputGradientRegularizedModel(lambda x: x)
    with pytest.raises(ValueError, match="`weight` must be >= 0"):
        InputGradientRegularizedModel(_model(), weight=-1.0)
