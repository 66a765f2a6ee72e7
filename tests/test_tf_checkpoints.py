"""Checkpoints written by real TensorFlow 2.21 + Keras 3.15 (tests/fixtures/tf_checkpoints, see its
make_fixtures.py): tapeflow restores exactly their values into the equivalent tapeflow objects, now or when
the objects are created, with TensorFlow's status semantics; a restored Adam continues training to the
weights TensorFlow reached; list_variables / load_checkpoint say what TensorFlow says."""
import json
import os
import shutil

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError

keras = tf.keras
L = keras.layers
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tf_checkpoints")
MODULE = os.path.join(FIXTURES, "module", "ckpt-1")
ZOO = os.path.join(FIXTURES, "zoo", "ckpt")


def fixture_values(name):
    with np.load(os.path.join(FIXTURES, name + "_values.npz")) as f:
        return {key: f[key] for key in f.files}


def numbered(values, prefix):
    count = sum(k.startswith(prefix + "_") and k.rsplit("_", 1)[1].isdigit() for k in values)
    return [values[f"{prefix}_{i}"] for i in range(count)]


def assert_values(variables, expected):
    assert len(variables) == len(expected)
    for variable, value in zip(variables, expected):
        assert np.dtype(variable.dtype.name) == value.dtype
        np.testing.assert_array_equal(np.array(variable), value)


# --------------------------------------------------------------- tf.Module ---
class Net(tf.Module):
    """The structure of make_fixtures.py's Net, with other values."""

    def __init__(self, w_shape=(2, 3)):
        super().__init__()
        self.w = tf.Variable(np.full(w_shape, 9.0, np.float32))
        self.sub = tf.Module()
        self.sub.b = tf.Variable([9.0, 9.0], dtype=tf.float64)
        self.vs = [tf.Variable(9, dtype=tf.int32), tf.Variable(np.int64(9))]
        self.table = {"a.b": tf.Variable(np.full(4, 9, np.float16)), "c/d": tf.Variable([False, True, False])}

    def by_key(self):
        return {"net/w": self.w, "net/sub/b": self.sub.b, "net/vs/0": self.vs[0], "net/vs/1": self.vs[1],
                "net/table/a..b": self.table["a.b"], "net/table/c.Sd": self.table["c/d"]}


def expected_module_values(checkpoint):
    ref = fixture_values("module")
    live = {**{f"{k}/.ATTRIBUTES/VARIABLE_VALUE": v for k, v in checkpoint.net.by_key().items()},
            "step/.ATTRIBUTES/VARIABLE_VALUE": checkpoint.step,
            "save_counter/.ATTRIBUTES/VARIABLE_VALUE": checkpoint.save_counter}
    assert sorted(live) == sorted(ref)
    return [live[k] for k in sorted(ref)], [ref[k] for k in sorted(ref)]


def test_module_tree_restores_every_value_exactly():
    checkpoint = tf.train.Checkpoint(net=Net(), step=tf.Variable(np.int64(0)))
    status = checkpoint.restore(os.path.dirname(MODULE))     # a directory: its latest checkpoint
    assert_values(*expected_module_values(checkpoint))
    status.assert_consumed()
    status.assert_nontrivial_match()


def test_module_attached_after_restore_gets_its_values_then():
    checkpoint = tf.train.Checkpoint()
    status = checkpoint.restore(MODULE)
    checkpoint.net = Net()
    with pytest.raises(AssertionError, match=r"\(root\)\.step has not been restored"):
        status.assert_consumed()
    checkpoint.step = tf.Variable(np.int64(0))
    assert_values(*expected_module_values(checkpoint))
    status.assert_consumed()


def test_module_that_does_not_fit_changes_nothing():
    checkpoint = tf.train.Checkpoint(net=Net(w_shape=(3, 2)), step=tf.Variable(np.int64(0)))
    live, _ = expected_module_values(checkpoint)
    before = [np.array(v) for v in live]
    with pytest.raises(FileFormatError, match=r"net\.w: the variable has shape \(3, 2\), the checkpoint has shape "
                                              r"\(2, 3\)"):
        checkpoint.restore(MODULE)
    assert_values(live, before)


def test_read_ignores_unknown_names_with_expect_partial():
    holder = tf.Module()
    holder.other = tf.Variable(1.0)
    checkpoint = tf.train.Checkpoint(net=holder)
    status = checkpoint.read(MODULE).expect_partial()
    with pytest.raises(AssertionError, match=r"1 Python objects .*\['net/other"):
        status.assert_existing_objects_matched()
    assert float(holder.other.numpy()) == 1.0 and int(checkpoint.save_counter.numpy()) == 1


# ------------------------------------------------------ listing and reading ---
@pytest.mark.parametrize("prefix", ["module/ckpt-1", "keras", "zoo/ckpt"])
def test_list_variables_and_reader_say_what_tensorflow_says(prefix):
    with open(os.path.join(FIXTURES, "listings.json")) as f:
        listing = json.load(f)[prefix]
    path = os.path.join(FIXTURES, prefix)
    assert [[k, s] for k, s in tf.train.list_variables(path)] == listing["variables"]
    reader = tf.train.load_checkpoint(path)
    assert {k: d.name for k, d in reader.get_variable_to_dtype_map().items()} == listing["dtypes"]
    assert reader.get_variable_to_shape_map() == dict(listing["variables"])
    assert reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH") and not reader.has_tensor("absent")
    with pytest.raises(ValueError, match="'absent' not found"):
        reader.get_tensor("absent")
    reader.close()


def test_load_checkpoint_and_load_variable_give_the_saved_arrays():
    ref = fixture_values("module")
    reader = tf.train.load_checkpoint(MODULE)
    for key, value in ref.items():
        got = reader.get_tensor(key)
        assert got.dtype == value.dtype
        np.testing.assert_array_equal(got, value)
        np.testing.assert_array_equal(tf.train.load_variable(MODULE, key), value)
    from tensorboard.compat.proto.trackable_object_graph_pb2 import TrackableObjectGraph
    graph = TrackableObjectGraph.FromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    assert [c.local_name for c in graph.nodes[0].children] == ["net", "step", "save_counter"]
    reader.close()


# ----------------------------------------------------------- Keras + Adam ---
def sequential(with_input=True):
    layers = [L.Dense(3, activation="relu"), L.Dense(2)]
    return keras.Sequential(([keras.Input((4,))] if with_input else []) + layers)


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def test_manager_directory_restores_model_and_adam_and_training_continues_as_in_tensorflow(tmp_path):
    ref = fixture_values("keras")
    directory = tmp_path / "keras"
    shutil.copytree(os.path.join(FIXTURES, "keras"), directory)
    assert tf.train.latest_checkpoint(directory) == str(directory / "ckpt-2")
    model, optimizer = sequential(), keras.optimizers.Adam(0.01)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)
    assert manager.checkpoints == [str(directory / "ckpt-1"), str(directory / "ckpt-2")]
    assert manager.restore_or_initialize() == str(directory / "ckpt-2")
    assert_values(model.weights, numbered(ref, "weight"))
    assert int(checkpoint.save_counter.numpy()) == 2
    optimizer.build(model.trainable_variables)     # the slots are created, and get their saved values
    assert_values(optimizer.variables, numbered(ref, "optimizer"))
    checkpoint.restore(manager.latest_checkpoint).assert_consumed()
    for _ in range(2):
        train_step(model, optimizer, ref["x"], ref["y"])
    for variable, expected in zip(model.weights, numbered(ref, "continued")):
        np.testing.assert_allclose(np.array(variable), expected, rtol=1e-6, atol=1e-7)
    # The manager goes on in tapeflow's format and rotates TensorFlow's oldest checkpoint out, files and all.
    saved = manager.save()
    assert saved == str(directory / "ckpt-3") and os.path.isfile(saved + ".h5")
    assert manager.checkpoints == [str(directory / "ckpt-2"), str(directory / "ckpt-3")]
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index",
                                             "ckpt-3.h5"]


def test_unbuilt_model_and_optimizer_get_their_values_when_built():
    ref = fixture_values("keras")
    model, optimizer = sequential(with_input=False), keras.optimizers.Adam(0.01)
    status = tf.train.Checkpoint(model=model, optimizer=optimizer).restore(os.path.join(FIXTURES, "keras"))
    with pytest.raises(AssertionError, match="has not been restored"):
        status.assert_consumed()
    train_step(model, optimizer, ref["x"], ref["y"])        # builds the model (restored), then the slots
    status.assert_consumed()
    first = keras.optimizers.Adam(0.01)
    reference = sequential()
    tf.train.Checkpoint(model=reference, optimizer=first).restore(os.path.join(FIXTURES, "keras"))
    train_step(reference, first, ref["x"], ref["y"])
    assert_values(model.weights, [np.array(v) for v in reference.weights])
    train_step(model, optimizer, ref["x"], ref["y"])
    for variable, expected in zip(model.weights, numbered(ref, "continued")):
        np.testing.assert_allclose(np.array(variable), expected, rtol=1e-6, atol=1e-7)


def test_older_checkpoint_of_the_directory_differs_and_restores_too():
    ref = fixture_values("keras")
    model = sequential()
    tf.train.Checkpoint(model=model).read(os.path.join(FIXTURES, "keras", "ckpt-1")).expect_partial()
    reader = tf.train.load_checkpoint(os.path.join(FIXTURES, "keras", "ckpt-1"))
    kernel = reader.get_tensor("optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE")
    np.testing.assert_array_equal(np.array(model.weights[0]), kernel)
    assert not np.array_equal(kernel, ref["weight_0"])


# -------------------------------------------------- functional + subclass ---
class Subclassed(keras.Model):
    def __init__(self):
        super().__init__()
        self.emb = L.Embedding(10, 4)
        self.head = L.Dense(2)
        self.offset = self.add_weight(shape=(2,), initializer="random_normal", name="offset")

    def call(self, ids):
        return self.head(tf.reduce_mean(self.emb(ids), axis=1)) + self.offset


def functional():
    inputs = keras.Input((6, 5))
    h = L.Conv1D(4, 3)(inputs)
    h = L.BatchNormalization()(h)
    h = L.LSTM(3)(h)
    model = keras.Model(inputs, L.Dense(2)(h))
    model.compile(optimizer="sgd", loss="mse")
    return model


def attention():
    inputs = keras.Input((5, 8))
    h = L.MultiHeadAttention(2, 4)(inputs, inputs)
    h = L.LayerNormalization()(h)
    h = L.Bidirectional(L.GRU(3, return_sequences=True))(h)
    h = L.Conv1D(2, 2)(h)
    h = L.TimeDistributed(L.Dense(2))(h)
    return keras.Model(inputs, L.Dense(2)(L.Flatten()(h)))


def test_functional_and_subclassed_models_restore_and_predict_as_in_tensorflow():
    ref = fixture_values("zoo")
    model, subclassed, nested = functional(), Subclassed(), attention()
    status = tf.train.Checkpoint(functional=model, subclassed=subclassed, attention=nested).restore(ZOO)
    assert_values(nested.weights, numbered(ref, "attention"))
    np.testing.assert_allclose(nested.predict(ref["att_x"], verbose=0), ref["attention_pred"], rtol=1e-5,
                               atol=1e-6)
    assert_values(model.weights, numbered(ref, "functional"))
    assert model.optimizer.iterations.numpy() == 1   # the compiled optimizer's state, after one epoch of fit
    np.testing.assert_allclose(model.predict(ref["seq_x"], verbose=0), ref["functional_pred"], rtol=1e-5,
                               atol=1e-6)
    assert not subclassed.built
    np.testing.assert_allclose(subclassed(ref["ids"]).numpy(), ref["subclassed_pred"], rtol=1e-6, atol=1e-7)
    assert_values(subclassed.weights, numbered(ref, "subclassed"))
    # Written by Checkpoint.write, the checkpoint has no save_counter; TensorFlow's status says so too.
    with pytest.raises(AssertionError, match=r"1 Python objects .*\['save_counter"):
        status.assert_consumed()
    assert status._restoration.unrestored_nodes() == []
