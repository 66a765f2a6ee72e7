"""The guides' model plumbing: custom layers whose get_config holds only their own arguments (save, load,
clone), clone_model's options, to_json/model_from_json, callback logs, the Dot layer and the merge helpers.

Numbers come from a model written by real Keras 3 (tests/fixtures/keras3_catalogue/make_fixtures.py) or from
numpy's einsum."""
import os

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn

keras = tf.keras
L = keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_catalogue")


@keras.saving.register_keras_serializable(package="Catalogue")
class Linear(L.Layer):
    """The guides' custom layer: no **kwargs, get_config returns only its constructor arguments."""

    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return keras.ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {"units": self.units}


class Scale(L.Layer):
    """Not registered: loading needs custom_objects or a custom_object_scope."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {"factor": self.factor}


def _fixture(name):
    return os.path.join(FIXTURES, name)


def test_keras_custom_layer_model_loads_with_custom_objects_and_predicts_as_keras(tmp_path):
    model = keras.models.load_model(_fixture("custom.keras"), custom_objects={"Scale": Scale})
    x = np.load(_fixture("custom_x.npy"))
    np.testing.assert_allclose(model.predict(x, verbose=0), np.load(_fixture("custom_pred.npy")), rtol=1e-5,
                               atol=1e-5)
    # A loaded model saves again (its merge layers, rebuilt from configs, keep their generated get_config).
    model.save(str(tmp_path / "again.keras"))
    again = keras.models.load_model(str(tmp_path / "again.keras"), custom_objects={"Scale": Scale})
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    linear = [layer for layer in model.layers if isinstance(layer, Linear)]
    assert [layer.units for layer in linear] == [4, 4]
    with keras.saving.custom_object_scope({"Scale": Scale}):
        scoped = keras.models.load_model(_fixture("custom.keras"))
    np.testing.assert_allclose(scoped.predict(x, verbose=0), np.load(_fixture("custom_pred.npy")), rtol=1e-5,
                               atol=1e-5)


def test_keras_custom_layer_model_without_custom_objects_names_the_missing_class():
    with pytest.raises(Exception, match="Scale"):
        keras.models.load_model(_fixture("custom.keras"))


@pytest.mark.parametrize("kind", ["functional", "sequential"])
def test_custom_layer_saves_and_reloads(tmp_path, kind):
    if kind == "functional":
        inputs = keras.Input((3,))
        model = keras.Model(inputs, Scale(0.5)(Linear(4)(inputs)))
    else:
        model = keras.Sequential([keras.Input((3,)), Linear(4), Scale(0.5)])
    path = str(tmp_path / "m.keras")
    model.save(path)
    restored = keras.models.load_model(path, custom_objects={"Scale": Scale})
    x = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))
    assert [type(layer) for layer in restored.layers] == [type(layer) for layer in model.layers]


def test_clone_model_of_custom_layers_needs_no_registration_and_gives_fresh_weights():
    inputs = keras.Input((3,), name="x")
    shared = Linear(4)
    outputs = L.Add()([shared(inputs), Scale(2.0)(shared(inputs))])
    model = keras.Model(inputs, outputs, name="f")
    clone = keras.models.clone_model(model)
    assert clone.name == "f" and clone.inputs[0].name == "x"
    assert len(clone.layers) == len(model.layers) == 4
    cloned_linear = clone.layers[1]
    assert isinstance(cloned_linear, Linear) and cloned_linear is not shared
    assert not np.array_equal(cloned_linear.w.numpy(), shared.w.numpy())
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(1).normal(size=(2, 3)).astype("float32")
    np.testing.assert_array_equal(clone.predict(x, verbose=0), model.predict(x, verbose=0))


def test_clone_model_clone_function_input_tensors_and_call_function():
    inputs = keras.Input((3,), name="x")
    dense = L.Dense(4, name="d")
    model = keras.Model(inputs, L.Add(name="sum")([dense(inputs), dense(inputs)]))
    same = keras.models.clone_model(model, clone_function=lambda layer: layer)
    assert same.layers[1] is dense
    new_input = keras.Input((3,), name="y")
    rebased = keras.models.clone_model(model, input_tensors=new_input)
    assert rebased.inputs[0] is new_input
    calls = []

    def call_function(layer, *args, **kwargs):
        calls.append(layer.name)
        return layer(*args, **kwargs)
    keras.models.clone_model(model, call_function=call_function)
    assert calls == ["d", "d", "sum"]
    with pytest.raises(ValueError, match="KerasTensors"):
        keras.models.clone_model(model, input_tensors=np.zeros((2, 3)))


def test_clone_model_sequential_and_nested_models():
    inner = keras.Sequential([keras.Input((3,)), L.Dense(3, name="inner_d")], name="inner")
    seq = keras.Sequential([keras.Input((3,)), inner, L.Dense(2, name="a")], name="s")
    clone = keras.models.clone_model(seq)
    assert isinstance(clone, keras.Sequential) and clone.name == "s" and clone.built
    assert [layer.name for layer in clone.layers] == ["inner", "a"] and clone.layers[0] is not inner
    seen = []
    keras.models.clone_model(seq, clone_function=lambda layer: seen.append(layer.name) or
                             layer.__class__.from_config(layer.get_config()), recursive=True)
    assert seen == ["inner_d", "a"]  # with recursive, the nested model's layers go through clone_function
    rebased = keras.models.clone_model(seq, input_tensors=keras.Input((3,), name="z"))
    assert rebased.inputs[0].name == "z"


def test_clone_model_subclassed_refuses_clone_function():
    class Sub(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = L.Dense(2)

        def call(self, x):
            return self.dense(x)
    assert type(keras.models.clone_model(Sub())) is Sub
    with pytest.raises(ValueError, match="only supported for Sequential and functional"):
        keras.models.clone_model(Sub(), clone_function=lambda layer: layer)


def test_to_json_and_model_from_json_rebuild_the_architecture():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, L.Dense(2, activation="relu")(Linear(4)(inputs)), name="j")
    text = model.to_json()
    rebuilt = keras.models.model_from_json(text)
    assert rebuilt.name == "j" and [type(layer) for layer in rebuilt.layers] == [type(layer) for layer in model.layers]
    rebuilt.set_weights(model.get_weights())
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(rebuilt.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(ValueError, match="not valid JSON"):
        keras.models.model_from_json("{not json")
    with pytest.raises(ValueError, match="does not describe a model"):
        keras.models.model_from_json("[1, 2]")


def test_callback_hooks_receive_a_dict_never_none():
    received = {}

    class Recorder(keras.callbacks.Callback):
        pass
    hooks = ["on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
             "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
             "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end"]
    for hook in hooks:
        def record(self, *args, _hook=hook):
            received.setdefault(_hook, []).append(args[-1])
        setattr(Recorder, hook, record)
    x = np.ones((4, 3), "float32")
    model = keras.Sequential([keras.Input((3,)), L.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, x[:, :1], epochs=1, verbose=0, validation_data=(x, x[:, :1]), callbacks=[Recorder()])
    model.evaluate(x, x[:, :1], verbose=0, callbacks=[Recorder()])
    model.predict(x, verbose=0, callbacks=[Recorder()])
    assert sorted(received) == sorted(hooks)
    for hook, logs in received.items():
        assert all(isinstance(entry, dict) for entry in logs), hook
    assert received["on_train_begin"][0] == {} and "loss" in received["on_epoch_end"][0]


@pytest.mark.parametrize("shapes,axes,spec", [
    (((2, 3), (2, 3)), 1, "bi,bi->b"),
    (((2, 3, 4), (2, 4, 5)), (2, 1), "bij,bjk->bik"),
    (((2, 3, 4), (2, 3, 5)), 1, "bij,bik->bjk"),
    (((2, 3, 4, 5), (2, 5, 6)), (-1, -2), "bijk,bkl->bijl"),
])
def test_dot_layer_is_a_batched_contraction(shapes, axes, spec):
    rng = np.random.default_rng(2)
    a, b = (rng.normal(size=s).astype("float32") for s in shapes)
    out = L.Dot(axes=axes)([a, b]).numpy()
    expected = np.einsum(spec, a, b)
    np.testing.assert_allclose(out, expected.reshape(out.shape), rtol=1e-5, atol=1e-6)
    if expected.ndim == 1:
        assert out.shape == (2, 1)
    symbolic = L.Dot(axes=axes)([keras.Input(shapes[0][1:]), keras.Input(shapes[1][1:])])
    assert symbolic.shape == (None,) + out.shape[1:]


def test_dot_normalize_is_cosine_similarity_and_errors_are_clear():
    a = np.array([[3.0, 4.0], [1e-9, 0.0]], "float32")
    b = np.array([[4.0, 3.0], [1.0, 0.0]], "float32")
    out = L.Dot(axes=1, normalize=True)([a, b]).numpy()
    # Keras normalises with ops.normalize (norms below epsilon=1e-7 count as 1e-7).
    np.testing.assert_allclose(out[:, 0], [24 / 25, 1e-9 / 1e-7], rtol=1e-5)
    with pytest.raises(ValueError, match="axis 0"):
        L.Dot(axes=0)([a, b])
    with pytest.raises(ValueError, match="Incompatible input shapes"):
        L.Dot(axes=1)([np.ones((2, 3, 4)), np.ones((2, 4, 5))])
    with pytest.raises(ValueError, match="list of 2 inputs"):
        L.Dot(axes=1)([np.ones((2, 3))])
    assert L.Dot.from_config(L.Dot(axes=(2, 1), normalize=True).get_config()).axes == [2, 1]


def test_dot_layer_gradients_first_and_second_order():
    def f(a, b):
        return L.Dot(axes=(2, 1), normalize=True, dtype="float64")([a, b])
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 2))
    check_gradients(f, a, b)
    check_gradients(vjp_fn(f), a, b)


def test_functional_merge_helpers_match_their_layers():
    a_in, b_in = keras.Input((3,)), keras.Input((3,))
    helpers = [L.add, L.subtract, L.multiply, L.average, L.maximum, L.minimum,
               lambda t: L.concatenate(t, axis=1), lambda t: L.dot(t, axes=1)]
    model = keras.Model([a_in, b_in], [h([a_in, b_in]) for h in helpers])
    a = np.array([[1.0, -2.0, 3.0]], "float32")
    b = np.array([[0.5, 4.0, -1.0]], "float32")
    outs = model.predict([a, b], verbose=0)
    expected = [a + b, a - b, a * b, (a + b) / 2, np.maximum(a, b), np.minimum(a, b), np.concatenate([a, b], 1),
                (a * b).sum(1, keepdims=True)]
    for out, exp in zip(outs, expected):
        np.testing.assert_allclose(out, exp, rtol=1e-6)
    assert type(L.add([a_in, b_in], name="plus")._keras_history[0]).__name__ == "Add"
