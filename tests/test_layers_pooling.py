"""Pooling layers: outputs against numpy windows, Keras's defaults and configs, gradients, masks."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients
from layer_reference import pool

L = tf.keras.layers
rng = np.random.default_rng(1)


@pytest.mark.parametrize("cls, kind, kwargs, shape", [
    (L.MaxPooling2D, "max", {}, (2, 5, 7, 3)),
    (L.MaxPooling2D, "max", dict(pool_size=3, strides=(2, 1), padding="same"), (1, 6, 5, 2)),
    (L.AveragePooling2D, "avg", dict(pool_size=(2, 3), padding="same"), (2, 5, 7, 3)),
    (L.AveragePooling2D, "avg", dict(pool_size=2, data_format="channels_first"), (2, 3, 4, 6)),
    (L.MaxPooling1D, "max", dict(pool_size=3, strides=1), (2, 7, 3)),
    (L.AveragePooling1D, "avg", dict(pool_size=3, padding="same"), (2, 7, 3)),
])
def test_window_pooling_matches_numpy(cls, kind, kwargs, shape):
    layer = cls(**kwargs)
    x = rng.normal(size=shape).astype("float32")
    y = layer(x).numpy()
    assert y.shape == layer.compute_output_shape(shape)
    first = layer.data_format == "channels_first"
    xl = np.moveaxis(x, 1, -1) if first else x
    ref = pool(xl.astype(np.float64), layer.pool_size, layer.strides, layer.padding, kind)
    np.testing.assert_allclose(y, np.moveaxis(ref, -1, 1) if first else ref, rtol=1e-6, atol=1e-6)


def test_defaults_and_configs_are_keras():
    assert L.MaxPooling2D().get_config()["pool_size"] == (2, 2)
    assert L.MaxPooling1D(strides=None).strides == (2,)  # strides default to pool_size
    config = L.AveragePooling2D(3, strides=1).get_config()
    assert sorted(config) == ["data_format", "dtype", "name", "padding", "pool_size", "strides", "trainable"]
    assert config["strides"] == (1, 1) and config["padding"] == "valid"
    with pytest.raises(TypeError):
        L.AveragePooling1D()  # pool_size is required, as in Keras 3
    for cls in (L.GlobalMaxPooling1D, L.GlobalMaxPooling2D, L.GlobalAveragePooling1D, L.GlobalAveragePooling2D):
        config = cls(keepdims=True).get_config()
        assert sorted(config) == ["data_format", "dtype", "keepdims", "name", "trainable"]
        assert cls.from_config(config).get_config() == config
    layer = L.MaxPooling2D(3, strides=2, padding="same", data_format="channels_first")
    assert L.MaxPooling2D.from_config(layer.get_config()).get_config() == layer.get_config()
    with pytest.raises(ValueError, match="padding"):
        L.MaxPooling1D(padding="full")


def test_global_pooling_and_keepdims():
    x = rng.normal(size=(2, 4, 5, 3)).astype("float32")
    np.testing.assert_allclose(L.GlobalAveragePooling2D()(x).numpy(), x.mean(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_array_equal(L.GlobalMaxPooling2D(keepdims=True)(x).numpy(), x.max(axis=(1, 2), keepdims=True))
    np.testing.assert_array_equal(L.GlobalMaxPooling2D(data_format="channels_first")(x).numpy(), x.max(axis=(2, 3)))
    x1 = x[:, :, :, 0]
    np.testing.assert_allclose(L.GlobalAveragePooling1D(data_format="channels_first", keepdims=True)(x1).numpy(),
                               x1.mean(axis=2, keepdims=True), rtol=1e-6)
    assert L.GlobalMaxPooling1D(keepdims=True).compute_output_shape((None, 4, 5)) == (None, 1, 5)


def test_global_average_pooling1d_mask_averages_unmasked_steps():
    x = rng.normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[True, False, True, True], [False, False, True, False]])
    y = L.GlobalAveragePooling1D()(x, mask=mask).numpy()
    np.testing.assert_allclose(y[0], x[0, [0, 2, 3]].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(y[1], x[1, 2], rtol=1e-6)


def test_gradients_match_finite_differences():
    x = rng.permutation(48).reshape(1, 4, 4, 3) / 10.0  # distinct values: the maxima are unambiguous
    check_gradients(lambda t: L.MaxPooling2D(3, strides=1, padding="same", dtype="float64")(t), x)
    check_gradients(lambda t: L.AveragePooling2D(3, strides=2, padding="same", dtype="float64")(t), x)
    check_gradients(lambda t: L.GlobalAveragePooling2D(dtype="float64")(t), x)
    check_gradients(lambda t: L.GlobalMaxPooling1D(dtype="float64")(t), x[:, 0])


def test_pooling_model_trains_and_round_trips(tmp_path):
    tf.random.set_seed(2)
    x = rng.normal(size=(32, 8, 3)).astype("float32")
    y = (x[:, :, 0].max(axis=1) > 1.0).astype("int64")
    model = tf.keras.Sequential([tf.keras.Input((8, 3)), tf.keras.layers.Conv1D(4, 3, padding="same"),
                                 L.MaxPooling1D(), L.AveragePooling1D(2, padding="same"), L.GlobalMaxPooling1D(),
                                 L.Dense(2, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, epochs=15, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.8
    path = str(tmp_path / "pool.keras")
    model.save(path)
    np.testing.assert_array_equal(tf.keras.models.load_model(path).predict(x, verbose=0), model.predict(x, verbose=0))
