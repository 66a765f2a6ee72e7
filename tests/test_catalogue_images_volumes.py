"""keras.ops.image resize / HSV / crop / pad and the 3D reshaping layers against real Keras 3
(tests/fixtures/keras3/make_catalogue_fixtures.py)."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf

_HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras3")
with open(os.path.join(_HERE, "catalogue_fixtures.json")) as f:
    FIXTURES = json.load(f)


@pytest.mark.parametrize("case", FIXTURES["image_ops"], ids=lambda c: f"{c['op']}-{c['args']}-{c['kwargs']}")
def test_image_ops_match_keras(case):
    images = np.asarray(FIXTURES["images"], np.float32)
    args = [tuple(a) if isinstance(a, list) else a for a in case["args"]]
    result = getattr(tf.keras.ops.image, case["op"])(images, *args, **case["kwargs"])
    np.testing.assert_allclose(np.asarray(result), case["result"], rtol=1e-6, atol=2e-6)


def test_image_op_argument_errors():
    images = np.zeros((1, 4, 4, 3), np.float32)
    with pytest.raises(ValueError, match="exactly two"):
        tf.keras.ops.image.crop_images(images, top_cropping=1)
    with pytest.raises(ValueError, match="do not fit"):
        tf.keras.ops.image.pad_images(images, top_padding=1, target_height=2, left_padding=0, right_padding=0)
    with pytest.raises(ValueError, match="interpolation"):
        tf.keras.ops.image.resize(images, (2, 2), interpolation="cubic-ish")


def test_volumes_model_written_by_keras():
    model = tf.keras.models.load_model(os.path.join(_HERE, "catalogue_volumes.keras"))
    x = np.asarray(FIXTURES["volume_x"], np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), FIXTURES["volume_pred"], rtol=1e-5, atol=1e-6)
    assert [type(layer).__name__ for layer in model.layers][:2] == ["ZeroPadding3D", "Conv3D"]


def test_3d_layers_shapes_gradients_and_round_trip(tmp_path):
    x = tf.constant(np.random.default_rng(0).random((1, 2, 3, 2, 1)).astype("float32"))
    layers = [tf.keras.layers.ZeroPadding3D(((1, 0), (0, 2), 1)), tf.keras.layers.UpSampling3D((2, 1, 3)),
              tf.keras.layers.Cropping3D(((1, 0), (1, 1), (0, 1)))]
    expected = [(1, 3, 5, 4, 1), (1, 4, 3, 6, 1), (1, 1, 1, 1, 1)]
    for layer, shape in zip(layers, expected):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y)
        assert tuple(y.shape) == shape == layer.compute_output_shape(x.shape)
        grad = tape.gradient(loss, x).numpy()
        if isinstance(layer, tf.keras.layers.UpSampling3D):   # each entry copied 6 times: d/dx sum(y^2) = 12 x
            np.testing.assert_allclose(grad, 12 * x.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(layers[0](x).numpy()[0, 1:, :3, 1:3], x.numpy()[0])
    inputs = tf.keras.Input((2, 3, 2, 1))
    model = tf.keras.Model(inputs, layers[2](layers[1](layers[0](inputs))))
    path = str(tmp_path / "v.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    assert loaded.layers[1].get_config() == layers[0].get_config() | {"name": loaded.layers[1].name}


@pytest.mark.parametrize("case", FIXTURES["losses"], ids=lambda c: f"{c['class']}-{c['kwargs']}")
def test_dice_tversky_match_keras(case, tmp_path):
    y_true = np.asarray(FIXTURES["loss_true"], np.float32)
    y_pred = np.asarray(FIXTURES["loss_pred"], np.float32)
    loss = getattr(tf.keras.losses, case["class"])(**case["kwargs"])
    np.testing.assert_allclose(np.asarray(loss(y_true, y_pred)), case["result"], rtol=1e-6, atol=1e-7)
    if case["weighted"] is not None:
        weighted = loss(y_true, y_pred, sample_weight=np.asarray(FIXTURES["loss_weight"], np.float32))
        np.testing.assert_allclose(np.asarray(weighted), case["weighted"], rtol=1e-6)
    config = loss.get_config()
    config.pop("dtype", None)
    assert config == case["config"]
    clone = tf.keras.losses.deserialize(tf.keras.losses.serialize(loss))
    assert type(clone) is type(loss) and clone.get_config() == loss.get_config()


def test_dice_gradient_and_model_file(tmp_path):
    t = tf.constant([[1.0, 0.0, 1.0]])
    p = tf.constant([[0.7, 0.2, 0.4]])
    with tf.GradientTape() as tape:
        tape.watch(p)
        value = tf.keras.losses.dice(t, p)
    # d/dp of 1 - 2 I / S with I = t.p, S = |t| + |p|:  -(2 t S - 2 I) / S^2
    i, s = 0.7 + 0.4, 2.0 + 1.3 + 1e-7
    np.testing.assert_allclose(tape.gradient(value, p).numpy(), [-(2 * np.array([1, 0, 1]) * s - 2 * i) / s ** 2],
                               rtol=1e-5)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(3, activation="sigmoid")])
    model.compile("sgd", loss=tf.keras.losses.Tversky(alpha=0.3, beta=0.7, axis=-1))
    path = str(tmp_path / "t.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert loaded.loss.get_config() == model.loss.get_config()
