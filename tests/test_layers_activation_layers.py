"""Activation layers: Keras's formulas in numpy, configs, PReLU weights, Softmax masks, gradients, files."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients

L = tf.keras.layers
rng = np.random.default_rng(2)
X = np.array([[-3.0, -1.0, -0.2, 0.1, 0.7, 1.5, 4.0, 9.0]], "float32")


def _relu_reference(x, max_value, negative_slope, threshold):
    y = np.where(x >= threshold, x, negative_slope * (x - threshold))
    return y if max_value is None else np.minimum(y, max_value)


@pytest.mark.parametrize("kwargs", [{}, dict(max_value=6.0), dict(negative_slope=0.1, threshold=0.5),
                                    dict(max_value=2.0, negative_slope=0.2, threshold=1.0)])
def test_relu_matches_keras_formula(kwargs):
    full = dict(dict(max_value=None, negative_slope=0.0, threshold=0.0), **kwargs)
    layer = L.ReLU(**kwargs)
    np.testing.assert_allclose(layer(X).numpy(), _relu_reference(X, **full), rtol=1e-6)
    config = layer.get_config()
    assert {k: config[k] for k in full} == full
    assert L.ReLU.from_config(config).get_config() == config


def test_leaky_relu_elu_and_their_configs():
    np.testing.assert_allclose(L.LeakyReLU()(X).numpy(), np.where(X > 0, X, 0.3 * X), rtol=1e-6)
    with pytest.warns(UserWarning, match="alpha"):
        legacy = L.LeakyReLU(alpha=0.1)
    assert legacy.get_config()["negative_slope"] == 0.1
    np.testing.assert_allclose(L.ELU(0.5)(X).numpy(), np.where(X > 0, X, 0.5 * np.expm1(X)), rtol=1e-6)
    assert sorted(L.ELU(0.5).get_config()) == ["alpha", "dtype", "name", "trainable"]
    with pytest.raises(ValueError, match="max_value"):
        L.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope"):
        L.LeakyReLU(-0.1)


def test_prelu_weight_shape_shared_axes_and_formula():
    x = rng.normal(size=(2, 3, 4, 5)).astype("float32")
    layer = L.PReLU(alpha_initializer="random_uniform", shared_axes=[1, 2])
    y = layer(x).numpy()
    assert [(w.path.split("/")[-1], tuple(w.shape)) for w in layer.weights] == [("alpha", (1, 1, 5))]
    alpha = layer.alpha.numpy()
    np.testing.assert_allclose(y, np.where(x > 0, x, alpha * x), rtol=1e-6)
    full = L.PReLU()
    full.build((None, 3, 4))
    assert tuple(full.alpha.shape) == (3, 4) and not full.alpha.numpy().any()  # Zeros, as Keras
    config = L.PReLU(shared_axes=1).get_config()
    assert config["shared_axes"] == [1]
    assert sorted(config) == ["alpha_constraint", "alpha_initializer", "alpha_regularizer", "dtype", "name",
                              "shared_axes", "trainable"]
    assert L.PReLU.from_config(config).get_config() == config


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_axes_and_mask():
    x = rng.normal(size=(2, 3, 4)).astype("float32")
    np.testing.assert_allclose(L.Softmax()(x).numpy(), _softmax(x, -1), rtol=1e-6)
    np.testing.assert_allclose(L.Softmax(axis=1)(x).numpy(), _softmax(x, 1), rtol=1e-6)
    np.testing.assert_allclose(L.Softmax(axis=(1, 2))(x).numpy(), _softmax(x, (1, 2)), rtol=1e-5)
    mask = np.array([[True, False, True, True]] * 3 + [[False] * 4] * 3).reshape(2, 3, 4)
    y = L.Softmax()(x, mask=mask).numpy()
    expected = _softmax(np.where(mask[0], x[0], -np.inf), -1)
    np.testing.assert_allclose(y[0], expected, rtol=1e-6)
    np.testing.assert_array_equal(y[1], 0.0)  # a fully masked row gives zeros, as Keras
    assert L.Softmax(axis=[1, 2]).get_config()["axis"] == (1, 2)


def test_gradients_match_finite_differences():
    x = np.array([[-2.0, -0.7, 0.3, 1.2, 2.6, 7.0]])
    check_gradients(lambda t: L.ReLU(max_value=6.0, negative_slope=0.2, threshold=0.5, dtype="float64")(t), x)
    check_gradients(lambda t: L.ELU(0.7, dtype="float64")(t), x)
    check_gradients(lambda t: L.Softmax(axis=(0, 1), dtype="float64")(t), x)
    prelu = L.PReLU(alpha_initializer="random_uniform", dtype="float64")
    prelu.build((1, 6))
    check_gradients(lambda t: prelu(t), x)


def test_model_with_activation_layers_trains_and_round_trips(tmp_path):
    tf.random.set_seed(3)
    x = rng.normal(size=(48, 4)).astype("float32")
    y = (x[:, 0] * x[:, 1] > 0).astype("int64")
    model = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(16), L.PReLU(), L.Dense(16), L.LeakyReLU(0.1),
                                 L.Dense(8), L.ELU(), L.Dense(8), L.ReLU(max_value=6.0), L.Dense(2), L.Softmax()])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.8
    path = str(tmp_path / "act.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert [type(layer).__name__ for layer in restored.layers][1:4] == ["PReLU", "Dense", "LeakyReLU"]
