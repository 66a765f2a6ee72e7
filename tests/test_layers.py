"""The Layer base class and the core layers: outputs and gradients for given weights
against numpy formulas, tracking, naming, freezing, configs and errors."""
import json

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
rng = np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def fresh_session():
    K.backend.clear_session()
    yield


def grads_of(fn, *sources):
    with tf.GradientTape() as tape:
        for s in sources:
            if isinstance(s, tf.Tensor):
                tape.watch(s)
        out = fn()
    return out, tape.gradient(out, list(sources))


# ------------------------------------------------------------------ Dense ---
def test_dense_forward_and_gradients_match_numpy():
    x = rng.standard_normal((6, 4)).astype(np.float32)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    w_out = rng.standard_normal((6, 3)).astype(np.float32)
    layer = K.layers.Dense(3, activation="relu")
    layer.build((None, 4))
    layer.set_weights([W, b])
    xt = tf.constant(x)
    loss, (gx, gW, gb) = grads_of(lambda: tf.reduce_sum(layer(xt) * w_out), xt, layer.kernel, layer.bias)
    z = x @ W + b
    y = np.maximum(z, 0)
    assert np.allclose(layer(x).numpy(), y, atol=1e-6)
    dz = w_out * (z > 0)
    assert np.allclose(float(loss), np.sum(y * w_out), rtol=1e-5)
    assert np.allclose(gx.numpy(), dz @ W.T, atol=1e-5)
    assert np.allclose(gW.numpy(), x.T @ dz, atol=1e-5)
    assert np.allclose(gb.numpy(), dz.sum(0), atol=1e-5)


def test_dense_contracts_the_last_axis_of_rank3_inputs():
    layer = K.layers.Dense(2, use_bias=False)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    y = layer(x)
    assert y.shape == (2, 5, 2)
    assert np.allclose(y.numpy(), x @ layer.kernel.numpy(), atol=1e-6)
    assert [w.name for w in layer.weights] == ["kernel"]
    assert layer.compute_output_shape((None, 5, 3)) == (None, 5, 2)


ACTIVATIONS = {
    "relu": lambda z: np.maximum(z, 0),
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
    "tanh": np.tanh,
    "softmax": lambda z: np.exp(z) / np.exp(z).sum(-1, keepdims=True),
    "elu": lambda z: np.where(z > 0, z, np.expm1(z)),
    "selu": lambda z: 1.0507009873554805 * np.where(z > 0, z, 1.6732632423543772 * np.expm1(z)),
    "gelu": lambda z: 0.5 * z * (1 + np.vectorize(__import__("math").erf)(z / np.sqrt(2))),
    "softplus": lambda z: np.log1p(np.exp(z)),
    "swish": lambda z: z / (1 + np.exp(-z)),
    "silu": lambda z: z / (1 + np.exp(-z)),
    "leaky_relu": lambda z: np.where(z > 0, z, 0.2 * z),
    "linear": lambda z: z,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_strings_match_numpy(name):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    layer = K.layers.Dense(3, activation=name, use_bias=False)
    layer.build((None, 4))
    layer.set_weights([W])
    expected = ACTIVATIONS[name](x.astype(np.float64) @ W)
    assert np.allclose(layer(x).numpy(), expected, atol=1e-5)
    assert np.allclose(K.layers.Activation(name)(x @ W).numpy(), expected, atol=1e-5)
    # swish is silu's alias, and serializes under the canonical name, as in Keras 3
    assert layer.get_config()["activation"] == ("silu" if name == "swish" else name)


def test_activation_functions_from_tf_nn_serialize_by_name():
    assert K.layers.Dense(2, activation=tf.nn.relu).get_config()["activation"] == "relu"
    assert K.activations.get("swish") is K.activations.silu
    assert K.activations.get(None) is K.activations.linear


def test_unknown_activation_string_is_a_clear_error():
    with pytest.raises(ValueError, match="Could not interpret activation function identifier: relux"):
        K.layers.Dense(3, activation="relux")


def test_invalid_units_and_unknown_kwargs_are_rejected():
    with pytest.raises(ValueError, match="units"):
        K.layers.Dense(0)
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense: {'kernal_size': 3}"):
        K.layers.Dense(2, kernal_size=3)


def test_wrong_input_shape_to_a_built_layer():
    layer = K.layers.Dense(3)
    layer(np.ones((2, 4), np.float32))
    before = layer.get_weights()
    with pytest.raises(ValueError, match='Input 0 of layer "dense" is incompatible with the layer: expected axis -1 '
                                         r"of input shape to have value 4, but received input with shape \(2, 5\)"):
        layer(np.ones((2, 5), np.float32))
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        layer(np.ones(4, np.float32))
    for a, b in zip(before, layer.get_weights()):
        assert np.array_equal(a, b)


# ----------------------------------------------------------- Layer base ---
def test_names_are_unique_per_session():
    names = [K.layers.Dense(1).name for _ in range(3)] + [K.layers.BatchNormalization().name]
    assert names == ["dense", "dense_1", "dense_2", "batch_normalization"]
    K.backend.clear_session()
    assert K.layers.Dense(1).name == "dense"
    assert K.layers.Dense(1, name="head").name == "head"
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        K.layers.Dense(1, name="a/b")


class Scale(K.layers.Layer):
    """A custom layer: a trainable weight, then a non-trainable counter, then a sub-layer."""

    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.inner = K.layers.Dense(units)

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False, name="count")

    def call(self, x):
        self.count.assign_add(1.0)
        return self.inner(x * self.w)


def test_weights_order_own_trainable_then_own_non_trainable_then_sublayers():
    layer = Scale(name="scale")
    layer(np.ones((2, 3), np.float32))
    assert [v.name for v in layer.weights] == ["w", "count", "kernel", "bias"]
    assert [v.name for v in layer.trainable_weights] == ["w", "kernel", "bias"]
    assert [v.name for v in layer.non_trainable_weights] == ["count"]
    assert [v.path for v in layer.weights] == ["scale/w", "scale/count", "scale/dense/kernel", "scale/dense/bias"]
    assert layer.built and layer.inner.built
    assert float(layer.count.numpy()) == 1.0
    assert layer.count_params() == 3 + 1 + 3 * 2 + 2


def test_sublayers_in_lists_and_dicts_are_tracked():
    class Block(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.stack = [K.layers.Dense(2), K.layers.Dense(2)]
            self.heads = {"a": K.layers.Dense(1)}
            self.stack.append(K.layers.Dense(2))

        def call(self, x):
            for layer in self.stack:
                x = layer(x)
            return self.heads["a"](x)
    block = Block()
    block(np.ones((1, 2), np.float32))
    assert len(block.weights) == 8
    assert [v.path for v in block.weights][-2:] == ["block/dense_3/kernel", "block/dense_3/bias"]


def test_state_is_locked_after_build():
    class Late(K.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(1,), name="w")

        def call(self, x):
            self.v = self.add_weight(shape=(1,), name="v")
            return x
    with pytest.raises(ValueError, match="You cannot add new elements of state"):
        Late()(np.ones((1, 1), np.float32))


def test_add_weight_with_a_positional_name_is_rejected():
    layer = K.layers.Layer()
    with pytest.raises(ValueError, match="name='w'"):
        layer.add_weight("w", shape=(2,))


def test_freezing_a_layer():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2), K.layers.BatchNormalization()])
    dense, bn = model.layers
    dense.trainable = False
    assert [v.name for v in model.trainable_weights] == ["gamma", "beta"]
    assert dense.trainable_weights == [] and len(dense.non_trainable_weights) == 2
    assert not dense.kernel.trainable
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(np.ones((4, 3), np.float32), training=True))
    assert [v.name for v in tape.watched_variables()] == ["gamma", "beta"]
    model.trainable = False
    assert model.trainable_weights == [] and len(model.non_trainable_weights) == 6
    model.trainable = True
    assert len(model.trainable_weights) == 4


def test_get_and_set_weights():
    layer = K.layers.Dense(2)
    layer.build((None, 3))
    W = np.arange(6, dtype=np.float32).reshape(3, 2)
    layer.set_weights([W, np.array([1, 2], np.float32)])
    assert np.array_equal(layer.get_weights()[0], W)
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was expecting 2 weights"):
        layer.set_weights([W])
    with pytest.raises(ValueError, match=r"weight shape \(3, 2\) is not compatible with provided weight shape "
                                         r"\(2, 3\)"):
        layer.set_weights([W.T, np.zeros(2, np.float32)])
    assert np.array_equal(layer.get_weights()[1], [1, 2])


def test_variables_have_keras_names_and_paths_and_are_tapeflow_variables():
    layer = K.layers.Dense(2, name="d")
    layer.build((None, 3))
    assert isinstance(layer.kernel, tf.Variable)
    assert layer.kernel.name == "kernel" and layer.kernel.path == "d/kernel"
    assert layer.kernel.trainable
    layer.kernel.trainable = False
    assert layer.trainable_weights == [layer.bias]


def test_training_flag_reaches_inner_layers_through_the_call_context():
    seen = []

    class Probe(K.layers.Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    class Outer(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.probe = Probe()

        def call(self, x):  # no training argument: the flag still reaches the probe
            return self.probe(x)
    outer = Outer()
    outer(np.ones((1, 1), np.float32), training=True)
    outer(np.ones((1, 1), np.float32))
    outer(np.ones((1, 1), np.float32), training=False)
    assert seen == [True, None, False]


def test_auto_generated_config_and_round_trip():
    class NoCfg(K.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units

        def call(self, x):
            return x
    assert NoCfg(5).get_config() == {"units": 5, "trainable": True, "dtype": {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}}
    layer = Scale(units=3, name="s")
    config = layer.get_config()
    assert config["units"] == 3 and config["name"] == "s"
    clone = Scale.from_config(config)
    assert clone.units == 3 and clone.name == "s"


@pytest.mark.parametrize("make", [
    lambda: K.layers.Dense(4, activation="tanh", kernel_regularizer=K.regularizers.L2(0.01), use_bias=False),
    lambda: K.layers.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False),
    lambda: K.layers.Dropout(0.3, seed=1),
    lambda: K.layers.Activation("softmax"),
    lambda: K.layers.Flatten(),
    lambda: K.layers.Reshape((3, 2)),
    lambda: K.layers.LayerNormalization(epsilon=1e-4),
    lambda: K.layers.Embedding(10, 3),
])
def test_layer_config_round_trip_gives_the_same_layer(make):
    layer = make()
    x = (rng.integers(0, 10, (4, 6)) if isinstance(layer, K.layers.Embedding)
         else rng.standard_normal((4, 6)).astype(np.float32))
    y = layer(x)
    config = json.loads(json.dumps(layer.get_config()))
    clone = type(layer).from_config(config)
    assert clone.get_config() == layer.get_config()
    clone.build_from_config(layer.get_build_config())
    clone.set_weights(layer.get_weights())
    assert np.allclose(clone(x).numpy(), y.numpy(), atol=1e-6)


def test_dense_config_matches_keras_fields():
    config = K.layers.Dense(8, activation="relu", name="dense").get_config()
    assert list(config) == ["name", "trainable", "dtype", "units", "activation", "use_bias", "kernel_initializer",
                            "bias_initializer", "kernel_regularizer", "bias_regularizer", "kernel_constraint",
                            "bias_constraint", "quantization_config"]
    assert config["kernel_initializer"] == {"module": "keras.initializers", "class_name": "GlorotUniform",
                                            "config": {"seed": None, "input_axes": None, "output_axes": None},
                                            "registered_name": None}
    assert config["bias_initializer"] == {"module": "keras.initializers", "class_name": "Zeros", "config": {},
                                          "registered_name": None}


def test_build_config_and_own_variables_store():
    layer = K.layers.Dense(3)
    layer(np.ones((2, 4), np.float32))
    assert layer.get_build_config() == {"input_shape": [2, 4]}
    store = {}
    layer.save_own_variables(store)
    assert sorted(store) == ["0", "1"] and store["0"].shape == (4, 3)
    other = K.layers.Dense(3)
    other.build_from_config(layer.get_build_config())
    other.load_own_variables(store)
    assert np.array_equal(other.kernel.numpy(), layer.kernel.numpy())
    with pytest.raises(ValueError, match="expected 2 variables, but received 1 variables during loading"):
        other.load_own_variables({"0": store["0"]})
    with pytest.raises(ValueError, match="was never built"):
        K.layers.Dense(3).load_own_variables(store)


def test_float64_dtype_policy():
    layer = K.layers.Dense(2, dtype="float64")
    y = layer(np.ones((1, 3), np.float32))
    assert layer.kernel.dtype == tf.float64 and y.dtype == tf.float64
    assert layer.get_config()["dtype"]["config"]["name"] == "float64"


# ------------------------------------------------------------- Dropout ---
def test_dropout_training_and_inference():
    layer = K.layers.Dropout(0.25, seed=3)
    x = np.ones((200, 50), np.float32)
    assert np.array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    assert np.allclose(y[kept], 1 / 0.75)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = layer(xt, training=True)
    grad = tape.gradient(out, xt).numpy()
    assert np.array_equal(grad != 0, out.numpy() != 0)
    assert np.array_equal(K.layers.Dropout(1.0)(x, training=True).numpy(), np.zeros_like(x))
    with pytest.raises(ValueError, match="rate"):
        K.layers.Dropout(1.5)


def test_dropout_seed_gives_reproducible_masks_and_noise_shape_broadcasts():
    def masks():
        tf.random.set_seed(0)  # restarts every seed's stream, as in a fresh run
        layer = K.layers.Dropout(0.5, seed=7)
        return [layer(np.ones((4, 6), np.float32), training=True).numpy() for _ in range(2)]
    first, second = masks(), masks()
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])  # each call draws a new mask
    c = K.layers.Dropout(0.5, noise_shape=(None, 1), seed=2)(np.ones((8, 5), np.float32), training=True).numpy()
    assert all(len(set(row)) == 1 for row in c)


# ------------------------------------------------- reshaping and merging ---
def test_flatten_and_reshape():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    assert np.array_equal(K.layers.Flatten()(x).numpy(), x.reshape(2, 12))
    assert np.array_equal(K.layers.Reshape((4, -1))(x).numpy(), x.reshape(2, 4, 3))
    assert K.layers.Reshape((4, -1)).compute_output_shape((None, 3, 4)) == (None, 4, 3)
    assert K.layers.Flatten().compute_output_shape((None, 3, 4)) == (None, 12)
    with pytest.raises(ValueError, match="total size"):
        K.layers.Reshape((5,))(x)


def test_add_and_concatenate_forward_and_gradients():
    a = tf.constant(rng.standard_normal((2, 3)).astype(np.float32))
    b = tf.constant(rng.standard_normal((2, 3)).astype(np.float32))
    w = rng.standard_normal((2, 6)).astype(np.float32)
    out, (ga, gb) = grads_of(lambda: tf.reduce_sum(K.layers.Concatenate()([K.layers.Add()([a, b]), a]) * w), a, b)
    assert np.allclose(float(out), np.sum(np.concatenate([a.numpy() + b.numpy(), a.numpy()], 1) * w), rtol=1e-5)
    assert np.allclose(ga.numpy(), w[:, :3] + w[:, 3:], atol=1e-6)
    assert np.allclose(gb.numpy(), w[:, :3], atol=1e-6)
    assert np.allclose(K.layers.Multiply()([a, b]).numpy(), a.numpy() * b.numpy())
    assert np.allclose(K.layers.Average()([a, b]).numpy(), (a.numpy() + b.numpy()) / 2)
    with pytest.raises(ValueError, match="list of inputs"):
        K.layers.Add()(a)


# -------------------------------------------------- LayerNorm, Embedding ---
def test_layer_normalization_matches_numpy_and_finite_differences():
    x = rng.standard_normal((3, 5)).astype(np.float64)
    layer = K.layers.LayerNormalization(dtype="float64")
    layer.build((None, 5))
    gamma, beta = rng.standard_normal(5), rng.standard_normal(5)
    layer.set_weights([gamma, beta])

    def numpy_ln(v):
        return (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-3) * gamma + beta
    assert np.allclose(layer(x).numpy(), numpy_ln(x), atol=1e-10)
    w = rng.standard_normal((3, 5))
    xt = tf.constant(x)
    _, (gx,) = grads_of(lambda: tf.reduce_sum(layer(xt) * w), xt)
    eps = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        numeric[idx] = (np.sum(numpy_ln(x + e) * w) - np.sum(numpy_ln(x - e) * w)) / (2 * eps)
    assert np.allclose(gx.numpy(), numeric, atol=1e-6)


def test_embedding_lookup_and_gradient_accumulates_repeated_rows():
    layer = K.layers.Embedding(5, 2)
    ids = np.array([[0, 3, 3], [4, 0, 3]])
    table = layer(ids)
    assert table.shape == (2, 3, 2)
    assert np.array_equal(table.numpy(), layer.embeddings.numpy()[ids])
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(layer(ids))
    grad = tf.convert_to_tensor(tape.gradient(out, layer.embeddings)).numpy()
    assert np.array_equal(grad[:, 0], [2, 0, 0, 3, 1])
    assert np.all(np.abs(layer.embeddings.numpy()) <= 0.05)


# --------------------------------------------------------- initializers ---
def test_seeded_initializers_repeat_and_have_the_right_scale():
    init = K.initializers.GlorotUniform(seed=3)
    a, b = init((400, 300)), init((400, 300))
    assert np.array_equal(a, b) and a.dtype == np.float32
    limit = np.sqrt(6 / 700)
    assert a.max() <= limit and a.min() >= -limit and abs(a.std() - limit / np.sqrt(3)) < 1e-3
    he = K.initializers.HeNormal(seed=1)((500, 400))
    assert abs(he.std() - np.sqrt(2 / 500)) < 2e-3 and np.abs(he).max() <= 2 * np.sqrt(2 / 500) / 0.8796 + 1e-6
    q = K.initializers.Orthogonal(seed=0)((6, 4))
    assert np.allclose(q.T @ q, np.eye(4), atol=1e-5)
    assert np.array_equal(K.initializers.Constant(2.5)((2,)), [2.5, 2.5])
    assert K.initializers.get("he_uniform").get_config()["seed"] is None
    with pytest.raises(ValueError, match="Could not interpret initializer identifier: glorot"):
        K.initializers.get("glorot")


def test_set_random_seed_makes_model_initialisation_reproducible():
    def weights():
        K.utils.set_random_seed(42)
        K.backend.clear_session()
        model = K.Sequential([K.Input((3,)), K.layers.Dense(4), K.layers.Dense(2)])
        return model.get_weights()
    for a, b in zip(weights(), weights()):
        assert np.array_equal(a, b)


# ---------------------------------------------------------- regularizers ---
def test_kernel_regularizer_penalty_is_in_losses_and_in_the_gradient():
    layer = K.layers.Dense(2, kernel_regularizer=K.regularizers.L2(0.1), bias_regularizer="l1")
    layer.build((None, 3))
    W = layer.kernel.numpy()
    layer.bias.assign([1.0, -2.0])
    penalties = [float(p) for p in layer.losses]
    assert np.allclose(penalties, [0.1 * np.sum(W ** 2), 0.01 * 3.0], rtol=1e-5)
    with tf.GradientTape() as tape:
        total = tf.add_n(layer.losses)
    gW, gb = tape.gradient(total, [layer.kernel, layer.bias])
    assert np.allclose(gW.numpy(), 0.2 * W, atol=1e-6)
    assert np.allclose(gb.numpy(), [0.01, -0.01], atol=1e-7)
    assert K.regularizers.get("l1_l2").get_config() == {"l1": 0.0, "l2": 0.0}


def test_activity_regularizer_and_add_loss_are_cleared_each_call():
    layer = K.layers.Dense(1, activity_regularizer=K.regularizers.L1(1.0), kernel_initializer="ones",
                           bias_initializer="zeros")
    layer(np.ones((2, 3), np.float32))
    assert len(layer.losses) == 1 and np.isclose(float(layer.losses[0]), 6.0)
    layer(np.ones((1, 3), np.float32))
    assert len(layer.losses) == 1 and np.isclose(float(layer.losses[0]), 3.0)


def test_layers_appended_to_an_empty_list_attribute_are_tracked():
    class Grow(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = []
            for _ in range(2):
                self.blocks.append(K.layers.Dense(2))

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return x
    layer = Grow()
    layer(np.ones((1, 3), np.float32))
    assert [v.shape for v in layer.weights] == [(3, 2), (2,), (2, 2), (2,)]


def numpy_conv1d(x, kernel, bias, stride, dilation, left, right):
    x = np.pad(x, [(0, 0), (left, right), (0, 0)])
    k = kernel.shape[0]
    span = (k - 1) * dilation + 1
    steps = (x.shape[1] - span) // stride + 1
    out = np.zeros((x.shape[0], steps, kernel.shape[2]))
    for t in range(steps):
        window = x[:, t * stride:t * stride + span:dilation, :]
        out[:, t] = np.einsum("bkc,kcf->bf", window, kernel)
    return out + bias


@pytest.mark.parametrize("padding,stride,dilation,pads", [("valid", 1, 1, (0, 0)), ("valid", 2, 1, (0, 0)),
                                                          ("same", 1, 2, (2, 2)), ("same", 2, 1, (1, 1)),
                                                          ("causal", 1, 2, (4, 0))])
def test_conv1d_matches_numpy_and_finite_differences(padding, stride, dilation, pads):
    x = rng.standard_normal((2, 7, 3))
    layer = K.layers.Conv1D(4, 3, strides=stride, padding=padding, dilation_rate=dilation, dtype="float64")
    y = layer(x)
    kernel, bias = layer.kernel.numpy(), rng.standard_normal(4)
    layer.bias.assign(bias)
    expected = numpy_conv1d(x, kernel, bias, stride, dilation, *pads)
    assert np.allclose(layer(x).numpy(), expected, atol=1e-10)
    assert layer.compute_output_shape((None, 7, 3)) == (None,) + tuple(y.shape)[1:]
    w = rng.standard_normal(expected.shape)
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(layer(x) * w)
    g_kernel = tape.gradient(out, layer.kernel).numpy()
    eps = 1e-6
    for idx in [(0, 0, 0), (2, 1, 3), (1, 2, 1)]:
        e = np.zeros_like(kernel)
        e[idx] = eps
        numeric = (np.sum(numpy_conv1d(x, kernel + e, bias, stride, dilation, *pads) * w)
                   - np.sum(numpy_conv1d(x, kernel - e, bias, stride, dilation, *pads) * w)) / (2 * eps)
        assert np.isclose(g_kernel[idx], numeric, atol=1e-6)


def test_conv1d_in_a_model_and_channels_first():
    model = K.Sequential([K.Input((10, 2)), K.layers.Conv1D(3, 3, activation="relu"), K.layers.Flatten(),
                          K.layers.Dense(1)])
    assert model.output_shape == (None, 1) and model.layers[0].output.shape == (None, 8, 3)
    model.compile("adam", "mse")
    model.fit(rng.standard_normal((8, 10, 2)), rng.standard_normal((8, 1)), verbose=0)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    first = K.layers.Conv1D(2, 2, data_format="channels_first")
    last = K.layers.Conv1D(2, 2)
    y_first = first(np.transpose(x, (0, 2, 1)))
    last(x)
    last.set_weights(first.get_weights())
    assert np.allclose(np.transpose(y_first.numpy(), (0, 2, 1)), last(x).numpy(), atol=1e-6)


def test_dropout_and_batchnorm_inside_tf_function_update_on_every_call():
    model = K.Sequential([K.Input((4,)), K.layers.BatchNormalization(momentum=0.5), K.layers.Dropout(0.5)])
    bn = model.layers[0]

    @tf.function
    def step(x):
        return model(x, training=True)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    first, second = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(first != 0, second != 0)  # a fresh dropout mask per call, not a traced constant
    # two updates of the moving mean: 0 -> m/2 -> 3m/4
    assert np.allclose(bn.moving_mean.numpy(), 0.75 * x.mean(0), atol=1e-6)
