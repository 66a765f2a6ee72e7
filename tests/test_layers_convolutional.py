"""Convolution layers: outputs against direct numpy loops, Keras's weights and configs, gradients, fit, files."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients
from layer_reference import conv, conv_transpose, depthwise

L = tf.keras.layers
rng = np.random.default_rng(0)


def _to_last(x):
    return np.moveaxis(x, 1, -1)


def _to_first(x):
    return np.moveaxis(x, -1, 1)


def _run(layer, x):
    y = layer(x).numpy()
    assert y.shape == tuple(layer.compute_output_shape(x.shape))
    return y


@pytest.mark.parametrize("kwargs, shape", [
    (dict(filters=4, kernel_size=3), (2, 6, 5, 3)),
    (dict(filters=4, kernel_size=(3, 2), strides=(2, 1), padding="same"), (2, 7, 6, 3)),
    (dict(filters=6, kernel_size=2, dilation_rate=2, groups=3, padding="same"), (1, 6, 6, 6)),
    (dict(filters=2, kernel_size=3, data_format="channels_first", strides=2), (2, 3, 7, 6)),
])
def test_conv2d_matches_direct_loops(kwargs, shape):
    layer = L.Conv2D(**kwargs, bias_initializer="random_normal", activation="tanh")
    x = rng.normal(size=shape).astype("float32")
    y = _run(layer, x)
    first = kwargs.get("data_format") == "channels_first"
    xl = _to_last(x) if first else x
    ref = conv(xl.astype(np.float64), layer.kernel.numpy().astype(np.float64), layer.strides, layer.padding,
               layer.dilation_rate, layer.groups)
    ref = np.tanh(ref + layer.bias.numpy())
    np.testing.assert_allclose(y, _to_first(ref) if first else ref, rtol=1e-5, atol=1e-5)


def test_conv3d_and_transposed_match_direct_loops():
    x = rng.normal(size=(1, 4, 5, 3, 2)).astype("float32")
    layer = L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), padding="same", bias_initializer="ones")
    y = _run(layer, x)
    ref = conv(x.astype(np.float64), layer.kernel.numpy().astype(np.float64), (1, 2, 1), "same", (1, 1, 1)) + 1
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    for layer, x in [
        (L.Conv1DTranspose(3, 3, strides=2), rng.normal(size=(2, 5, 4))),
        (L.Conv1DTranspose(2, 4, strides=3, padding="same", output_padding=1), rng.normal(size=(1, 4, 2))),
        (L.Conv2DTranspose(3, 3, strides=2, padding="same"), rng.normal(size=(1, 3, 4, 2))),
        (L.Conv2DTranspose(2, (2, 3), strides=(2, 1), dilation_rate=1, output_padding=(1, 0)),
         rng.normal(size=(2, 3, 3, 2))),
    ]:
        x = x.astype("float32")
        y = _run(layer, x)
        ref = conv_transpose(x.astype(np.float64), layer.kernel.numpy().astype(np.float64), layer.strides,
                             layer.padding, layer.output_padding, layer.dilation_rate)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5, err_msg=str(layer.get_config()))


def test_depthwise_and_separable_match_direct_loops():
    x = rng.normal(size=(2, 6, 5, 3)).astype("float32")
    layer = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", strides=2, bias_initializer="ones")
    y = _run(layer, x)
    ref = depthwise(x.astype(np.float64), layer.kernel.numpy().astype(np.float64), (2, 2), "same", (1, 1)) + 1
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)

    layer = L.SeparableConv2D(4, 2, depth_multiplier=2, dilation_rate=2, data_format="channels_first")
    xf = _to_first(x)
    y = _run(layer, xf)
    mid = depthwise(x.astype(np.float64), layer.depthwise_kernel.numpy().astype(np.float64), (1, 1), "valid", (2, 2))
    ref = conv(mid, layer.pointwise_kernel.numpy().astype(np.float64), (1, 1), "valid", (1, 1))
    np.testing.assert_allclose(y, _to_first(ref), rtol=1e-5, atol=1e-5)

    x1 = rng.normal(size=(2, 7, 3)).astype("float32")
    layer = L.SeparableConv1D(2, 3, strides=2, padding="same", bias_initializer="ones")
    y = _run(layer, x1)
    mid = depthwise(x1.astype(np.float64), layer.depthwise_kernel.numpy().astype(np.float64), (2,), "same", (1,))
    ref = conv(mid, layer.pointwise_kernel.numpy().astype(np.float64), (1,), "valid", (1,)) + 1
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_weights_in_keras_order_and_shapes():
    cases = [
        (L.Conv2D(4, 3, groups=2), (1, 5, 5, 6), [("kernel", (3, 3, 3, 4)), ("bias", (4,))]),
        (L.Conv2D(4, 3, data_format="channels_first", use_bias=False), (1, 6, 5, 5), [("kernel", (3, 3, 6, 4))]),
        (L.Conv3D(2, 2), (1, 4, 4, 4, 3), [("kernel", (2, 2, 2, 3, 2)), ("bias", (2,))]),
        (L.Conv1DTranspose(3, 2), (1, 5, 4), [("kernel", (2, 3, 4)), ("bias", (3,))]),
        (L.Conv2DTranspose(3, 2), (1, 5, 5, 4), [("kernel", (2, 2, 3, 4)), ("bias", (3,))]),
        (L.DepthwiseConv2D(3, depth_multiplier=2), (1, 5, 5, 4), [("kernel", (3, 3, 4, 2)), ("bias", (8,))]),
        (L.SeparableConv1D(3, 2, depth_multiplier=2), (1, 5, 4),
         [("depthwise_kernel", (2, 4, 2)), ("pointwise_kernel", (1, 8, 3)), ("bias", (3,))]),
        (L.SeparableConv2D(3, 2), (1, 5, 5, 4),
         [("depthwise_kernel", (2, 2, 4, 1)), ("pointwise_kernel", (1, 1, 4, 3)), ("bias", (3,))]),
    ]
    for layer, shape, expected in cases:
        layer.build(shape)
        got = [(w.path.split("/")[-1], tuple(w.shape)) for w in layer.weights]
        assert got == expected, type(layer).__name__


_CONV_KEYS = ["name", "trainable", "dtype", "filters", "kernel_size", "strides", "padding", "data_format",
              "dilation_rate", "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer",
              "kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
              "bias_constraint"]
_TRANSPOSE_KEYS = [k for k in _CONV_KEYS if k != "groups"] + ["output_padding"]
_DEPTHWISE_KEYS = ["name", "trainable", "dtype", "depth_multiplier", "kernel_size", "strides", "padding",
                   "data_format", "dilation_rate", "activation", "use_bias", "depthwise_initializer",
                   "bias_initializer", "depthwise_regularizer", "bias_regularizer", "activity_regularizer",
                   "depthwise_constraint", "bias_constraint"]
_SEPARABLE_KEYS = _DEPTHWISE_KEYS + ["filters", "pointwise_initializer", "pointwise_regularizer",
                                     "pointwise_constraint"]


@pytest.mark.parametrize("layer, keys", [
    (L.Conv2D(4, 3, strides=2, padding="same", activation="relu", kernel_regularizer="l2"), _CONV_KEYS),
    (L.Conv3D(2, (1, 2, 3), data_format="channels_first", groups=2), _CONV_KEYS),
    (L.Conv1DTranspose(3, 2, strides=2, output_padding=1), _TRANSPOSE_KEYS),
    (L.Conv2DTranspose(3, 2, padding="same", bias_constraint="non_neg"), _TRANSPOSE_KEYS),
    (L.DepthwiseConv2D(3, depth_multiplier=2), _DEPTHWISE_KEYS),
    (L.SeparableConv1D(3, 2, depth_multiplier=3), _SEPARABLE_KEYS),
    (L.SeparableConv2D(3, 2, pointwise_initializer="he_normal"), _SEPARABLE_KEYS),
])
def test_config_round_trip_with_keras_keys(layer, keys):
    config = layer.get_config()
    assert sorted(config) == sorted(keys)
    assert isinstance(config["kernel_size"], tuple) and config["data_format"] in ("channels_last", "channels_first")
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    serialized = tf.keras.layers.serialize(layer)
    assert serialized["module"] == "keras.layers" and serialized["class_name"] == type(layer).__name__
    assert tf.keras.layers.deserialize(serialized).get_config() == config


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        L.Conv2D(3, 3, groups=2)
    with pytest.raises(ValueError, match="dilation_rate > 1"):
        L.Conv2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="output_padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="padding"):
        L.Conv2D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="kernel_size"):
        L.Conv2D(2, (3,))
    with pytest.raises(ValueError, match="filters"):
        L.Conv2D(0, 3)
    with pytest.raises(ValueError, match="groups"):
        L.Conv2D(4, 3, groups=4)(np.zeros((1, 5, 5, 6), "float32"))


def test_gradients_match_finite_differences():
    conv2d = L.Conv2D(2, 2, strides=2, padding="same", groups=2, dtype="float64", activation="tanh")
    conv2d.build((1, 3, 3, 4))
    check_gradients(lambda x: conv2d(x), rng.normal(size=(1, 3, 3, 4)))
    x = tf.constant(rng.normal(size=(1, 3, 3, 4)))
    check_gradients(lambda k: conv2d.convolution_op(x, k), conv2d.kernel.numpy())
    transpose = L.Conv2DTranspose(2, 3, strides=2, padding="same", dtype="float64")
    transpose.build((1, 2, 2, 3))
    check_gradients(lambda x: transpose(x), rng.normal(size=(1, 2, 2, 3)))
    separable = L.SeparableConv1D(2, 2, depth_multiplier=2, dtype="float64")
    separable.build((1, 4, 2))
    check_gradients(lambda x: separable(x), rng.normal(size=(1, 4, 2)))
    depth = L.DepthwiseConv2D(2, dtype="float64", data_format="channels_first")
    depth.build((1, 2, 3, 3))
    check_gradients(lambda x: depth(x), rng.normal(size=(1, 2, 3, 3)))


def _convnet():
    return tf.keras.Sequential([
        tf.keras.Input((8, 8, 2)),
        L.Conv2D(4, 3, padding="same", activation="relu"),
        L.DepthwiseConv2D(3, padding="same"),
        L.SeparableConv2D(4, 2, strides=2),
        L.Conv2DTranspose(3, 2, strides=2),
        L.Conv2D(3, 1),
        L.GlobalAveragePooling2D(),
        L.Dense(2, activation="softmax"),
    ])


def test_convnet_trains_and_round_trips_through_a_keras_file(tmp_path):
    tf.random.set_seed(1)
    x = rng.normal(size=(32, 8, 8, 2)).astype("float32")
    y = (x[..., 0].mean(axis=(1, 2)) > 0).astype("int64")
    model = _convnet()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, epochs=15, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.7
    path = str(tmp_path / "convnet.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert [(w.path.split("/")[-2:], tuple(w.shape)) for w in restored.weights] == \
        [(w.path.split("/")[-2:], tuple(w.shape)) for w in model.weights]


@pytest.mark.parametrize("kwargs", [dict(filters=6, kernel_size=3, groups=3),
                                    dict(filters=4, kernel_size=2, groups=2, padding="causal", dilation_rate=2),
                                    dict(filters=4, kernel_size=3, strides=2, padding="same")])
def test_conv1d_shares_the_convolution_base_groups_included(kwargs):
    layer = L.Conv1D(**kwargs, bias_initializer="random_normal")
    x = rng.normal(size=(2, 9, 6)).astype("float32")
    y = _run(layer, x)
    assert layer.kernel.shape == (layer.kernel_size[0], 6 // layer.groups, layer.filters)
    ref = conv(x.astype(np.float64), layer.kernel.numpy().astype(np.float64), layer.strides, layer.padding,
               layer.dilation_rate, layer.groups) + layer.bias.numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    assert config["groups"] == layer.groups and "activity_regularizer" in config
    assert L.Conv1D.from_config(config).get_config() == config



@pytest.mark.parametrize("layer_class, shape, data_format", [
    (L.Conv1D, (3, 9, 4), "channels_last"), (L.Conv2D, (2, 6, 5, 3), "channels_last"),
    (L.Conv1D, (3, 4, 9), "channels_first")])
def test_relu_layers_give_relu_of_conv_plus_bias_and_its_gradients(layer_class, shape, data_format):
    """A channels-last relu layer adds its bias and applies relu in one fused op: the same numbers."""
    layer = layer_class(5, 3, activation="relu", data_format=data_format, bias_initializer="random_normal")
    layer.build(shape)
    x = tf.constant(rng.normal(size=shape).astype("float32"))
    bias_format = "NCHW" if data_format == "channels_first" else None
    cotangent = tf.constant(rng.normal(size=layer.compute_output_shape(shape)).astype("float32"))

    def composed(x):
        return tf.nn.relu(tf.nn.bias_add(layer.convolution_op(x, layer.kernel), layer.bias, bias_format))
    results = []
    for f in (layer, composed):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        results.append([y] + tape.gradient(y, [x, layer.kernel, layer.bias], output_gradients=cotangent))
    np.testing.assert_array_equal(results[0][0].numpy(), results[1][0].numpy())
    for a, b in zip(results[0][1:], results[1][1:]):     # the bias sums may add in another order
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert 0 < np.count_nonzero(results[0][0].numpy() == 0) < results[0][0].numpy().size
