"""tf.train checkpoints: TF's key names and state file, exact resumption of training, deferred restoration,
CheckpointManager rotation, status assertions, damaged or hostile files, atomic saves; BackupAndRestore."""
import json
import os
import warnings

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError

keras = tf.keras
X = np.random.default_rng(0).standard_normal((32, 3)).astype(np.float32)
Y = X @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def sequential(seed=3):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Activation("tanh"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.l1 = keras.layers.Dense(5)
        self.l2 = keras.layers.Dense(1)

    def call(self, x):
        return self.l2(self.l1(x))


def train_steps(model, optimizer, steps=3):
    for i in range(steps):
        x = X[i * 8:(i + 1) * 8]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - Y[i * 8:(i + 1) * 8]) ** 2)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


def values(variables):
    return [np.array(v) for v in variables]


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------ format ---
def test_keys_and_state_file_follow_tensorflow(tmp_path):
    model = sequential()
    model.fit(X, Y, epochs=1, batch_size=16, verbose=0)
    net = Net()
    net(X[:1])
    step = tf.Variable(5, dtype=tf.int64)
    ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, net=net, step=step)
    prefix = ckpt.save(tmp_path / "ckpt")
    assert prefix == str(tmp_path / "ckpt-1")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1.h5"]
    assert (tmp_path / "checkpoint").read_text() == ('model_checkpoint_path: "ckpt-1"\n'
                                                     'all_model_checkpoint_paths: "ckpt-1"\n')
    listed = dict(tf.train.list_variables(tmp_path))
    kernel = model.layers[0].kernel
    assert listed["model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 4]
    assert listed["model/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE"] == [1]
    assert listed["net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 5]
    assert listed["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert listed["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert listed["step/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in listed
    # Each variable once, under its first (breadth-first) path: the model's optimizer is the top-level one.
    assert not any(key.startswith("model/optimizer") for key in listed)
    slots = [key for key in listed if key.startswith("optimizer/_variables/")]
    assert len(slots) == len(model.optimizer.variables) - 2
    np.testing.assert_array_equal(
        tf.train.load_variable(prefix, "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"), kernel)
    assert int(tf.train.load_variable(tmp_path, "save_counter/.ATTRIBUTES/VARIABLE_VALUE")) == 1
    with h5py.File(tmp_path / "ckpt-1.h5", "r") as f:  # the file holds TensorFlow's keys as HDF5 paths
        np.testing.assert_array_equal(f["net/l1/bias/.ATTRIBUTES/VARIABLE_VALUE"][()], net.l1.bias)


def test_root_object_children_are_top_level_keys(tmp_path):
    model = sequential()
    path = tf.train.Checkpoint(model).write(tmp_path / "root")
    assert path == str(tmp_path / "root")
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert not (tmp_path / "checkpoint").exists()  # write() records no state


def test_module_variables_lists_and_dicts_round_trip(tmp_path):
    class Block(tf.Module):
        def __init__(self, scale):
            super().__init__()
            self.w = tf.Variable(np.full((2, 2), scale, np.float32))
            self.items = [tf.Variable(scale + 1.0), tf.Variable(np.arange(3.0) * scale)]
            self.named = {"a": tf.Variable(np.int32(7 * scale))}

    source, target = Block(1.0), Block(0.0)
    path = tf.train.Checkpoint(block=source).write(tmp_path / "m")
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert "block/items/1/.ATTRIBUTES/VARIABLE_VALUE" in keys and "block/named/a/.ATTRIBUTES/VARIABLE_VALUE" in keys
    tf.train.Checkpoint(block=target).read(path).assert_consumed()
    assert_same(values(target.variables), values(source.variables))


# ------------------------------------------------------- exact resumption ---
@pytest.mark.parametrize("built_optimizer", [False, True])
def test_resumed_training_is_identical(tmp_path, built_optimizer):
    model = sequential()
    model.fit(X, Y, epochs=2, batch_size=8, shuffle=False, verbose=0)
    prefix = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(tmp_path / "ckpt")
    model.fit(X, Y, epochs=2, batch_size=8, shuffle=False, verbose=0)

    resumed = sequential(seed=11)  # other initial weights
    if built_optimizer:  # an optimizer that already has slots, filled with other values
        resumed.fit(X[:8], -Y[:8], epochs=1, verbose=0)
    status = tf.train.Checkpoint(model=resumed, optimizer=resumed.optimizer).restore(prefix)
    assert resumed.optimizer.built == built_optimizer
    assert int(resumed.optimizer.iterations.numpy()) == 8
    resumed.fit(X, Y, epochs=2, batch_size=8, shuffle=False, verbose=0)
    status.assert_consumed()
    assert_same(values(resumed.weights), values(model.weights))
    assert_same(values(resumed.optimizer.variables), values(model.optimizer.variables))


def test_restore_from_directory_uses_the_latest(tmp_path):
    v = tf.Variable(1.0)
    ckpt = tf.train.Checkpoint(v=v)
    ckpt.save(tmp_path / "c")
    v.assign(2.0)
    ckpt.save(tmp_path / "c")
    v.assign(3.0)
    ckpt.restore(tmp_path).assert_consumed()
    assert float(v.numpy()) == 2.0
    assert int(ckpt.save_counter.numpy()) == 2
    assert ckpt.save(tmp_path / "c").endswith("c-3")


# ---------------------------------------------------------------- deferred ---
def test_deferred_restoration_into_an_unbuilt_model_and_optimizer(tmp_path):
    net, optimizer = Net(), keras.optimizers.Adam(0.1)
    train_steps(net, optimizer)
    prefix = tf.train.Checkpoint(net=net, opt=optimizer).save(tmp_path / "ckpt")
    train_steps(net, optimizer, steps=2)

    net2, optimizer2 = Net(), keras.optimizers.Adam(0.1)
    status = tf.train.Checkpoint(net=net2, opt=optimizer2).restore(prefix)
    assert not net2.l1.built and not optimizer2.built
    status.assert_existing_objects_matched()  # nothing that exists now lacks a value
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint.*\(root\)\.net\.l\d\.(kernel|bias)"):
        status.assert_consumed()
    net2(X[:1])  # the layers build: their variables get the checkpoint's values at once
    assert "build" not in vars(net2.l1)
    with pytest.raises(AssertionError, match=r"\(root\)\.opt\._variables"):
        status.assert_consumed()  # the slots come when the optimizer builds
    train_steps(net2, optimizer2, steps=2)
    status.assert_consumed()
    assert_same(values(net2.weights), values(net.weights))
    assert_same(values(optimizer2.variables), values(optimizer.variables))


def test_deferred_restoration_into_an_unbuilt_sequential(tmp_path):
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2)])
    model(X[:2])
    path = tf.train.Checkpoint(model=model).save(tmp_path / "seq")   # save(): with the counter restore() creates
    other = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2)])
    status = tf.train.Checkpoint(model=other).restore(path)
    other(X[:2])
    status.assert_consumed()
    assert_same(values(other.weights), values(model.weights))


def test_attribute_set_after_restore_gets_its_value(tmp_path):
    path = tf.train.Checkpoint(step=tf.Variable(7, dtype=tf.int64)).write(tmp_path / "c")
    ckpt = tf.train.Checkpoint()
    status = ckpt.read(path)    # read(), unlike restore(), creates no save_counter (which write() did not save)
    with pytest.raises(AssertionError, match=r"\(root\)\.step"):
        status.assert_consumed()
    ckpt.step = tf.Variable(0, dtype=tf.int64)
    assert int(ckpt.step.numpy()) == 7
    status.assert_consumed()


def test_deferred_value_of_the_wrong_shape_raises_when_the_variable_appears(tmp_path):
    net = Net()
    net(X[:1])
    path = tf.train.Checkpoint(net=net).write(tmp_path / "c")
    other = Net()
    tf.train.Checkpoint(net=other).restore(path)
    with pytest.raises(FileFormatError, match=r"\(root\)\.net\.l1\.kernel: the variable has shape \(4, 5\), the "
                                              r"checkpoint has shape \(3, 5\)"):
        other(np.zeros((1, 4), np.float32))


# ------------------------------------------------------------------ status ---
def test_status_assertions(tmp_path):
    model = sequential()
    model.fit(X, Y, epochs=1, verbose=0)
    prefix = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(tmp_path / "c")

    partial = tf.train.Checkpoint(model=sequential()).restore(prefix)
    partial.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint .*\(root\)\.optimizer"):
        partial.assert_consumed()
    assert partial.expect_partial() is partial
    partial.assert_nontrivial_match()

    extra, same = tf.Variable(0.0), sequential()
    status = tf.train.Checkpoint(model=same, optimizer=same.optimizer, extra=extra).restore(prefix)
    with pytest.raises(AssertionError, match="1 Python objects that were not bound to checkpointed values.*extra"):
        status.assert_existing_objects_matched()

    unrelated = tf.train.Checkpoint(other=tf.Variable(0.0)).restore(prefix)
    with pytest.raises(AssertionError, match="Nothing except the root object matched"):
        unrelated.assert_nontrivial_match()

    nothing = tf.train.Checkpoint(model=model).restore(None)
    for check in (nothing.assert_consumed, nothing.assert_existing_objects_matched):
        with pytest.raises(AssertionError, match=r"No checkpoint specified \(save_path=None\)"):
            check()


def test_constructor_rejects_what_cannot_be_tracked():
    with pytest.raises(ValueError, match="`Checkpoint` was expecting model to be a trackable object"):
        tf.train.Checkpoint(model=3)


# ----------------------------------------------------------------- manager ---
def test_manager_rotates_and_recovers(tmp_path):
    v = tf.Variable(0.0)
    ckpt = tf.train.Checkpoint(v=v)
    manager = tf.train.CheckpointManager(ckpt, tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None and tf.train.latest_checkpoint(tmp_path) is None
    for i in range(4):
        v.assign(float(i))
        assert manager.save() == str(tmp_path / f"ckpt-{i + 1}")
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.h5", "ckpt-4.h5"]
    assert tf.train.latest_checkpoint(tmp_path) == str(tmp_path / "ckpt-4")
    lines = (tmp_path / "checkpoint").read_text().splitlines()
    assert lines[:3] == ['model_checkpoint_path: "ckpt-4"', 'all_model_checkpoint_paths: "ckpt-3"',
                         'all_model_checkpoint_paths: "ckpt-4"']
    assert [line.split(":")[0] for line in lines[3:]] == ["all_model_checkpoint_timestamps"] * 2 + \
        ["last_preserved_timestamp"]

    again = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), tmp_path, max_to_keep=2)
    assert again.checkpoints == manager.checkpoints and again.latest_checkpoint == str(tmp_path / "ckpt-4")
    assert again.save(checkpoint_number=10) == str(tmp_path / "ckpt-10")
    assert again.checkpoints == [str(tmp_path / "ckpt-4"), str(tmp_path / "ckpt-10")]
    assert not (tmp_path / "ckpt-3.h5").exists()
    v.assign(-1.0)
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-10")
    assert float(v.numpy()) == 3.0


def test_manager_keeps_every_n_hours_and_checks_interval(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    keeper = tf.train.CheckpointManager(ckpt, tmp_path / "keep", max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
    for _ in range(3):
        keeper.save()
    assert keeper.checkpoints == [str(tmp_path / "keep" / "ckpt-3")]
    assert sorted(os.listdir(tmp_path / "keep")) == ["checkpoint", "ckpt-1.h5", "ckpt-2.h5", "ckpt-3.h5"]

    step = tf.Variable(0, dtype=tf.int64)
    with pytest.raises(ValueError, match="`step_counter` should be passed"):
        tf.train.CheckpointManager(ckpt, tmp_path / "i", max_to_keep=3, checkpoint_interval=5)
    with pytest.raises(ValueError, match="positive integer or `None` for `max_to_keep`"):
        tf.train.CheckpointManager(ckpt, tmp_path / "i", max_to_keep=0)
    interval = tf.train.CheckpointManager(ckpt, tmp_path / "i", max_to_keep=None, step_counter=step,
                                          checkpoint_interval=5)
    assert interval.checkpoint_interval == 5
    saved = []
    for i in range(12):
        step.assign(i)
        saved.append(interval.save(checkpoint_number=step) is not None)
    assert saved == [i in (0, 5, 10) for i in range(12)]
    assert interval.checkpoints == [str(tmp_path / "i" / f"ckpt-{n}") for n in (0, 5, 10)]
    assert interval.save() is None  # step 11: too early
    assert interval.save(check_interval=False) is not None  # forced
    assert interval.save(check_interval=False) is None  # but never twice at the same step


def test_latest_checkpoint_of_a_missing_checkpoint_is_none(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    prefix = ckpt.save(tmp_path / "c")
    os.remove(prefix + ".h5")
    with pytest.warns(UserWarning, match="Couldn't match files for checkpoint"):
        assert tf.train.latest_checkpoint(tmp_path) is None


# --------------------------------------------------- damaged and hostile files ---
def saved_model_and_copy(tmp_path):
    model = sequential()
    model.fit(X, Y, epochs=1, verbose=0)
    prefix = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(tmp_path / "c")
    target = sequential(seed=9)
    target.fit(X[:8], Y[:8], epochs=1, verbose=0)
    return prefix, target


def assert_restore_fails_and_changes_nothing(prefix, target, match):
    before = values(target.weights) + values(target.optimizer.variables)
    with pytest.raises(FileFormatError, match=match):
        tf.train.Checkpoint(model=target, optimizer=target.optimizer).restore(prefix)
    assert_same(values(target.weights) + values(target.optimizer.variables), before)


KERNEL = "model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE"


@pytest.mark.parametrize("damage, match", [
    (lambda f: (f.__delitem__(KERNEL), f.create_dataset(KERNEL, data=np.zeros((4, 2), np.float32))),
     r"layer_with_weights-1\.kernel: the variable has shape \(4, 1\), the checkpoint has shape \(4, 2\)"),
    (lambda f: (f.__delitem__(KERNEL), f.create_dataset(KERNEL, data=np.zeros((4, 1), np.int32))),
     r"the variable is float32, the checkpoint holds int32"),
    (lambda f: (f.__delitem__(KERNEL), f.create_dataset(KERNEL, data=np.zeros((4, 1), np.float64))),
     r"the variable is float32, the checkpoint holds float64"),
    (lambda f: f.__delitem__(KERNEL), r"has no value at '/model/layer_with_weights-1/kernel"),
    (lambda f: (f.__delitem__(KERNEL), f.create_group(KERNEL)), "should hold a variable's value, but it is a group"),
    (lambda f: (f.__delitem__(KERNEL), f.__setitem__(KERNEL, h5py.ExternalLink("/etc/passwd", "/x"))),
     "external link to the file '/etc/passwd'; a model file must not read other files"),
    (lambda f: (f.__delitem__(KERNEL), f.__setitem__(KERNEL, h5py.SoftLink("/save_counter/.ATTRIBUTES"))),
     "it is a soft link to .*follows no links"),
    (lambda f: f["optimizer/_variables/3/.ATTRIBUTES/VARIABLE_VALUE"].attrs.create("x", 1) or
     (f.__delitem__("optimizer/_variables/3/.ATTRIBUTES/VARIABLE_VALUE"),
      f.create_dataset("optimizer/_variables/3/.ATTRIBUTES/VARIABLE_VALUE", data=np.zeros(7, np.float32))),
     r"optimizer\._variables\.3: the variable has shape"),
])
def test_mismatched_or_hostile_values_change_nothing(tmp_path, damage, match):
    prefix, target = saved_model_and_copy(tmp_path)
    with h5py.File(prefix + ".h5", "a") as f:
        damage(f)
    assert_restore_fails_and_changes_nothing(prefix, target, match)


def rewrite_graph(path, edit):
    with h5py.File(path, "a") as f:
        graph = json.loads(f["_CHECKPOINTABLE_OBJECT_GRAPH"][()].tobytes().decode())
        text = edit(graph)
        del f["_CHECKPOINTABLE_OBJECT_GRAPH"]
        f.create_dataset("_CHECKPOINTABLE_OBJECT_GRAPH", data=np.frombuffer(text.encode(), np.uint8))


@pytest.mark.parametrize("edit, match", [
    (lambda g: "{not json", "object graph '/_CHECKPOINTABLE_OBJECT_GRAPH' is not readable JSON"),
    (lambda g: "[" * 100000, "is not readable JSON"),
    (lambda g: json.dumps({**g, "format": "other"}), "is not a tapeflow.train.Checkpoint object graph"),
    (lambda g: json.dumps({**g, "version": 99}), "has version 99"),
    (lambda g: json.dumps({**g, "nodes": [{"children": [["model", 10 ** 6]]}]}), r"malformed child \['model'"),
    (lambda g: json.dumps({**g, "nodes": [{"children": [["a", 0], ["a", 0]]}]}), "two children named 'a'"),
    (lambda g: json.dumps({**g, "nodes": [{"children": [["v", 1]]}, {"children": [], "key": "../../x"}]}),
     "invalid key|has no value"),
])
def test_damaged_object_graph_is_refused(tmp_path, edit, match):
    prefix, target = saved_model_and_copy(tmp_path)
    rewrite_graph(prefix + ".h5", edit)
    assert_restore_fails_and_changes_nothing(prefix, target, match)


def test_truncated_or_foreign_files(tmp_path):
    prefix, target = saved_model_and_copy(tmp_path)
    data = open(prefix + ".h5", "rb").read()
    with open(prefix + ".h5", "wb") as f:
        f.write(data[:len(data) // 2])
    assert_restore_fails_and_changes_nothing(prefix, target, r"Cannot read '.*c\.h5': it is not a valid HDF5 file")
    (tmp_path / "tfckpt.index").write_bytes(b"\x00" * 48)
    with pytest.raises(FileFormatError, match=r"tfckpt\.index'.*magic number .* \(not a LevelDB table\)"):
        tf.train.Checkpoint(model=target).restore(tmp_path / "tfckpt")
    with pytest.raises(FileNotFoundError, match="no checkpoint file .*absent.h5' or '.*absent.index'"):
        tf.train.Checkpoint(model=target).restore(tmp_path / "absent")


@pytest.mark.parametrize("text, match", [
    ('model_checkpoint_path: ckpt-1\n', r"line 1: the value of model_checkpoint_path must be a double-quoted"),
    ('model_checkpoint_path: "a"\nexec: "x"\n', r"line 2: unknown field 'exec'"),
    ('model_checkpoint_path: "a"\nlast_preserved_timestamp: 1e999\n', "must be finite"),
    ('model_checkpoint_path: "a\\q"\n', r"unknown escape \\q"),
    ("\xff\xfe", "it is not text|line 1"),
])
def test_damaged_state_file(tmp_path, text, match):
    (tmp_path / "checkpoint").write_bytes(text.encode("latin-1"))
    with pytest.raises(FileFormatError, match=f"checkpoint state file '.*checkpoint'.*({match})"):
        tf.train.latest_checkpoint(tmp_path)


def test_state_file_escapes_round_trip(tmp_path):
    directory = tmp_path / 'odd "dir"\\é'
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    prefix = ckpt.save(directory / "c\tk")
    assert tf.train.latest_checkpoint(directory) == prefix
    assert (directory / "checkpoint").read_text().startswith('model_checkpoint_path: "c\\tk-1"')


def test_failed_save_is_atomic(tmp_path, monkeypatch):
    v = tf.Variable(1.0)
    ckpt = tf.train.Checkpoint(v=v)
    first = ckpt.save(tmp_path / "c")
    before = (tmp_path / "checkpoint").read_text(), open(first + ".h5", "rb").read()
    v.assign(2.0)

    def broken(self, *args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(h5py.Group, "create_dataset", broken)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(tmp_path / "c")
    with pytest.raises(OSError, match="disk full"):
        ckpt.write(first)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["c-1.h5", "checkpoint"]  # no temporary file left behind
    assert ((tmp_path / "checkpoint").read_text(), open(first + ".h5", "rb").read()) == before
    assert int(ckpt.save_counter.numpy()) == 1
    assert ckpt.save(tmp_path / "c").endswith("c-2")


# -------------------------------------------------------- BackupAndRestore ---
class Interrupt(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 3:
            raise RuntimeError("interrupted")


def test_backup_and_restore_resumes_exactly(tmp_path):
    reference = sequential()
    reference.fit(X, Y, epochs=6, batch_size=8, shuffle=False, verbose=0)
    backup = tmp_path / "backup"
    model = sequential()
    with pytest.raises(RuntimeError, match="interrupted"):
        model.fit(X, Y, epochs=6, batch_size=8, shuffle=False, verbose=0,
                  callbacks=[keras.callbacks.BackupAndRestore(backup), Interrupt()])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "training_metadata.json"]
    assert json.loads((backup / "training_metadata.json").read_text()) == {"epoch": 3, "batch": 0}
    fresh = sequential(seed=5)  # a new process: other weights, an unbuilt optimizer
    history = fresh.fit(X, Y, epochs=6, batch_size=8, shuffle=False, verbose=0,
                        callbacks=[keras.callbacks.BackupAndRestore(backup)])
    assert len(history.history["loss"]) == 3
    assert not backup.exists()
    assert_same(values(fresh.weights), values(reference.weights))
    assert_same(values(fresh.optimizer.variables), values(reference.optimizer.variables))


def test_backup_and_restore_refuses_damaged_metadata_and_falls_back(tmp_path):
    backup = tmp_path / "b"
    model = sequential()
    model.fit(X, Y, epochs=2, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(backup, double_checkpoint=True, delete_checkpoint=False)])
    assert sorted(os.listdir(backup)) == ["_latest.weights.h5", "_training_metadata.json", "latest.weights.h5",
                                          "training_metadata.json"]
    (backup / "training_metadata.json").write_text('{"epoch": "import os"}')
    with pytest.raises(FileFormatError, match="'epoch' must be a non-negative integer"):
        sequential().fit(X, Y, epochs=3, verbose=0, callbacks=[keras.callbacks.BackupAndRestore(backup)])
    # With double_checkpoint the previous backup (after epoch 1) is used.
    history = sequential().fit(X, Y, epochs=3, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(backup, double_checkpoint=True)])
    assert len(history.history["loss"]) == 2
    with pytest.raises(ValueError, match="Invalid value for argument `save_freq`"):
        keras.callbacks.BackupAndRestore(backup, save_freq="batch")


def test_backup_every_n_batches(tmp_path):
    backup = tmp_path / "b"
    model = sequential()
    saved = []

    class Watch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if (backup / "latest.weights.h5").exists():
                saved.append(os.stat(backup / "latest.weights.h5").st_mtime_ns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X, Y, epochs=1, batch_size=4, verbose=0, callbacks=[
            keras.callbacks.BackupAndRestore(backup, save_freq=3, delete_checkpoint=False), Watch()])
    assert json.loads((backup / "training_metadata.json").read_text()) == {"epoch": 0, "batch": 5}
    assert len(saved) == 6  # the first backup after batch 3 (index 2), then seen after every batch


def test_manager_never_deletes_outside_its_directory(tmp_path):
    outside = tmp_path / "precious.h5"
    outside.write_bytes(b"keep me")
    directory = tmp_path / "ckpts"
    directory.mkdir()
    (directory / "checkpoint").write_text(f'model_checkpoint_path: "{tmp_path}/precious"\n'
                                          f'all_model_checkpoint_paths: "{tmp_path}/precious"\n'
                                          f'all_model_checkpoint_timestamps: 1e12\n')
    with pytest.warns(UserWarning, match="lies outside that directory"):
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), directory, max_to_keep=1)
    manager.save()
    manager.save()
    assert outside.read_bytes() == b"keep me"
    assert manager.checkpoints == [str(directory / "ckpt-2")]


def test_values_restored_while_a_step_is_traced_are_assigned_once_not_at_every_call(tmp_path):
    """Deferred restoration can happen inside a trace (a layer or an optimizer built by a tf.function's
    first call); an assign there must run once, eagerly, not become part of the step (tf.init_scope)."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((16, 3)).astype("float32"))
    y = tf.constant(rng.standard_normal((16, 1)).astype("float32"))

    def fresh():
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1)])
        return model, tf.keras.optimizers.Adam(0.05)

    def step_fn(model, optimizer):
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return step

    model, optimizer = fresh()
    step = step_fn(model, optimizer)
    for _ in range(3):
        step()
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))

    results = []
    for traced in (False, True):
        model, optimizer = fresh()          # nothing built: the restore waits for the first call
        tf.train.Checkpoint(model=model, optimizer=optimizer).restore(path)
        step = step_fn(model, optimizer)
        step = tf.function(step) if traced else step
        for _ in range(4):
            step()
        results.append(model.get_weights())
    for eager, traced in zip(*results):
        np.testing.assert_array_equal(traced, eager)
