"""Normalization (adapt on arrays and datasets, given statistics, invert), Rescaling, UnitNormalization and
GroupNormalization: against a model written by real Keras 3 (tests/fixtures/keras3_catalogue) and numpy
implementations of Keras's formulas; gradients against finite differences."""
import io
import os
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn

keras = tf.keras
L = keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_catalogue")


def _fixture(name):
    return os.path.join(FIXTURES, name)


def _weight_paths(keras_file):
    with zipfile.ZipFile(keras_file) as archive:
        data = archive.read("model.weights.h5")
    paths = []
    with h5py.File(io.BytesIO(data), "r") as f:
        f.visititems(lambda name, obj: paths.append((name, obj.shape, str(obj.dtype)))
                     if isinstance(obj, h5py.Dataset) else None)
    return sorted(paths)


def test_keras_normalizing_model_predicts_as_keras_and_saves_keras_weight_layout(tmp_path):
    model = keras.models.load_model(_fixture("normalizing.keras"))
    inputs = [np.load(_fixture("normalizing_x.npy")), np.load(_fixture("normalizing_xgrid.npy"))]
    expected = np.load(_fixture("normalizing_pred.npy"))
    np.testing.assert_allclose(model.predict(inputs, verbose=0), expected, rtol=1e-5, atol=1e-6)
    features = model.get_layer("features")
    assert [w.name for w in features.weights] == ["mean", "variance", "count"]
    assert features.weights[2].dtype == tf.int32
    path = str(tmp_path / "again.keras")
    model.save(path)
    assert _weight_paths(path) == _weight_paths(_fixture("normalizing.keras"))
    np.testing.assert_allclose(keras.models.load_model(path).predict(inputs, verbose=0), expected, rtol=1e-5,
                               atol=1e-6)


def test_adapt_finds_the_statistics_keras_saved():
    saved = keras.models.load_model(_fixture("normalizing.keras"))
    for name, data_file, axis in (("features", "normalizing_adapt.npy", -1), ("grid", "normalizing_gridadapt.npy",
                                                                              (1, 2))):
        layer = L.Normalization(axis=axis)
        layer.adapt(np.load(_fixture(data_file)))
        for ours, theirs in zip(layer.weights[:2], saved.get_layer(name).weights[:2]):
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_adapt_on_datasets_matches_adapt_on_the_array():
    rng = np.random.default_rng(0)
    data = rng.normal(loc=3.0, scale=[1.0, 5.0, 0.1], size=(300, 3)).astype("float32")
    reference = L.Normalization()
    reference.adapt(data)
    mean = data.astype(np.float64).mean(0)
    np.testing.assert_allclose(reference.adapt_mean.numpy(), mean, rtol=1e-6)
    np.testing.assert_allclose(reference.adapt_variance.numpy(), data.astype(np.float64).var(0), rtol=1e-6)
    for dataset in (tf.data.Dataset.from_tensor_slices(data).batch(7),       # uneven batches
                    tf.data.Dataset.from_tensor_slices(data)):               # unbatched rows: batched by 128
        layer = L.Normalization()
        layer.adapt(dataset)
        np.testing.assert_allclose(layer.adapt_mean.numpy(), reference.adapt_mean.numpy(), rtol=1e-6)
        np.testing.assert_allclose(layer.adapt_variance.numpy(), reference.adapt_variance.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="dataset.map"):
        L.Normalization().adapt(tf.data.Dataset.from_tensor_slices((data, data)).batch(4))


def test_adapt_writes_through_assign_and_replaces_earlier_statistics():
    layer = L.Normalization()
    layer.adapt(np.array([[1.0, 2.0], [1.0, 4.0]]))
    mean_variable = layer.adapt_mean
    before = mean_variable.value()             # a snapshot read before the next adapt
    layer.adapt(np.array([[5.0, 6.0], [7.0, 8.0]]))
    assert layer.adapt_mean is mean_variable
    np.testing.assert_array_equal(before.numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(layer.adapt_mean.numpy(), [6.0, 7.0])
    np.testing.assert_array_equal(layer.adapt_variance.numpy(), [1.0, 1.0])
    # Zero variance divides by epsilon (1e-7), as Keras: (2 - 1) / 1e-7.
    layer.adapt(np.array([[1.0, 2.0], [1.0, 4.0]]))
    np.testing.assert_allclose(layer(np.array([[2.0, 2.0]])).numpy(), [[1e7, -1.0]], rtol=1e-6)


def test_normalization_axes_given_statistics_and_invert():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 2, 3, 4)).astype("float32")
    layer = L.Normalization(axis=(1, 2))
    layer.adapt(x)
    assert [tuple(w.shape) for w in layer.weights] == [(2, 3), (2, 3), ()]
    mean, var = x.mean((0, 3), keepdims=True), x.var((0, 3), keepdims=True)
    np.testing.assert_allclose(layer(x).numpy(), (x - mean) / np.sqrt(var), rtol=1e-4, atol=1e-5)

    everything = L.Normalization(axis=None)
    everything.adapt(np.arange(6.0).reshape(2, 3))
    assert tuple(everything.adapt_mean.shape) == ()
    np.testing.assert_allclose(everything(np.ones((2, 3))).numpy(), np.full((2, 3), (1 - 2.5) / np.sqrt(35 / 12)),
                               rtol=1e-6)

    given = L.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0], invert=True)
    np.testing.assert_allclose(given(np.ones((1, 2))).numpy(), [[3.0, 5.0]])
    assert given.weights == []
    scalar = L.Normalization(mean=1.0, variance=4.0)
    np.testing.assert_allclose(scalar(np.full((2, 3), 3.0)).numpy(), np.ones((2, 3)))
    channels = L.Normalization(axis=1, mean=[1.0, 2.0, 3.0], variance=[1.0, 1.0, 1.0])
    np.testing.assert_allclose(channels(np.zeros((1, 3, 2))).numpy()[0, :, 0], [-1.0, -2.0, -3.0])
    assert L.Normalization()(np.array([[1, 2]], "int32")).dtype == tf.float32


def test_normalization_config_round_trip_and_errors():
    layer = L.Normalization(axis=(1, 2), mean=np.array([1.0, 2.0]), variance=np.array([1.0, 4.0]), invert=True)
    config = layer.get_config()
    assert config["axis"] == (1, 2) and config["mean"] == [1.0, 2.0] and config["invert"] is True
    assert L.Normalization.from_config(config).get_config() == config
    assert L.Normalization(axis=None).get_config()["axis"] == ()
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        L.Normalization(mean=1.0)
    with pytest.raises(ValueError, match=r"range \[-ndim, ndim\)"):
        L.Normalization(axis=3)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="known shape"):
        L.Normalization(axis=1)(keras.Input((None, 3)))
    adapted = L.Normalization()
    adapted.adapt(np.ones((4, 3)))
    with pytest.raises(ValueError, match="incompatible shape"):
        adapted.adapt(np.ones((4, 5)))
    with pytest.raises(ValueError, match="no data"):
        L.Normalization().adapt(np.ones((0, 3)))
    with pytest.raises(TypeError, match="numeric"):
        L.Normalization().adapt(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="broadcast"):
        L.Normalization(mean=[1.0, 2.0], variance=[1.0, 1.0])(np.ones((2, 3)))


def test_normalization_gradient_is_one_over_std():
    layer = L.Normalization(mean=[1.0, 2.0], variance=[4.0, 16.0], dtype="float64")
    check_gradients(lambda x: layer(x), np.random.default_rng(2).normal(size=(3, 2)))


def test_rescaling():
    layer = L.Rescaling(1 / 255.0, offset=-1)
    out = layer(np.array([[0, 255, 51]], "uint8"))
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), [[-1.0, 0.0, -0.8]], rtol=1e-6)
    config = layer.get_config()
    assert config["scale"] == 1 / 255.0 and config["offset"] == -1
    per_channel = L.Rescaling(np.array([1.0, 2.0]), offset=[0.0, 1.0])
    np.testing.assert_allclose(per_channel(np.ones((2, 2))).numpy(), [[1.0, 3.0], [1.0, 3.0]])
    assert per_channel.get_config()["scale"] == [1.0, 2.0]
    assert L.Rescaling.from_config(config).get_config() == config


def _group_norm(x, groups, axis, epsilon, gamma, beta):
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    shape = x.shape
    grouped = x.reshape(shape[:-1] + (groups, shape[-1] // groups))
    axes = tuple(range(1, grouped.ndim - 2)) + (grouped.ndim - 1,)
    mean, var = grouped.mean(axes, keepdims=True), grouped.var(axes, keepdims=True)
    out = ((grouped - mean) / np.sqrt(var + epsilon)).reshape(shape) * gamma + beta
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("shape,groups,axis", [((2, 5, 6), 2, -1), ((2, 4, 3, 3), 4, 1), ((3, 8), 1, -1)])
def test_group_normalization_matches_numpy(shape, groups, axis):
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape).astype("float32") * 3 + 1
    layer = L.GroupNormalization(groups=groups, axis=axis, epsilon=0.01)
    layer.build(shape)
    channels = shape[axis]
    gamma, beta = rng.normal(size=channels), rng.normal(size=channels)
    layer.set_weights([gamma.astype("float32"), beta.astype("float32")])
    assert [w.name for w in layer.weights] == ["gamma", "beta"]
    np.testing.assert_allclose(layer(x).numpy(), _group_norm(x, groups, axis, 0.01, gamma, beta), rtol=1e-4,
                               atol=1e-5)


def test_group_normalization_config_errors_and_gradients():
    config = L.GroupNormalization(groups=2, epsilon=0.1, center=False).get_config()
    assert config["groups"] == 2 and config["axis"] == -1 and config["gamma_initializer"]["class_name"] == "Ones"
    assert L.GroupNormalization.from_config(config).get_config() == config
    assert L.GroupNormalization().groups == 32
    with pytest.raises(ValueError, match="must be a multiple"):
        L.GroupNormalization(groups=3)(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="cannot be more than"):
        L.GroupNormalization(groups=8)(np.ones((2, 4)))

    layer = L.GroupNormalization(groups=2, epsilon=0.1, dtype="float64")
    layer.build((2, 3, 4))
    layer.set_weights([np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.1, 0.2, 0.3, 0.4])])
    x = np.random.default_rng(4).normal(size=(2, 3, 4))
    check_gradients(lambda t: layer(t), x)
    check_gradients(vjp_fn(lambda t: layer(t)), x)


def test_unit_normalization():
    x = np.array([[3.0, 4.0], [1e-13, 0.0], [0.0, 0.0]], "float32")
    # Norms below 1e-12 count as 1e-12 (Keras: [1e-13, 0] -> [0.1, 0]; zero stays zero).
    np.testing.assert_allclose(L.UnitNormalization()(x).numpy(), [[0.6, 0.8], [0.1, 0.0], [0.0, 0.0]], rtol=1e-5)
    y = np.random.default_rng(5).normal(size=(2, 3, 4))
    out = L.UnitNormalization(axis=[1, 2], dtype="float64")(y).numpy()
    np.testing.assert_allclose(out, y / np.sqrt((y ** 2).sum((1, 2), keepdims=True)), rtol=1e-12)
    assert L.UnitNormalization(axis=(1, 2)).get_config()["axis"] == [1, 2]
    with pytest.raises(ValueError, match="Invalid axis"):
        L.UnitNormalization(axis=2)(np.ones((2, 3)))
    layer = L.UnitNormalization(dtype="float64")
    check_gradients(lambda t: layer(t), y[:, 0])
    check_gradients(vjp_fn(lambda t: layer(t)), y[:, 0])
