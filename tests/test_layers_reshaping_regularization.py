"""Reshaping and noise layers: numpy equivalents, Keras configs, training-only randomness, gradients, files."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients

L = tf.keras.layers
rng = np.random.default_rng(3)
X = rng.normal(size=(2, 4, 5, 3)).astype("float32")


def test_reshaping_layers_match_numpy():
    x1 = X[..., 0]
    cases = [
        (L.ZeroPadding1D((1, 2)), x1, np.pad(x1, [(0, 0), (1, 2), (0, 0)])),
        (L.ZeroPadding1D(1, data_format="channels_first"), x1, np.pad(x1, [(0, 0), (0, 0), (1, 1)])),
        (L.ZeroPadding2D(((1, 2), (0, 3))), X, np.pad(X, [(0, 0), (1, 2), (0, 3), (0, 0)])),
        (L.ZeroPadding2D(2, data_format="channels_first"), X, np.pad(X, [(0, 0), (0, 0), (2, 2), (2, 2)])),
        (L.Cropping1D((1, 2)), x1, x1[:, 1:2]),
        (L.Cropping2D(((1, 0), (1, 2))), X, X[:, 1:, 1:3]),
        (L.Cropping2D(1, data_format="channels_first"), X, X[:, :, 1:-1, 1:-1]),
        (L.UpSampling1D(3), x1, np.repeat(x1, 3, axis=1)),
        (L.UpSampling2D((2, 3)), X, np.repeat(np.repeat(X, 2, axis=1), 3, axis=2)),
        (L.UpSampling2D(2, data_format="channels_first"), X, np.repeat(np.repeat(X, 2, axis=2), 2, axis=3)),
        (L.Permute((3, 1, 2)), X, X.transpose(0, 3, 1, 2)),
        (L.RepeatVector(3), X[:, 0, 0], np.repeat(X[:, None, 0, 0], 3, axis=1)),
        (L.Identity(), X, X),
    ]
    for layer, x, expected in cases:
        y = layer(x).numpy()
        np.testing.assert_array_equal(y, expected, err_msg=type(layer).__name__)
        assert y.shape == tuple(layer.compute_output_shape(x.shape)), type(layer).__name__
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config


def test_configs_have_keras_keys_and_forms():
    base = ["dtype", "name", "trainable"]
    assert L.ZeroPadding1D().get_config()["padding"] == (1, 1)
    assert L.ZeroPadding2D().get_config()["padding"] == ((1, 1), (1, 1))
    assert L.Cropping2D(2).get_config()["cropping"] == ((2, 2), (2, 2))
    assert sorted(L.UpSampling2D().get_config()) == sorted(base + ["data_format", "interpolation", "size"])
    assert sorted(L.Identity().get_config()) == base
    assert sorted(L.AlphaDropout(0.1).get_config()) == sorted(base + ["rate", "seed", "noise_shape"])
    assert sorted(L.ActivityRegularization(0.1).get_config()) == sorted(base + ["l1", "l2"])
    assert L.SpatialDropout2D(0.5, seed=3).get_config() == {
        "rate": 0.5, "seed": 3, "name": "spatial_dropout2d", "dtype": "float32", "data_format": "channels_last"}
    assert L.SpatialDropout1D(0.5, name="s").get_config() == {"rate": 0.5, "seed": None, "name": "s",
                                                               "dtype": "float32"}
    with pytest.raises(ValueError, match="consecutive"):
        L.Permute((1, 1))
    with pytest.raises(ValueError, match="rate"):
        L.SpatialDropout1D(1.5)
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="gaussian")   # bilinear, bicubic, area are supported


def test_noise_layers_are_identity_at_inference_and_random_in_training():
    for layer in (L.SpatialDropout1D(0.5), L.SpatialDropout2D(0.5), L.GaussianNoise(0.5), L.GaussianDropout(0.5),
                  L.AlphaDropout(0.5)):
        x = X[..., 0] if isinstance(layer, L.SpatialDropout1D) else X
        np.testing.assert_array_equal(layer(x).numpy(), x)
        assert not np.array_equal(layer(x, training=True).numpy(), x), type(layer).__name__


def test_spatial_dropout_drops_whole_channels():
    y = L.SpatialDropout2D(0.5, seed=4)(X, training=True).numpy()
    for b in range(2):
        for c in range(3):
            channel = y[b, :, :, c]
            assert np.array_equal(channel, 0 * channel) or np.allclose(channel, 2 * X[b, :, :, c])
    y = L.SpatialDropout2D(0.5, data_format="channels_first", seed=4)(X, training=True).numpy()
    for b in range(2):
        for c in range(4):
            assert not y[b, c].any() or np.allclose(y[b, c], 2 * X[b, c])


def test_seeded_noise_is_reproducible():
    for make in (lambda: L.GaussianNoise(0.3, seed=7), lambda: L.GaussianDropout(0.3, seed=7),
                 lambda: L.AlphaDropout(0.3, seed=7)):
        tf.random.set_seed(1)
        first = make()(X, training=True).numpy()
        tf.random.set_seed(1)
        np.testing.assert_array_equal(make()(X, training=True).numpy(), first)


def test_noise_statistics():
    x = np.ones((200, 500), "float32")
    noisy = L.GaussianNoise(0.5, seed=1)(x, training=True).numpy() - 1
    assert abs(noisy.mean()) < 0.01 and abs(noisy.std() - 0.5) < 0.01
    dropped = L.GaussianDropout(0.2, seed=1)(x, training=True).numpy()
    assert abs(dropped.mean() - 1) < 0.01 and abs(dropped.std() - 0.5) < 0.01  # sqrt(0.2 / 0.8)
    z = rng.normal(size=(400, 500)).astype("float32")
    alpha = L.AlphaDropout(0.2, seed=1)(z, training=True).numpy()
    assert abs(alpha.mean()) < 0.02 and abs(alpha.std() - 1) < 0.02  # keeps zero mean, unit variance
    scale, a_ = 1.0507009873554805, 1.6732632423543772
    alpha_p = -a_ * scale
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * 0.2
    kept = np.isclose(alpha, a * z + b, atol=1e-5)
    assert abs(kept.mean() - 0.8) < 0.01
    np.testing.assert_allclose(alpha[~kept], a * alpha_p + b, rtol=1e-5)


def test_activity_regularization_adds_its_penalty():
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    y = layer(X)
    np.testing.assert_array_equal(y.numpy(), X)
    (loss,) = layer.losses
    np.testing.assert_allclose(float(loss), 0.1 * np.abs(X).sum() + 0.01 * (X ** 2).sum(), rtol=1e-5)


def test_gradients_match_finite_differences():
    x = rng.normal(size=(1, 3, 4, 2))
    for layer in (L.ZeroPadding2D(((1, 0), (2, 1)), dtype="float64"), L.Cropping2D(((1, 0), (1, 2)), dtype="float64"),
                  L.UpSampling2D((2, 1), dtype="float64"), L.Permute((2, 3, 1), dtype="float64")):
        check_gradients(lambda t: layer(t), x)
    check_gradients(lambda t: L.RepeatVector(2, dtype="float64")(t), x[:, 0, 0])
    check_gradients(lambda t: L.GaussianDropout(0.3, seed=2, dtype="float64")(t, training=False), x)


def test_model_with_reshaping_and_noise_layers_trains_and_round_trips(tmp_path):
    tf.random.set_seed(4)
    x = rng.normal(size=(32, 6, 2)).astype("float32")
    y = (x[:, :, 0].sum(axis=1) > 0).astype("int64")
    model = tf.keras.Sequential([
        tf.keras.Input((6, 2)), L.ZeroPadding1D(1), L.GaussianNoise(0.05, seed=1), L.Cropping1D((1, 0)),
        L.UpSampling1D(2), L.SpatialDropout1D(0.1, seed=2), L.Permute((2, 1)), L.Flatten(), L.Dense(8, "selu"),
        L.AlphaDropout(0.05, seed=3), L.GaussianDropout(0.05, seed=4), L.ActivityRegularization(l2=1e-4),
        L.RepeatVector(2), L.Flatten(), L.Identity(), L.Dense(2, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, epochs=15, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.8
    path = str(tmp_path / "shapes.keras")
    model.save(path)
    np.testing.assert_array_equal(tf.keras.models.load_model(path).predict(x, verbose=0), model.predict(x, verbose=0))
