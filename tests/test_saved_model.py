"""tf.saved_model: the advanced guide's "Custom gradients in SavedModel", round trips,
fresh processes, atomic writes and damaged directories."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf

DEFINE = textwrap.dedent("""
    import tapeflow as tf

    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)
""")

FRESH_LOAD = textwrap.dedent("""
    import sys
    import tapeflow as tf
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(sys.argv[1])
    print("forward", float(loaded.call_custom_grad(v * v)))
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    try:
        print("gradient", float(t.gradient(output, v)))
    except LookupError as err:
        print("LookupError", err)
""")


def _save_guide_model(path, custom_gradients):
    namespace = {}
    exec(compile(DEFINE, "guide_model", "exec"), namespace)  # the test's own source, not a file's
    model = namespace["MyModule"]()
    tf.saved_model.save(model, str(path),
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=custom_gradients))


def _load_in_fresh_process(path):
    result = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def test_guide_example_same_process(tmp_path):
    _save_guide_model(tmp_path / "saved_model", True)
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(str(tmp_path / "saved_model"))
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


def test_custom_gradient_survives_a_fresh_process(tmp_path):
    _save_guide_model(tmp_path / "m", True)
    out, err = _load_in_fresh_process(tmp_path / "m")
    assert "forward 4.0" in out and "gradient 2.0" in out
    assert "unsaved custom gradients" not in err


def test_without_custom_gradients_a_fresh_process_raises_lookup_error(tmp_path):
    _save_guide_model(tmp_path / "m", False)
    out, err = _load_in_fresh_process(tmp_path / "m")
    assert "forward 4.0" in out
    assert "LookupError No gradient defined for operation 'IdentityN' (op type: IdentityN)" in out
    assert "WARNING:tapeflow:Importing a function (call_custom_grad) with ops with unsaved custom gradients." in err


def test_without_custom_gradients_the_same_process_still_works(tmp_path):
    _save_guide_model(tmp_path / "m", False)
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert float(t.gradient(output, v)) == 2.0


class Dense(tf.Module):
    def __init__(self, n_in, n_out, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32), name="w")
        self.b = tf.Variable(np.zeros(n_out, np.float32), name="b")
        self.steps = tf.Variable(0, trainable=False, name="steps")

    @tf.function
    def __call__(self, x):
        return tf.nn.relu(x @ self.w + self.b)


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(4, 8, 0), Dense(8, 4, 1)]

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def predict(self, x):
        for layer in self.layers:
            x = layer(x)
        return tf.reduce_sum(x, axis=1)


def test_module_tree_round_trip_with_variables_and_gradients(tmp_path):
    net = Net()
    x = tf.constant(np.random.default_rng(2).normal(size=(5, 4)).astype(np.float32))
    expected = net.predict(x).numpy()
    tf.saved_model.save(net, str(tmp_path / "net"))
    loaded = tf.saved_model.load(str(tmp_path / "net"))
    np.testing.assert_allclose(loaded.predict(x).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(loaded.predict(x[:2]).numpy(), expected[:2], rtol=1e-6)
    assert sorted(tuple(v.shape) for v in loaded.layers[0].trainable_variables) == [(4, 8), (8,)]
    assert loaded.layers[1].steps.dtype == tf.int32 and not loaded.layers[1].steps.trainable
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded.predict(x))
    grads = tape.gradient(y, [loaded.layers[0].w, loaded.layers[1].b])
    with tf.GradientTape() as tape:
        y0 = tf.reduce_sum(net.predict(x))
    expected_grads = tape.gradient(y0, [net.layers[0].w, net.layers[1].b])
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5)
    loaded.layers[0].w.assign(tf.zeros([4, 8]))
    assert float(tf.reduce_sum(loaded.predict(x))) == 0.0


def test_no_pickle_no_code_and_unknown_ops_are_refused(tmp_path):
    _save_guide_model(tmp_path / "m", True)
    files = sorted(os.listdir(tmp_path / "m"))
    assert files == ["assets", "saved_model.json", "variables.h5"]
    document = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    document["objects"][0]["functions"]["call_custom_grad"]["concretes"][0]["graph"]["nodes"][0]["op"] = "os.system"
    (tmp_path / "m" / "saved_model.json").write_text(json.dumps(document))
    with pytest.raises(tf.saving.FileContentError, match=r"nodes\[0\] \(os.system\).op: unknown op type 'os.system'"):
        tf.saved_model.load(str(tmp_path / "m"))


def test_damaged_or_missing_directories(tmp_path):
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.load(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match="saved_model.json is missing"):
        tf.saved_model.load(str(tmp_path / "empty"))
    _save_guide_model(tmp_path / "m", True)
    (tmp_path / "m" / "saved_model.json").write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        tf.saved_model.load(str(tmp_path / "m"))


def test_a_failed_save_leaves_the_previous_directory_intact(tmp_path, monkeypatch):
    target = tmp_path / "m"
    _save_guide_model(target, True)
    before = (target / "saved_model.json").read_text()
    import h5py

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(h5py.File, "create_dataset", broken)
    net = Net()
    net.predict(tf.zeros([1, 4]))
    with pytest.raises(OSError, match="disk full"):
        tf.saved_model.save(net, str(target))
    monkeypatch.undo()
    assert (target / "saved_model.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    out, _ = _load_in_fresh_process(target)
    assert "gradient 2.0" in out


def test_save_refuses_non_modules(tmp_path):
    with pytest.raises(ValueError, match="Expected a tf.Module"):
        tf.saved_model.save(object(), str(tmp_path / "x"))


def test_save_creates_missing_parent_directories_as_tensorflow(tmp_path):
    class Doubler(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return x * 2.0

    path = tmp_path / "runs" / "7" / "model"
    tf.saved_model.save(Doubler(), str(path))
    assert tf.saved_model.load(str(path))(tf.constant([1.5])).numpy().tolist() == [3.0]
