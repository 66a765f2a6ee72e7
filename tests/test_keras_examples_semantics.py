"""Keras 3.15 semantics that keras.io examples rely on (found by replaying them; observed on Keras 3.15 + TF 2.21)."""
import numpy as np

import tapeflow as tf
from tapeflow import keras


def test_dense_activation_set_to_none_is_skipped():
    # grad_cam: `model.layers[-1].activation = None` to read the logits
    inp = keras.Input((3,))
    dense = keras.layers.Dense(2, activation="softmax")
    model = keras.Model(inp, dense(inp))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    dense.activation = None
    logits = model.predict(x, verbose=0)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(logits, x @ kernel + bias, rtol=1e-6)


class _SquaredErrorModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.dense(x)


def test_compute_loss_override_without_training_argument():
    # knowledge_distillation: compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False)
    class Distiller(_SquaredErrorModel):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
            return keras.ops.mean((y - y_pred) ** 2)

    model = Distiller()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x, y = np.ones((4, 2), "float32"), np.full((4, 1), 3.0, "float32")
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0).history
    assert history["loss"] == [1.0]     # (3 - 2)^2 at the initial weights
    # one SGD step: prediction 2 + 0.1 * 2 * (1 + 1 + 1) = 2.6
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), 0.4 ** 2, rtol=1e-5)


def test_compute_loss_gets_training_only_when_it_names_it():
    seen = []

    class WithTraining(_SquaredErrorModel):
        def compute_loss(self, x, y, y_pred, sample_weight, training=None):
            seen.append(("training", training))
            return keras.ops.mean((y - y_pred) ** 2)

    class WithKwargs(_SquaredErrorModel):
        def compute_loss(self, *args, **kwargs):
            seen.append((len(args), sorted(kwargs)))
            return keras.ops.mean((args[1] - args[2]) ** 2)

    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    for cls in (WithTraining, WithKwargs):
        model = cls()
        model.compile(optimizer="sgd", run_eagerly=True)
        model.fit(x, y, batch_size=4, verbose=0)
        model.evaluate(x, y, verbose=0)
    # observed in Keras 3.15: True/False for the first; four positional arguments and no keyword for the second
    assert seen == [("training", True), ("training", False), (4, []), (4, [])]


def test_train_and_test_on_batch_report_their_batch_alone():
    # Keras resets the metrics at each train_on_batch / test_on_batch; predict leaves them alone
    x = np.zeros((96, 2), "float32")
    y = np.r_[np.zeros(32), np.ones(64)].astype("float32")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid",
                                                                     kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)     # accuracy over the epoch: 1/3
    assert model.test_on_batch(x[:32], y[:32], return_dict=True)["accuracy"] == 1.0
    assert model.test_on_batch(x[32:64], y[32:64], return_dict=True)["accuracy"] == 0.0
    assert model.train_on_batch(x[:32], y[:32], return_dict=True)["accuracy"] == 1.0
    assert model.train_on_batch(x[32:64], y[32:64], return_dict=True)["accuracy"] == 0.0
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    model.predict(x[:32], verbose=0)
    model.predict_on_batch(x[:32])
    np.testing.assert_allclose(model.get_metrics_result()["accuracy"], 1 / 3, rtol=1e-6)


def _describe(data):
    if isinstance(data, tuple):
        return tuple(None if v is None else type(v).__name__ for v in data)
    return type(data).__name__


def test_steps_receive_the_batch_structure_keras_gives():
    # DCGAN / VAE examples: fit(x) hands train_step the tensor x itself, which they slice with ops.shape(x)[0]
    seen = []

    class Recorder(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            seen.append(("train", _describe(data)))
            return {"loss": 0.0}

        def test_step(self, data):
            seen.append(("test", _describe(data)))
            return {"loss": 0.0}

        def predict_step(self, data):
            seen.append(("predict", _describe(data)))
            x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
            return self(x)

    model = Recorder()
    model.compile(run_eagerly=True)
    x = np.zeros((4, 3), "float32")
    model.fit(x, batch_size=4, verbose=0)
    model.fit(tf.data.Dataset.from_tensor_slices(x).batch(4), verbose=0)
    model.fit(x, x, batch_size=4, verbose=0)
    model.fit([x, x], batch_size=4, verbose=0)
    model.evaluate(x, batch_size=4, verbose=0)
    model.evaluate(x, sample_weight=np.ones(4), batch_size=4, verbose=0)
    model.predict(x, batch_size=4, verbose=0)
    model.predict(tf.data.Dataset.from_tensor_slices((x, x)).batch(4), verbose=0)
    model.predict_on_batch(x)
    model.train_on_batch(x)
    model.test_on_batch(x)
    # as observed in Keras 3.15 on TensorFlow (Tensor for EagerTensor)
    assert seen == [("train", "Tensor"), ("train", "Tensor"), ("train", ("Tensor", "Tensor")), ("train", ("list",)),
                    ("test", "Tensor"), ("test", "Tensor"), ("predict", "Tensor"), ("predict", ("Tensor", "Tensor")),
                    ("predict", ("Tensor",)), ("train", ("Tensor", None, None)), ("test", ("Tensor", None, None))]


def test_traced_train_step_on_a_bare_tensor():
    # DCGAN: batch_size = ops.shape(real_images)[0] in a traced train_step on a dataset of images
    class GAN(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1, kernel_initializer="ones")

        def call(self, x):
            return self.dense(x)

        def train_step(self, real):
            noise = keras.ops.ones((keras.ops.shape(real)[0], 3))
            both = keras.ops.concatenate([real, noise], axis=0)
            return {"m": keras.ops.mean(self(both))}

    model = GAN()
    model.compile()
    x = np.arange(12, dtype="float32").reshape(4, 3)
    history = model.fit(tf.data.Dataset.from_tensor_slices(x).batch(4), verbose=0).history
    np.testing.assert_allclose(history["m"], [(x.sum() + 12.0) / 8], rtol=1e-6)


def test_a_subclass_is_functional_only_when_it_passes_inputs_and_outputs_to_model():
    class VAE(keras.Model):      # VAE(encoder, decoder): two positional arguments of its own
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder, self.decoder = encoder, decoder

        def call(self, x):
            return self.decoder(self.encoder(x))

    vae = VAE(keras.layers.Dense(2), keras.layers.Dense(3))
    assert not getattr(vae, "_has_symbolic_graph", False)
    assert tuple(vae(keras.ops.ones((1, 4))).shape) == (1, 3)

    class Wrapped(keras.Model):  # one argument of its own, inputs and outputs passed on
        def __init__(self, units, **kwargs):
            inputs = keras.Input((2,))
            super().__init__(inputs, keras.layers.Dense(units, kernel_initializer="ones")(inputs), **kwargs)

    class PassedOn(keras.Model):
        def __init__(self, a, b):
            super().__init__(inputs=a, outputs=b)

    wrapped = Wrapped(3)
    assert wrapped._has_symbolic_graph and isinstance(wrapped, Wrapped)
    np.testing.assert_allclose(wrapped(np.ones((1, 2), "float32")), [[2.0, 2.0, 2.0]])
    inputs = keras.Input((2,))
    passed_on = PassedOn(inputs, keras.layers.Dense(1)(inputs))
    assert passed_on._has_symbolic_graph and tuple(passed_on(np.ones((5, 2))).shape) == (5, 1)


def test_a_user_loss_function_sees_targets_of_the_predictions_rank_and_float_dtype():
    # siamese_contrastive: a loss written as y_true * ... + (1 - y_true) * ... on (N,) labels, (N, 1) outputs
    def contrastive(y_true, y_pred):
        return keras.ops.mean((1 - y_true) * keras.ops.square(y_pred) + y_true * keras.ops.square(1 - y_pred))

    inp = keras.Input((1,))
    model = keras.Model(inp, keras.layers.Dense(1, kernel_initializer="ones")(inp))
    model.compile(optimizer="sgd", loss=contrastive)
    x = np.array([[0.1], [0.5], [0.9], [0.3]], "float32")
    y = np.array([0.0, 1.0, 1.0, 0.0], "float32")
    expected = np.mean((1 - y) * x[:, 0] ** 2 + y * (1 - x[:, 0]) ** 2)      # 0.09, Keras's figure
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), expected, rtol=1e-6)

    seen = []

    def recording(y_true, y_pred):
        seen.append((tuple(y_true.shape), np.dtype(y_true.numpy().dtype).name, tuple(y_pred.shape)))
        return keras.ops.mean(keras.ops.square(y_true - y_pred))

    def evaluate(y_shape, y_dtype, output):
        inputs = keras.Input((2,))
        model = keras.Model(inputs, output(inputs))
        model.compile(optimizer="sgd", loss=recording, run_eagerly=True)
        model.evaluate(np.ones((4, 2), "float32"), np.zeros(y_shape, y_dtype), verbose=0)

    evaluate((4,), "int32", keras.layers.Dense(1))
    evaluate((4, 1), "float32", lambda t: keras.ops.squeeze(keras.layers.Dense(1)(t), -1))
    evaluate((4, 2, 1), "float32", keras.layers.Dense(2))
    evaluate((4, 2), "float32", lambda t: keras.layers.Reshape((2, 1))(keras.layers.Dense(2)(t)))
    evaluate((4, 1, 1), "float32", keras.layers.Dense(1))
    # observed in Keras 3.15: (N,) is expanded against rank 2, otherwise a trailing 1 is squeezed; labels as float32
    assert seen == [((4, 1), "float32", (4, 1)), ((4, 1), "float32", (4, 1)), ((4, 2), "float32", (4, 2)),
                    ((4, 2), "float32", (4, 2)), ((4, 1), "float32", (4, 1))]


def test_dict_outputs_are_ordered_by_sorted_key(tmp_path):
    # observed in Keras 3.15: output_names, model.outputs, layers and weights follow the sorted keys; a call
    # returns the dict in the user's key order; compile's dicts and dict targets are keyed by the dict's keys
    inputs = keras.Input((3,), name="features")
    z_layer = keras.layers.Dense(1, name="zz", kernel_initializer="ones")
    a_layer = keras.layers.Dense(2, name="aa", kernel_initializer="zeros")
    model = keras.Model(inputs, {"z": z_layer(inputs), "a": a_layer(inputs)})
    assert model.output_names == ["aa", "zz"]
    assert [tuple(t.shape) for t in model.outputs] == [(None, 2), (None, 1)]
    assert [layer.name for layer in model.layers] == ["features", "aa", "zz"]
    assert [tuple(w.shape) for w in model.get_weights()] == [(3, 2), (2,), (3, 1), (1,)]
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = model(x)
    assert list(out) == ["z", "a"]
    np.testing.assert_allclose(out["z"], x.sum(1, keepdims=True))
    np.testing.assert_allclose(out["a"], np.zeros((2, 2)))
    predicted = model.predict(x, verbose=0)
    assert list(predicted) == ["z", "a"] and predicted["a"].shape == (2, 2)

    model.compile(optimizer="sgd", loss={"z": "mse", "a": "mae"})
    logs = model.evaluate(x, {"z": np.zeros((2, 1)), "a": np.ones((2, 2))}, verbose=0, return_dict=True)
    np.testing.assert_allclose([logs["z_loss"], logs["a_loss"]], [np.mean(x.sum(1) ** 2), 1.0], rtol=1e-6)

    model.save(tmp_path / "m.keras")
    reloaded = keras.models.load_model(tmp_path / "m.keras")
    assert reloaded.output_names == ["aa", "zz"]
    again = reloaded(x)
    assert list(again) == ["z", "a"]
    np.testing.assert_allclose(again["z"], out["z"])


def test_dict_inputs_are_ordered_by_sorted_key():
    first = keras.Input((1,), name="one")
    second = keras.Input((2,), name="two")
    model = keras.Model({"y": first, "b": second}, keras.layers.Concatenate()([first, second]))
    assert [tuple(t.shape) for t in model.inputs] == [(None, 2), (None, 1)]
    out = model({"y": np.ones((1, 1), "float32"), "b": np.full((1, 2), 2.0, "float32")})
    np.testing.assert_allclose(out, [[1.0, 2.0, 2.0]])


def test_pack_x_y_sample_weight_as_keras():
    pack = keras.utils.pack_x_y_sample_weight
    x = np.zeros((4, 3), "float32")
    assert pack(x) is x
    assert pack(x, None, np.ones(4)) is x        # Keras drops a sample weight that comes without targets
    inputs = {"a": x}
    assert pack(inputs) is inputs
    packed = pack([x, x])
    assert isinstance(packed, tuple) and len(packed) == 1 and len(packed[0]) == 2
    assert len(pack((x, x))) == 1
    assert len(pack(x, x)) == 2 and len(pack(x, x, np.ones(4))) == 3
    for data in (x, pack([x, x]), pack(x, x)):
        unpacked = keras.utils.unpack_x_y_sample_weight(data)
        assert len(unpacked) == 3
