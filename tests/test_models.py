"""Sequential, functional and subclassed models: structure, weights order and paths,
summary() text, configs (Keras 3's JSON shape) and round trips."""
import json

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
rng = np.random.default_rng(99)

SPEC_SUMMARY = """\
Model: "seq"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (None, 8)              │            40 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ batch_normalization             │ (None, 8)              │            32 │
│ (BatchNormalization)            │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dropout (Dropout)               │ (None, 8)              │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 3)              │            27 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 99 (396.00 B)
 Trainable params: 83 (332.00 B)
 Non-trainable params: 16 (64.00 B)
"""


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    K.backend.clear_session()
    monkeypatch.setenv("COLUMNS", "80")  # the width Keras saw when the spec's summary was printed
    yield


def spec_model():
    return K.Sequential([K.Input(shape=(4,)), K.layers.Dense(8, activation="relu"), K.layers.BatchNormalization(),
                         K.layers.Dropout(0.5), K.layers.Dense(3, activation="softmax")], name="seq")


def test_summary_is_printed_exactly_as_keras(capsys):
    spec_model().summary()
    assert capsys.readouterr().out == SPEC_SUMMARY


def test_summary_with_print_fn_and_optimizer_params():
    model = spec_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(rng.standard_normal((8, 4)), rng.integers(0, 3, 8), verbose=0)
    lines = []
    model.summary(print_fn=lines.append)
    # Adam: iteration (int64) + learning_rate + two slots per trainable weight (83 values each).
    assert lines[-4:] == [" Total params: 267 (1.05 KB)", " Trainable params: 83 (332.00 B)",
                          " Non-trainable params: 16 (64.00 B)", " Optimizer params: 168 (676.00 B)"]


def test_sequential_weights_order_and_paths_match_keras():
    model = spec_model()
    assert [v.path for v in model.weights] == [
        "seq/dense/kernel", "seq/dense/bias", "seq/batch_normalization/gamma", "seq/batch_normalization/beta",
        "seq/batch_normalization/moving_mean", "seq/batch_normalization/moving_variance", "seq/dense_1/kernel",
        "seq/dense_1/bias"]
    assert [layer.name for layer in model.layers] == ["dense", "batch_normalization", "dropout", "dense_1"]
    assert model.input_shape == (None, 4) and model.output_shape == (None, 3)
    assert [w.shape for w in model.get_weights()] == [(4, 8), (8,), (8,), (8,), (8,), (8,), (8, 3), (3,)]


def test_sequential_forward_is_the_composition_of_its_layers():
    model = spec_model()
    x = rng.standard_normal((5, 4)).astype(np.float32)
    h = x
    for layer in model.layers:
        h = layer(h)
    assert np.allclose(model(x).numpy(), h.numpy(), atol=1e-6)
    assert np.allclose(model.predict(x, verbose=0), h.numpy(), atol=1e-6)


def test_sequential_builds_on_first_call_and_from_input_shape_argument():
    model = K.Sequential([K.layers.Dense(3), K.layers.Dense(1)])
    assert not model.built and model.weights == []
    model(np.ones((2, 5), np.float32))
    assert model.built and [w.shape for w in model.weights] == [(5, 3), (3,), (3, 1), (1,)]
    assert model.layers[0].kernel.path == "sequential/dense/kernel"
    with pytest.warns(UserWarning, match="prefer using an `Input"):
        other = K.Sequential([K.layers.Dense(2, input_shape=(7,))])
    assert other.built and other.input_shape == (None, 7)


def test_sequential_add_pop_and_errors():
    model = K.Sequential(name="s")
    model.add(K.Input((3,)))
    model.add(K.layers.Dense(4))
    model.add(K.layers.Dense(2))
    assert model.output_shape == (None, 2)
    popped = model.pop()
    assert popped.name == "dense_1" and model.output_shape == (None, 4)
    with pytest.raises(ValueError, match="Only instances of `keras.Layer` can be added"):
        model.add("dense")
    with pytest.raises(ValueError, match="should have unique names"):
        model.add(K.layers.Dense(1, name="dense"))


def test_functional_model_layers_include_the_input_layer():
    x = K.Input(shape=(4,), name="x")
    h = K.layers.Dense(8, activation="relu")(x)
    out = K.layers.Dense(3, name="head")(h)
    model = K.Model(x, out, name="func")
    assert type(model).__name__ == "Functional"
    assert [layer.name for layer in model.layers] == ["x", "dense", "head"]
    assert model.input_shape == (None, 4) and model.output_shape == (None, 3)
    data = rng.standard_normal((3, 4)).astype(np.float32)
    expected = model.layers[2](model.layers[1](data))
    assert np.allclose(model(data).numpy(), expected.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="incompatible with the layer"):
        model(np.ones((3, 5), np.float32))


def test_multi_input_multi_output_graph_and_its_summary(capsys):
    a = K.Input((3,), name="a")
    b = K.Input((2,), name="b")
    da = K.layers.Dense(4, name="da")(a)
    db = K.layers.Dense(4, name="db")(b)
    merged = K.layers.Concatenate(name="cat")([K.layers.Add(name="add")([da, db]), da])
    out1 = K.layers.Dense(1, name="o1")(merged)
    out2 = K.layers.Dense(2, name="o2")(merged)
    model = K.Model(inputs={"a": a, "b": b}, outputs=[out1, out2])
    xa, xb = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
    y1, y2 = model({"a": xa, "b": xb})
    ha, hb = model.get_layer("da")(xa).numpy(), model.get_layer("db")(xb).numpy()
    cat = np.concatenate([ha + hb, ha], axis=1)
    assert np.allclose(y1.numpy(), model.get_layer("o1")(cat).numpy(), atol=1e-6)
    assert y2.shape == (5, 2)
    model.summary()
    text = capsys.readouterr().out
    assert "Connected to" in text
    assert "│ add (Add)           │ (None, 4)         │          0 │ da[0][0], db[0][0] │" in text or \
        "da[0][0]," in text
    assert "cat[0][0]" in text


def test_graph_disconnected_is_reported():
    a, b = K.Input((2,), name="a"), K.Input((2,), name="b")
    out = K.layers.Add()([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        K.Model(a, out)


def test_functional_config_round_trip_and_keras_shape():
    x = K.Input(shape=(4,), name="x")
    h = K.layers.Dense(8, activation="relu", name="d1")(x)
    h = K.Sequential([K.layers.Dense(6), K.layers.BatchNormalization()], name="block")(h)
    out = K.layers.Dense(3, name="d2")(h)
    model = K.Model(x, out, name="func")
    config = json.loads(model.to_json())
    assert config["module"] == "keras.src.models.functional" and config["class_name"] == "Functional"
    assert config["registered_name"] == "Functional"
    inner = config["config"]
    assert inner["input_layers"] == ["x", 0, 0] and inner["output_layers"] == ["d2", 0, 0]
    d1 = inner["layers"][1]
    assert d1["name"] == "d1" and d1["inbound_nodes"] == [{"args": [{"class_name": "__keras_tensor__", "config": {
        "shape": [None, 4], "dtype": "float32", "keras_history": ["x", 0, 0]}}], "kwargs": {}}]
    assert inner["layers"][0]["inbound_nodes"] == []
    clone = K.Model.from_config(inner)
    assert [layer.name for layer in clone.layers] == ["x", "d1", "block", "d2"]
    clone.set_weights(model.get_weights())
    data = rng.standard_normal((6, 4)).astype(np.float32)
    assert np.allclose(clone.predict(data, verbose=0), model.predict(data, verbose=0), atol=1e-6)


def test_functional_config_from_keras2_inbound_nodes():
    config = {"name": "old", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3], "name": "inp"}, "name": "inp",
         "inbound_nodes": []},
        {"class_name": "Dense", "config": {"units": 2, "name": "d"}, "name": "d",
         "inbound_nodes": [[["inp", 0, 0, {}]]]}],
        "input_layers": [["inp", 0, 0]], "output_layers": [["d", 0, 0]]}
    model = K.Model.from_config(config)
    assert model.output_shape == (None, 2)
    assert model.predict(np.ones((2, 3)), verbose=0).shape == (2, 2)


def test_sequential_config_matches_keras_and_round_trips():
    model = spec_model()
    config = json.loads(model.to_json())
    assert config["module"] == "keras" and config["class_name"] == "Sequential"
    inner = config["config"]
    assert inner["name"] == "seq" and inner["build_input_shape"] == [None, 4]
    assert inner["layers"][0] == {"module": "keras.layers", "class_name": "InputLayer", "config": {
        "batch_shape": [None, 4], "dtype": "float32", "sparse": False, "ragged": False, "name": "input_layer",
        "optional": False}, "registered_name": None}
    bn = inner["layers"][2]
    assert bn["build_config"] == {"input_shape": [None, 8]}
    assert {k: bn["config"][k] for k in ("axis", "momentum", "epsilon", "center", "scale")} == {
        "axis": -1, "momentum": 0.99, "epsilon": 0.001, "center": True, "scale": True}
    clone = K.Sequential.from_config(inner)
    clone.set_weights(model.get_weights())
    data = rng.standard_normal((4, 4)).astype(np.float32)
    assert np.allclose(clone.predict(data, verbose=0), model.predict(data, verbose=0), atol=1e-6)


def test_a_handwritten_minimal_config_loads():
    """Inner layer entries may omit module, dtype and initializers (spec, section 1.3)."""
    from tapeflow.layers.serialization_lib import deserialize_keras_object
    model = deserialize_keras_object({"module": "keras", "class_name": "Sequential", "config": {
        "name": "hand", "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [None, 4]}},
                                   {"class_name": "Dense", "config": {"units": 8, "activation": "relu"}},
                                   {"class_name": "BatchNormalization", "config": {}},
                                   {"class_name": "Dense", "config": {"units": 3}}]}})
    assert [w.shape for w in model.weights] == [(4, 8), (8,), (8,), (8,), (8,), (8,), (8, 3), (3,)]


def test_unknown_class_in_config_names_the_class():
    from tapeflow.layers.serialization_lib import deserialize_keras_object
    with pytest.raises(TypeError, match="Could not locate class 'Scale2'"):
        deserialize_keras_object({"module": None, "class_name": "Scale2", "config": {}, "registered_name": "Scale2"})
    with pytest.raises(ValueError, match="lambda"):
        deserialize_keras_object({"class_name": "__lambda__", "config": {"code": "AAAA"}})


class MyModel(K.Model):
    def __init__(self, hidden=5, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden
        self.enc = K.layers.Dense(hidden, activation="relu")
        self.blocks = [K.layers.Dense(hidden), K.layers.Dense(hidden)]
        self.dec = K.layers.Dense(2)

    def call(self, x, training=False):
        x = self.enc(x)
        for block in self.blocks:
            x = block(x)
        return self.dec(x)


def test_subclassed_model_tracks_attributes_in_assignment_order():
    model = MyModel(hidden=5, name="mine")
    assert not model.built
    y = model(np.ones((3, 4), np.float32))
    assert y.shape == (3, 2) and model.built
    assert [layer.name for layer in model.layers] == ["dense", "dense_1", "dense_2", "dense_3"]
    assert [v.path for v in model.weights][:2] == ["mine/dense/kernel", "mine/dense/bias"]
    assert len(model.trainable_weights) == 8
    config = model.get_config()
    assert config == {"hidden": 5, "name": "mine", "trainable": True}
    clone = MyModel.from_config(config)
    assert clone.hidden == 5 and clone.name == "mine"


def test_subclassed_model_build_creates_the_state():
    model = MyModel(hidden=3)
    model.build((None, 4))
    assert model.built and [w.shape for w in model.weights][0] == (4, 3)
    assert model.get_build_config() == {"input_shape": [None, 4]}


def test_subclass_with_functional_constructor():
    class Wrapped(K.Model):
        def __init__(self, inputs, outputs, note="x", **kwargs):
            super().__init__(inputs=inputs, outputs=outputs, **kwargs)
            self.note = note
    x = K.Input((2,))
    model = Wrapped(x, K.layers.Dense(1)(x), note="hello")
    assert isinstance(model, Wrapped) and model.note == "hello"
    assert model.predict(np.ones((3, 2)), verbose=0).shape == (3, 1)


def test_clone_model_has_the_same_architecture_and_new_weights():
    model = spec_model()
    clone = K.models.clone_model(model)
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert [w.shape for w in clone.get_weights()] == [w.shape for w in model.get_weights()]
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])


def test_a_layer_returning_a_dict_feeds_each_key_to_its_consumers():
    """Nodes and the functional graph flatten dict outputs in one order (sorted keys): a dict built
    in another order once paired 'a' with the value of 'b'."""
    class Two(tf.keras.layers.Layer):
        def call(self, x):
            return {"b": 2 * x, "a": 3 * x}

    inp = tf.keras.Input((1,))
    out = Two()(inp)
    x = tf.constant([[1.0]])
    assert float(tf.keras.Model(inp, out["a"])(x)[0, 0]) == 3.0
    assert float(tf.keras.Model(inp, tf.keras.layers.Identity()(out["b"]))(x)[0, 0]) == 2.0
    both = tf.keras.Model(inp, {"first": out["a"], "second": out["b"]})(x)
    assert float(both["first"][0, 0]) == 3.0 and float(both["second"][0, 0]) == 2.0
