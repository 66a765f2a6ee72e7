"""Saving and loading fail safely: a failed save keeps the previous file, a damaged or mismatched file
changes no variable, and no file can make tapeflow run code (Lambda layers and unknown classes are
refused on every format; loading never unpickles, evals or imports a name read from a file)."""
import builtins
import importlib
import json
import marshal
import os
import pickle
import shutil
import sys
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import ArchiveError, FileContentError, UnknownClassError, UnsafeContentError

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
keras = tf.keras


def fixture(name):
    return os.path.join(HERE, name)


def m_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.optimizer.build(model.trainable_variables)
    return model


def state(model):
    return [np.array(w) for w in model.weights] + [np.array(v) for v in model.optimizer.variables]


def assert_unchanged(model, before):
    after = state(model)
    assert len(after) == len(before)
    for a, b in zip(after, before):
        np.testing.assert_array_equal(a, b)


def damaged_copy(tmp_path, name, edit):
    path = tmp_path / name
    shutil.copy(fixture(name), path)
    os.chmod(path, 0o644)
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


def truncated_copy(tmp_path, name, keep=0.5):
    data = open(fixture(name), "rb").read()
    path = tmp_path / name
    path.write_bytes(data[:int(len(data) * keep)])
    return path


# ------------------------------------------------------------- failed saves ---
@pytest.mark.parametrize("name", ["m.weights.h5", "m.keras", "m.h5"])
def test_failed_save_leaves_previous_file_intact(tmp_path, monkeypatch, name):
    model = m_model()
    path = tmp_path / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save_weights(path) if name.endswith(".weights.h5") else model.save(path)
        previous = path.read_bytes()
        model.layers[0].kernel.assign(np.full((4, 8), 5.0, np.float32))
        real = h5py.Group.create_dataset
        calls = []

        def failing(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 4:
                raise OSError("disk full (simulated)")
            return real(self, *args, **kwargs)
        monkeypatch.setattr(h5py.Group, "create_dataset", failing)
        with pytest.raises(OSError, match="simulated"):
            model.save_weights(path) if name.endswith(".weights.h5") else model.save(path)
    assert path.read_bytes() == previous
    assert os.listdir(tmp_path) == [name]   # no temporary file left behind


def test_unserializable_model_fails_before_touching_the_file(tmp_path):
    class NoConfig(keras.layers.Layer):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def call(self, x):
            return x
    path = tmp_path / "m.keras"
    path.write_bytes(b"previous")
    model = keras.Sequential([keras.Input((2,)), NoConfig(np.sin)])
    with pytest.raises(NotImplementedError, match="get_config"):
        model.save(path)
    assert path.read_bytes() == b"previous"


def test_overwrite_false_refuses_without_a_terminal(tmp_path):
    path = tmp_path / "m.weights.h5"
    path.write_bytes(b"keep me")
    with pytest.raises(FileExistsError, match="overwrite=False"):
        m_model().save_weights(path, overwrite=False)
    assert path.read_bytes() == b"keep me"


# ----------------------------------------------- damaged files change nothing ---
def test_truncated_weights_file(tmp_path):
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match="m.weights.h5"):
        model.load_weights(truncated_copy(tmp_path, "m.weights.h5"))
    assert_unchanged(model, before)


def test_truncated_keras_archive(tmp_path):
    model = m_model()
    before = state(model)
    with pytest.raises(ArchiveError, match="truncated"):
        model.load_weights(truncated_copy(tmp_path, "m.keras", keep=0.9))
    with pytest.raises(ArchiveError):
        keras.models.load_model(truncated_copy(tmp_path, "m.keras", keep=0.9))
    assert_unchanged(model, before)


def test_truncated_legacy_h5(tmp_path):
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match="not a valid HDF5 file"):
        model.load_weights(truncated_copy(tmp_path, "m.h5"))
    with pytest.raises(FileContentError):
        keras.models.load_model(truncated_copy(tmp_path, "m.h5"))
    assert_unchanged(model, before)


def test_dataset_of_wrong_shape_changes_no_variable(tmp_path):
    def edit(f):
        del f["layers/dense_1/vars/0"]
        f["layers/dense_1/vars/0"] = np.zeros((8, 4), np.float32)
    path = damaged_copy(tmp_path, "m.weights.h5", edit)
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError) as info:
        model.load_weights(path)
    message = str(info.value)
    assert "layers/dense_1" in message and "(8, 3)" in message and "(8, 4)" in message
    assert "no variable was changed" in message
    assert_unchanged(model, before)   # dense and batch_normalization come first in the file: untouched too


def test_missing_group_changes_no_variable(tmp_path):
    path = damaged_copy(tmp_path, "m.weights.h5", lambda f: f.__delitem__("layers/batch_normalization"))
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match=r"BatchNormalization .*expected 4 variables"):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_wrong_optimizer_slot_shape_changes_nothing(tmp_path):
    def edit(f):
        del f["optimizer/vars/13"]
        f["optimizer/vars/13"] = np.zeros((4,), np.float32)
    path = damaged_copy(tmp_path, "m.weights.h5", edit)
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match="optimizer/vars|Adam"):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_legacy_h5_with_a_wrong_shape_changes_no_variable(tmp_path):
    def edit(f):
        g = f["model_weights/dense_1/seq/dense_1"]
        del g["bias"]
        g["bias"] = np.zeros((5,), np.float32)
    path = damaged_copy(tmp_path, "m.h5", edit)
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match=r"Layer #2 .*\(3,\).*\(5,\)"):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_legacy_h5_with_a_missing_dataset(tmp_path):
    path = damaged_copy(tmp_path, "tfk2_weights.h5", lambda f: f.__delitem__("dense/dense/kernel:0"))
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match="kernel:0"):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_corrupted_bytes_in_keras_archive_are_detected(tmp_path):
    data = bytearray(open(fixture("m.keras"), "rb").read())
    with zipfile.ZipFile(fixture("m.keras")) as z:
        info = z.getinfo("model.weights.h5")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.file_size // 2] ^= 0xFF
    path = tmp_path / "m.keras"
    path.write_bytes(bytes(data))
    model = m_model()
    before = state(model)
    with pytest.raises(ArchiveError, match="CRC"):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_custom_loader_that_fails_half_way_is_rolled_back(tmp_path):
    class Fragile(keras.layers.Layer):
        def build(self, input_shape):
            self.a = self.add_weight(shape=(2,), initializer="ones", name="a")
            self.b = self.add_weight(shape=(2,), initializer="ones", name="b")

        def call(self, x):
            return x * self.a * self.b

        def load_own_variables(self, store):
            self.a.assign(store["0"])
            raise RuntimeError("half-way failure")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2), Fragile()])
    model.save_weights(tmp_path / "f.weights.h5")
    model.layers[0].kernel.assign(np.zeros((2, 2), np.float32))
    model.layers[1].a.assign(np.full(2, 9.0, np.float32))
    before = [w.numpy() for w in model.weights]
    with pytest.raises(FileContentError, match="half-way failure"):
        model.load_weights(tmp_path / "f.weights.h5")
    for w, b in zip(model.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)


@pytest.mark.parametrize("content, name, error", [
    (b"not a zip at all", "x.keras", ArchiveError),
    (b"not hdf5 either", "x.weights.h5", FileContentError),
    (b"\x89HDF\r\n\x1a\n garbage", "x.h5", FileContentError),
])
def test_wrong_kind_of_file(tmp_path, content, name, error):
    path = tmp_path / name
    path.write_bytes(content)
    model = m_model()
    before = state(model)
    with pytest.raises(error):
        model.load_weights(path)
    assert_unchanged(model, before)


def test_keras_archive_without_weights_or_config(tmp_path):
    path = tmp_path / "x.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", "{}")
    with pytest.raises(ArchiveError, match="no member 'model.weights.h5'"):
        m_model().load_weights(path)
    with pytest.raises(FileContentError, match="does not describe a model"):
        keras.models.load_model(path)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", "{}")
    with pytest.raises(ArchiveError, match="no member 'config.json'"):
        keras.models.load_model(path)


def test_weights_file_given_to_load_model(tmp_path):
    with pytest.raises(FileContentError, match="No model config found"):
        keras.models.load_model(fixture("tfk2_weights.h5"))


# --------------------------------------------------------------- no code runs ---
def test_lambda_layer_is_refused_with_its_name():
    for safe_mode in (True, False):
        with pytest.raises(UnsafeContentError, match="Lambda layer 'lambda'.*never runs code"):
            keras.models.load_model(fixture("lam.keras"), safe_mode=safe_mode)


def test_unknown_custom_class_is_named():
    with pytest.raises(UnknownClassError, match=r"class 'Scale' \(object 'scale'\).*register_keras_serializable"):
        keras.models.load_model(fixture("cust.keras"))


def legacy_h5_from_archive(tmp_path, archive):
    """A legacy .h5 whose model_config is the config.json of a Keras archive."""
    with zipfile.ZipFile(fixture(archive)) as z:
        config = json.loads(z.read("config.json"))
    path = tmp_path / archive.replace(".keras", ".h5")
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
    return path


def test_lambda_and_unknown_class_are_refused_in_legacy_h5_too(tmp_path):
    with pytest.raises(UnsafeContentError, match="Lambda layer 'lambda'"):
        keras.models.load_model(legacy_h5_from_archive(tmp_path, "lam.keras"))
    with pytest.raises(UnknownClassError, match="'Scale'"):
        keras.models.load_model(legacy_h5_from_archive(tmp_path, "cust.keras"))


def test_function_named_in_a_file_is_not_imported(tmp_path):
    with zipfile.ZipFile(fixture("m.keras")) as z:
        config = json.loads(z.read("config.json"))
        weights = z.read("model.weights.h5")
    config["config"]["layers"][1]["config"]["activation"] = {
        "module": "os", "class_name": "function", "config": "system", "registered_name": "function"}
    path = tmp_path / "evil.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", weights)
    with pytest.raises(UnknownClassError, match="function 'system'"):
        keras.models.load_model(path)


def test_loading_never_unpickles_evals_or_imports(tmp_path, monkeypatch):
    loaders = [lambda: keras.models.load_model(fixture(n)) for n in ("m.keras", "func.keras", "sgd.keras",
                                                                      "m.h5", "tfk2.h5")]
    loaders.append(lambda: m_model().load_weights(fixture("m.weights.h5")))
    loaders.append(lambda: m_model().load_weights(fixture("tfk2_weights.h5")))
    for load in loaders:   # warm up: every module loading needs is imported now
        load()
    real_import = builtins.__import__

    def forbidden(*args, **kwargs):
        raise AssertionError(f"forbidden call while loading: {args[:1]}")

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name not in sys.modules:
            raise AssertionError(f"import of {name!r} while loading")
        return real_import(name, globals, locals, fromlist, level)
    for module, attr in ((builtins, "eval"), (builtins, "exec"), (builtins, "compile"), (pickle, "loads"),
                         (pickle, "load"), (pickle, "Unpickler"), (marshal, "loads"), (importlib, "import_module")):
        monkeypatch.setattr(module, attr, forbidden)
    monkeypatch.setattr(builtins, "__import__", guarded_import)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a guarded call swallowed into a warning would fail too
        for load in loaders:
            load()
    with pytest.raises(UnsafeContentError):
        keras.models.load_model(fixture("lam.keras"))


# ----------------------------------------------------------------- file names ---
def test_filename_rules():
    model = m_model()
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        model.save_weights("foo.h5")
    with pytest.raises(ValueError, match="Invalid filepath extension"):
        model.save("model.tf")
    with pytest.raises(ValueError, match="by_name"):
        model.load_weights(fixture("m.keras"), by_name=True)
    with pytest.raises(ValueError, match="File not found"):
        keras.models.load_model("no_such_model.keras")
    with pytest.raises(ValueError, match="save_format"):
        model.save("m.keras", save_format="keras")
