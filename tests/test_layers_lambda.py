"""The Lambda layer: works in process, saves as Keras does, never runs code from a file."""
import base64
import json
import marshal
import pathlib
import zipfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import UnsafeContentError

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "keras"
keras = tf.keras


def double(t):
    return t * 2.0


def model_with(function):
    return keras.Sequential([keras.Input((3,)), keras.layers.Lambda(function), keras.layers.Dense(2)])


def test_lambda_runs_and_trains_in_process():
    model = model_with(lambda t, scale=3.0: t * scale)
    x = np.ones((4, 3), "float32")
    np.testing.assert_allclose(model.layers[0](x).numpy(), 3 * x)
    model.compile("sgd", "mse")
    model.fit(x, np.zeros((4, 2), "float32"), epochs=1, verbose=0)
    assert keras.layers.Lambda(double, arguments={}).compute_output_shape((None, 3)) == (None, 3)


def test_a_lambda_is_written_as_keras_writes_it_and_refused_when_read_back(tmp_path):
    model = model_with(lambda t: t * 2.0)
    path = tmp_path / "lam.keras"
    model.save(path)
    entry = json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"][1]["config"]["function"]
    ours = marshal.loads(base64.b64decode(entry["config"]["code"]))      # test code may decode it; loaders never do
    assert entry["class_name"] == "__lambda__" and set(entry["config"]) == {"code", "defaults", "closure"}
    assert 2.0 in ours.co_consts
    for safe_mode in (True, False):
        with pytest.raises(UnsafeContentError, match=r"custom_objects=\{'<layer name>': function\}"):
            keras.models.load_model(path, safe_mode=safe_mode)
    name = model.layers[0].name
    restored = keras.models.load_model(path, custom_objects={name: lambda t: t * 2.0})
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


def test_real_keras_lambda_file_loads_with_the_function_supplied_by_name():
    with pytest.raises(UnsafeContentError, match="Lambda layer 'lambda'.*never runs code"):
        keras.models.load_model(FIXTURES / "lam.keras")
    model = keras.models.load_model(FIXTURES / "lam.keras", custom_objects={"lambda": double})
    x = np.array([[1.0, 2.0, 3.0]], "float32")
    dense = model.layers[-1]
    expected = (2 * x) @ dense.kernel.numpy() + dense.bias.numpy()
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-6)


def test_a_named_function_round_trips_through_its_registration(tmp_path):
    model = model_with(double)
    path = tmp_path / "named.keras"
    model.save(path)
    restored = keras.models.load_model(path, custom_objects={"double": double})
    assert restored.layers[0].function is double
    config = keras.layers.Lambda(double).get_config()
    assert config["function"]["class_name"] == "function" and config["function"]["config"] == "double"


def euclidean_distance(vects):
    x, y = vects
    return keras.ops.sqrt(keras.ops.maximum(keras.ops.sum(keras.ops.square(x - y), axis=1, keepdims=True),
                                            keras.backend.epsilon()))


@pytest.mark.parametrize("kwargs", [{"output_shape": (1,)}, {}, {"output_shape": lambda shapes: (shapes[0][0], 1)}])
def test_lambda_on_a_list_of_inputs_has_keras_output_shape(kwargs):
    # The siamese example's distance layer; Keras 3.15 gives (None, 1) for all three forms.
    a, b = keras.Input((10,)), keras.Input((10,))
    distance = keras.layers.Lambda(euclidean_distance, **kwargs)([a, b])
    assert distance.shape == (None, 1)
    model = keras.Model([a, b], keras.layers.Dense(1)(distance))
    x = np.arange(20, dtype="float32").reshape(2, 10)
    np.testing.assert_allclose(model.layers[2]([x, np.zeros_like(x)]).numpy(),
                               np.sqrt((x ** 2).sum(axis=1, keepdims=True)), rtol=1e-6)


def test_lambda_output_shape_rules_follow_keras():
    a, b = keras.Input((10,)), keras.Input((10,), batch_size=4)
    # A declared shape wins over the function's; the batch dimension is the first input's (by sorted key).
    assert keras.layers.Lambda(lambda t: t * 2, output_shape=(5,))(a).shape == (None, 5)
    assert keras.layers.Lambda(euclidean_distance, output_shape=(1,))([b, a]).shape == (4, 1)
    assert keras.layers.Lambda(euclidean_distance, output_shape=(1,))([a, b]).shape == (None, 1)
    assert keras.layers.Lambda(lambda v: v["p"] + v["q"], output_shape=(10,))({"q": b, "p": a}).shape == (None, 10)
    two = lambda v: [v[0], v[1][:, :3]]  # noqa: E731
    for output_shape in ([(10,), (3,)], ((10,), (3,)), None):
        outputs = keras.layers.Lambda(two, output_shape=output_shape)([a, a])
        assert [t.shape for t in outputs] == [(None, 10), (None, 3)]
