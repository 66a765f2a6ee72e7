"""keras.ops and KerasTensor operators inside functional models, as Keras 3 records them: each call on a
KerasTensor is an operation of the graph (``keras.src.ops.numpy.Mean`` ...), run when the model runs, saved
in Keras's config form and read back from files real Keras wrote."""
import json
import pathlib
import zipfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError, UnknownClassError

keras = tf.keras
ops = keras.ops
FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "keras3_ops"


def _ops_model():
    x = keras.Input((4, 3))
    outputs = [
        ops.mean(x, axis=1), ops.reshape(x, (-1, 12)), ops.softmax(x, axis=-1), ops.expand_dims(x[:, 0], 1),
        x[..., 1:3, None], ops.concatenate([ops.max(x, axis=1), x[:, -1]], axis=-1), 1.0 - ops.sum(x, axis=1),
        ops.matmul(x, ops.transpose(x, (0, 2, 1))), x * 2.0 + abs(-x) ** 2, ops.where(x > 0.5, x, 0.1 * x),
    ]
    return keras.Model(x, outputs)


def _numpy_outputs(x):
    return [x.mean(1), x.reshape(-1, 12), np.exp(x) / np.exp(x).sum(-1, keepdims=True), x[:, 0][:, None],
            x[..., 1:3, None], np.concatenate([x.max(1), x[:, -1]], -1), 1.0 - x.sum(1),
            x @ x.transpose(0, 2, 1), x * 2 + np.abs(x) ** 2, np.where(x > 0.5, x, 0.1 * x)]


def test_ops_on_keras_tensors_build_a_graph_that_computes_them():
    model = _ops_model()
    assert [tuple(t.shape) for t in model.outputs] == [
        (None, 3), (None, 12), (None, 4, 3), (None, 1, 3), (None, 4, 2, 1), (None, 6), (None, 3), (None, 4, 4),
        (None, 4, 3), (None, 4, 3)]
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype(np.float32)
    for got, expected in zip(model(x), _numpy_outputs(x)):
        assert got.dtype == tf.float32
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_python_scalars_take_the_tensors_dtype():
    x = keras.Input((2,), dtype="float64")
    model = keras.Model(x, [1.0 - x, x * 0.5, x > 0.0])
    assert [t.dtype for t in model.outputs] == ["float64", "float64", "bool"]
    out = model(np.array([[1.0, -2.0]]))
    assert [o.dtype for o in out] == [tf.float64, tf.float64, tf.bool]
    np.testing.assert_array_equal(out[0].numpy(), [[0.0, 3.0]])


def test_config_is_kerass_and_round_trips(tmp_path):
    model = _ops_model()
    config = json.loads(json.dumps(model.get_config()))
    by_class = {layer["class_name"]: layer for layer in config["layers"]}
    assert by_class["Mean"]["module"] == "keras.src.ops.numpy"
    mean_config = by_class["Mean"]["config"]
    assert mean_config["name"].startswith("mean") and mean_config == {"name": mean_config["name"], "axis": 1,
                                                                       "keepdims": False}
    assert by_class["Mean"]["registered_name"] == "Mean"
    assert by_class["Softmax"]["module"] == "keras.src.ops.nn"
    assert by_class["Reshape"]["config"]["newshape"] == [-1, 12]
    subtract_args = by_class["Subtract"]["inbound_nodes"][0]["args"]
    assert subtract_args[0] == 1.0 and subtract_args[1]["class_name"] == "__keras_tensor__"
    assert any(layer["class_name"] == "GetItem" and layer["inbound_nodes"][0]["args"][1] == [
        {"class_name": "__ellipsis__", "config": {}},
        {"class_name": "__slice__", "config": {"start": 1, "stop": 3, "step": None}}, None]
        for layer in config["layers"])
    x = np.random.default_rng(1).normal(size=(3, 4, 3)).astype(np.float32)
    rebuilt = keras.Model.from_config(config)
    model.save(tmp_path / "ops.keras")
    reloaded = keras.models.load_model(tmp_path / "ops.keras")
    for a, b, c in zip(model(x), rebuilt(x), reloaded(x)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(a.numpy(), c.numpy())


def test_a_model_real_keras_wrote_with_ops_in_its_graph_predicts_the_same():
    model = keras.models.load_model(FIXTURES / "ops_graph.keras")
    x = np.load(FIXTURES / "ops_graph_x.npy")
    predictions = model.predict(x, verbose=0)
    for i, got in enumerate(predictions):
        np.testing.assert_allclose(got, np.load(FIXTURES / f"ops_graph_pred{i}.npy"), rtol=1e-5, atol=1e-5)


def test_a_keras_functional_model_with_masks_loads_with_its_mask_operations():
    # Keras saves Embedding(mask_zero=True)'s mask as a NotEqual operation passed to the LSTM as `mask=`.
    model = keras.models.load_model(FIXTURES / "masked_functional.keras")
    assert any(type(layer).__name__ == "NotEqual" for layer in model.layers)
    x = np.load(FIXTURES / "masked_functional_x.npy")
    np.testing.assert_allclose(model.predict(x, verbose=0), np.load(FIXTURES / "masked_functional_pred.npy"),
                               rtol=1e-5, atol=1e-6)


def test_gradients_flow_through_the_operations():
    x = keras.Input((3,))
    dense = keras.layers.Dense(2, kernel_initializer="ones")
    model = keras.Model(x, ops.sum(ops.tanh(dense(x) * 0.5) ** 2, axis=-1))
    inputs = tf.constant([[0.1, -0.4, 0.3]])
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        y = model(inputs)
    grad = tape.gradient(y, inputs).numpy()
    h = np.tanh(0.5 * inputs.numpy().sum())          # both units see the same pre-activation
    expected = 2 * (2 * h * (1 - h ** 2) * 0.5) * np.ones((1, 3))
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_only_basic_indexing_of_a_keras_tensor():
    x = keras.Input((4,))
    with pytest.raises(TypeError, match="integers, slices, None and Ellipsis"):
        x[[0, 2]]


def _rewrite_config(source, target, change):
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                change(config)
                data = json.dumps(config).encode()
            zout.writestr(item, data)


def _layer(config, class_name):
    return next(layer for layer in config["config"]["layers"] if layer["class_name"] == class_name)


@pytest.mark.parametrize("change, error, message", [
    (lambda c: _layer(c, "Tanh").update(class_name="Nonexistent"), UnknownClassError, "Nonexistent"),
    (lambda c: _layer(c, "Add")["inbound_nodes"][0]["args"][1]["config"].update(dtype="string"),
     FileFormatError, "numeric or boolean"),
    (lambda c: _layer(c, "GetItem")["inbound_nodes"][0]["args"][1][0]["config"].update(start="x"),
     FileFormatError, "__slice__ start"),
])
def test_damaged_operation_entries_are_refused_clearly(tmp_path, change, error, message):
    _rewrite_config(FIXTURES / "ops_graph.keras", tmp_path / "bad.keras", change)
    with pytest.raises(error, match=message):
        keras.models.load_model(tmp_path / "bad.keras")
