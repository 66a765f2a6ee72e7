"""Files written by tapeflow have exactly the layout of the files real Keras wrote (the fixtures):
the same HDF5 groups, datasets, shapes, dtypes and attributes, the same zip members and config.json.
That is what lets real Keras 3 read them."""
import io
import json
import os
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
keras = tf.keras


def fixture(name):
    return os.path.join(HERE, name)


def h5_tree(f):
    """{path: (kind, shape, dtype, {attr: (type, value)})} of every object and the root."""
    def attrs(obj):
        out = {}
        for key in obj.attrs:
            value = obj.attrs[key]
            type_id = obj.attrs.get_id(key).dtype
            encoding = h5py.check_string_dtype(type_id)
            kind = encoding.encoding if encoding else np.dtype(type_id).str
            out[key] = (kind, np.asarray(value).shape,
                        value.tolist() if isinstance(value, np.ndarray) else value)
        return out
    tree = {"/": ("G", None, None, attrs(f))}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            tree[name] = ("D", obj.shape, obj.dtype.str, attrs(obj))
        else:
            tree[name] = ("G", None, None, attrs(obj))
    f.visititems(visit)
    return tree


def assert_same_tree(ours, theirs, ignore_attrs=()):
    a, b = h5_tree(ours), h5_tree(theirs)
    for tree in (a, b):
        for entry in tree.values():
            for key in ignore_attrs:
                entry[3].pop(key, None)
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key] == b[key], key


def trained_m_model():
    """The spec's reference model (section 1.0), built and trained as Keras did for the fixtures."""
    model = keras.Sequential([keras.Input((4,), name="input_layer"),
                              keras.layers.Dense(8, activation="relu", name="dense"),
                              keras.layers.BatchNormalization(name="batch_normalization"),
                              keras.layers.Dense(3, activation="softmax", name="dense_1")], name="seq")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    rng = np.random.default_rng(0)
    model.fit(rng.random((32, 4), dtype=np.float32), rng.integers(0, 3, 32), epochs=1, batch_size=16, verbose=0)
    return model


@pytest.fixture(scope="module")
def m_model():
    return trained_m_model()


def test_weights_h5_layout_is_keras(m_model, tmp_path):
    path = tmp_path / "m.weights.h5"
    m_model.save_weights(path)
    with h5py.File(path) as ours, h5py.File(fixture("m.weights.h5")) as theirs:
        assert_same_tree(ours, theirs)
        assert ours["optimizer/vars/0"].dtype == np.int64 and ours["optimizer/vars/0"].shape == ()
        assert ours["vars"].attrs["name"] == "seq" and len(ours["vars"]) == 0
        for ds in ("layers/dense/vars/0", "optimizer/vars/13"):
            assert ours[ds].chunks is None and ours[ds].compression is None


def test_keras_archive_layout_and_config_are_keras(m_model, tmp_path):
    path = tmp_path / "m.keras"
    m_model.save(path)
    with zipfile.ZipFile(path) as ours, zipfile.ZipFile(fixture("m.keras")) as theirs:
        assert ours.testzip() is None
        assert ours.namelist() == theirs.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        for info in ours.infolist():
            assert info.compress_type == zipfile.ZIP_STORED and info.create_system == 3
            assert info.external_attr == theirs.getinfo(info.filename).external_attr
        metadata = json.loads(ours.read("metadata.json"))
        assert list(metadata) == ["keras_version", "date_saved"] and metadata["keras_version"] == "3.15.1"
        assert len(metadata["date_saved"]) == 19 and metadata["date_saved"][10] == "@"

        def strip_ids(node):
            if isinstance(node, dict):
                return {k: strip_ids(v) for k, v in node.items() if k != "shared_object_id"}
            if isinstance(node, list):
                return [strip_ids(v) for v in node]
            return node
        assert strip_ids(json.loads(ours.read("config.json"))) == strip_ids(json.loads(theirs.read("config.json")))
        with h5py.File(io.BytesIO(ours.read("model.weights.h5"))) as a, \
                h5py.File(io.BytesIO(theirs.read("model.weights.h5"))) as b:
            assert_same_tree(a, b)


def test_sgd_momentum_archive_is_keras(tmp_path):
    model = keras.Sequential([keras.Input((2,), name="input_layer_3"), keras.layers.Dense(1, name="dense_6")],
                             name="sequential_1")
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss="mse", metrics=["mae"])
    model.fit(np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32), epochs=1, batch_size=4, verbose=0)
    model.save(tmp_path / "sgd.keras")
    with zipfile.ZipFile(tmp_path / "sgd.keras") as ours, zipfile.ZipFile(fixture("sgd.keras")) as theirs:
        assert json.loads(ours.read("config.json"))["compile_config"] == \
            json.loads(theirs.read("config.json"))["compile_config"]
        with h5py.File(io.BytesIO(ours.read("model.weights.h5"))) as a, \
                h5py.File(io.BytesIO(theirs.read("model.weights.h5"))) as b:
            assert_same_tree(a, b)


def test_functional_config_uses_keras_module_names(tmp_path):
    with zipfile.ZipFile(fixture("func.keras")) as z:
        theirs = json.loads(z.read("config.json"))
    model = keras.models.load_model(fixture("func.keras"))
    model.save(tmp_path / "f.keras")
    with zipfile.ZipFile(tmp_path / "f.keras") as z:
        ours = json.loads(z.read("config.json"))
    assert (ours["module"], ours["class_name"], ours["registered_name"]) == \
           ("keras.src.models.functional", "Functional", "Functional")
    assert ours["config"]["input_layers"] == theirs["config"]["input_layers"]
    assert ours["config"]["output_layers"] == theirs["config"]["output_layers"]
    for a, b in zip(ours["config"]["layers"], theirs["config"]["layers"]):
        assert (a["module"], a["class_name"], a["name"]) == (b["module"], b["class_name"], b["name"])
        # Keras also records BatchNormalization's ``mask=None`` keyword; the tensors are the graph.
        assert [n["args"] for n in a["inbound_nodes"]] == [n["args"] for n in b["inbound_nodes"]]
    with zipfile.ZipFile(tmp_path / "f.keras") as ours_zip, zipfile.ZipFile(fixture("func.keras")) as theirs_zip:
        with h5py.File(io.BytesIO(ours_zip.read("model.weights.h5"))) as a, \
                h5py.File(io.BytesIO(theirs_zip.read("model.weights.h5"))) as b:
            assert_same_tree(a, b)


def test_nested_sequential_paths_are_keras(tmp_path):
    x = keras.Input((4,), name="x")
    block = keras.Sequential([keras.layers.Dense(3), keras.layers.BatchNormalization()], name="block")
    model = keras.Model(x, keras.layers.Dense(1, name="head")(block(x)), name="func")
    model.save_weights(tmp_path / "f.weights.h5")
    with h5py.File(tmp_path / "f.weights.h5") as ours, h5py.File(fixture("func.weights.h5")) as theirs:
        # Same tree; the auto-generated layer names inside the block may differ (Keras counts per process).
        assert_same_tree(ours, theirs, ignore_attrs=("name",))
        assert ours["layers/sequential/vars"].attrs["name"] == "block"
        assert ours["layers/input_layer/vars"].attrs["name"] == "x"


def test_subclassed_model_paths_follow_attribute_names(tmp_path):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.enc = keras.layers.Dense(4)
            self.blocks = [keras.layers.Dense(4), keras.layers.Dense(4)]
            self.dec = keras.layers.Dense(2)

        def call(self, x):
            x = self.enc(x)
            for block in self.blocks:
                x = block(x)
            return self.dec(x)
    net = Net()
    net(np.zeros((1, 3), np.float32))
    net.save_weights(tmp_path / "n.weights.h5")
    with h5py.File(tmp_path / "n.weights.h5") as f:
        groups = sorted(name for name, obj in h5_items(f) if name.endswith("/vars") or name == "vars")
    assert groups == ["blocks/dense/vars", "blocks/dense_1/vars", "dec/vars", "enc/vars", "vars"]


def h5_items(f):
    out = []
    f.visititems(lambda name, obj: out.append((name, obj)))
    return out


def test_legacy_h5_layout_is_keras_3(m_model, tmp_path):
    path = tmp_path / "m.h5"
    with pytest.warns(UserWarning, match="considered legacy"):
        m_model.save(path)
    with h5py.File(path) as ours, h5py.File(fixture("m.h5")) as theirs:
        assert_same_tree(ours, theirs, ignore_attrs=("model_config", "training_config"))
        ours_model = json.loads(ours.attrs["model_config"])
        theirs_model = json.loads(theirs.attrs["model_config"])
        assert ours_model == theirs_model
        assert json.loads(ours.attrs["training_config"]) == json.loads(theirs.attrs["training_config"])
        assert ours["model_weights/top_level_model_weights"].attrs["weight_names"].dtype == np.float64


def test_legacy_weight_names_never_collide(tmp_path):
    class Twin(keras.layers.Layer):
        def build(self, input_shape):
            self.a = self.add_weight(shape=(2,), initializer="ones")
            self.b = self.add_weight(shape=(3,), initializer="zeros")   # same default name: "variable"

        def call(self, x):
            return x
    model = keras.Sequential([keras.Input((2,)), Twin(name="twin")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save(tmp_path / "t.h5")
    with h5py.File(tmp_path / "t.h5") as f:
        names = [n for n in f["model_weights/twin"].attrs["weight_names"]]
    assert len(set(names)) == 2
    loaded = keras.models.load_model(tmp_path / "t.h5", custom_objects={"Twin": Twin})
    np.testing.assert_array_equal(loaded.layers[0].a.numpy(), np.ones(2))
    np.testing.assert_array_equal(loaded.layers[0].b.numpy(), np.zeros(3))
