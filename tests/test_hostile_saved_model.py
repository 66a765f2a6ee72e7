"""Hostile SavedModel directories (issue 11.3, 11.4, 11.7): every bad field of saved_model.json
and every unsafe member of variables.h5 gives a FileFormatError naming the file, the place and
the problem; the load opens no file outside the directory and registers nothing."""
import contextlib
import gc
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework import registry
from tapeflow.saving import FileFormatError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import fuzz_saved_model  # noqa: E402  (the mutations the long fuzz benchmark also runs)

# ------------------------------------------------------------ open auditing ---
_opened = []          # paths opened while a load is watched
_watching = [False]


def _audit(event, args):
    if event == "open" and _watching[0] and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


@pytest.fixture(scope="session")
def audit_opens():
    """Installs the audit hook once per session (an audit hook cannot be removed)."""
    sys.addaudithook(_audit)


@contextlib.contextmanager
def _watch_opens():
    _opened.clear()
    _watching[0] = True
    try:
        yield _opened
    finally:
        _watching[0] = False


def _assert_refused(directory, match, error=FileFormatError):
    gc.collect()
    before = set(registry._GRADIENTS)
    with _watch_opens() as opened:
        with pytest.raises(error, match=match) as info:
            tf.saved_model.load(str(directory))
    assert str(directory) in str(info.value)
    inside = os.path.realpath(directory) + os.sep
    assert opened and all(os.path.realpath(p).startswith(inside) for p in opened), opened
    gc.collect()
    assert set(registry._GRADIENTS) == before
    return info.value


# ------------------------------------------------------------------ models ---
@tf.custom_gradient
def _clip(y):
    return y, lambda dy: tf.clip_by_norm(dy, 0.5)


class _Head(tf.Module):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(np.float32(2.0), name="scale")
        self.calls = tf.Variable(0, trainable=False, name="calls")


class _Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, name="w")
        self.heads = [_Head()]

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def predict(self, x):
        y = _clip(tf.matmul(x, self.w) + tf.constant([1.0, 2.0, 3.0]))
        self.heads[0].calls.assign_add(1)
        return {"y": y * self.heads[0].scale, "total": tf.reduce_sum(y, axis=1)}


@pytest.fixture(scope="module")
def saved_net(tmp_path_factory, audit_opens):
    path = tmp_path_factory.mktemp("net") / "m"
    tf.saved_model.save(_Net(), str(path))
    tf.saved_model.load(str(path))   # warms up every lazy import, which opens files of its own
    return path


def _copy(saved, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(saved, target)
    return target


def _edit_json(directory, edit):
    path = directory / "saved_model.json"
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))


def _predict(document):
    return document["objects"][0]["functions"]["predict"]["concretes"][0]["graph"]


def _node(document, op):
    return next(n for n in _predict(document)["nodes"] if n["op"] == op)


def _a_variable(document):
    return next(o for o in document["objects"] if o["kind"] == "variable")


def _gradient(document):
    return next(iter(document["custom_gradients"].values()))


def _set(getter, key, value):
    def edit(document):
        getter(document)[key] = value
    return edit


def _deep(depth, leaf):
    value = leaf
    for _ in range(depth):
        value = {"list": [value]}
    return value


# (what is edited, the edit, what the error says)
JSON_CASES = [
    ("num_outputs 2**31 (issue 11.3)", _set(lambda d: _node(d, "IdentityN"), "num_outputs", 2 ** 31),
     r"nodes\[\d+\] \(IdentityN\)\.num_outputs: 2147483648 is outside"),
    ("an Unpack of 2**20 + 1 outputs", lambda d: _predict(d)["nodes"].append(
        {"op": "Unpack", "inputs": [["in", 0]], "attrs": {"axis": 0}, "num_outputs": 2 ** 20 + 1}),
     r"\(Unpack\)\.num_outputs: the file's variadic-output nodes have more than 1048576 outputs in all"),
    ("a SplitV with more outputs than sizes", lambda d: _predict(d)["nodes"].append(
        {"op": "SplitV", "inputs": [["in", 0]], "attrs": {"sizes": [1, 3], "axis": 1}, "num_outputs": 1000}),
     r"\(SplitV\)\.num_outputs: is 1000, but SplitV makes 2 outputs here"),
    ("num_outputs not what the op makes", _set(lambda d: _node(d, "MatMul"), "num_outputs", 2),
     r"\(MatMul\)\.num_outputs: is 2, but MatMul makes 1 outputs"),
    ("num_outputs a string", _set(lambda d: _node(d, "MatMul"), "num_outputs", "1"),
     r"\(MatMul\)\.num_outputs: expected an integer, got str"),
    ("num_outputs true", _set(lambda d: _node(d, "MatMul"), "num_outputs", True),
     r"\(MatMul\)\.num_outputs: expected an integer, got bool"),
    ("reference to a later node", _set(lambda d: _node(d, "MatMul"), "inputs", [["node", 50, 0], ["in", 0]]),
     r"\(MatMul\)\.inputs\[0\]\[1\]: 50 is outside"),
    ("reference to an output a node lacks", _set(lambda d: _node(d, "AddV2"), "inputs", [["node", 1, 7], ["const", 0]]),
     r"\(AddV2\)\.inputs\[0\]\[2\]: 7 is outside"),
    ("reference to a missing input", _set(lambda d: _node(d, "MatMul"), "inputs", [["in", 3], ["node", 0, 0]]),
     r"\(MatMul\)\.inputs\[0\]\[1\]: 3 is outside"),
    ("reference to a missing constant", _set(lambda d: _node(d, "AddV2"), "inputs", [["node", 1, 0], ["const", 9]]),
     r"\(AddV2\)\.inputs\[1\]\[1\]: 9 is outside"),
    ("capture in a function graph", _set(lambda d: _node(d, "AddV2"), "inputs", [["capture", 0], ["const", 0]]),
     r"\(AddV2\)\.inputs\[0\]: refers to 'capture' 0, but the graph has none"),
    ("unknown reference kind", _set(lambda d: _node(d, "AddV2"), "inputs", [["file", "/etc/passwd"], ["const", 0]]),
     r"\(AddV2\)\.inputs\[0\]: expected a reference"),
    ("unknown op type", _set(lambda d: _node(d, "AddV2"), "op", "__import__"),
     r"\(__import__\)\.op: unknown op type '__import__'"),
    ("a Python call node", _set(lambda d: _node(d, "AddV2"), "op", "__PythonCall__"),
     r"\(__PythonCall__\)\.op: unknown op type '__PythonCall__'"),
    ("op type not a string", _set(lambda d: _node(d, "AddV2"), "op", ["AddV2"]),
     r"nodes\[\d+\]\.op: expected an op type name, got list"),
    ("attribute of the wrong type", _set(lambda d: _node(d, "Sum"), "attrs", {"axes": "1", "keepdims": False}),
     r"\(Sum\)\.attrs\.axes: expected a list of integers, got str"),
    ("a flag that is an integer", _set(lambda d: _node(d, "Sum"), "attrs", {"axes": [1], "keepdims": 1}),
     r"\(Sum\)\.attrs\.keepdims: expected true or false, got int"),
    ("an attribute the op does not take", _set(lambda d: _node(d, "MatMul"), "attrs", {"out": [1]}),
     r"\(MatMul\)\.attrs: MatMul has no attribute 'out'"),
    ("a gradient name on another op", _set(lambda d: _node(d, "MatMul"), "attrs", {"_gradient_op_type": "x"}),
     r"\(MatMul\)\.attrs: MatMul has no attribute '_gradient_op_type'"),
    ("a missing attribute", _set(lambda d: _node(d, "Sum"), "attrs", {"keepdims": False}),
     r"\(Sum\)\.attrs: the attributes \['axes'\] are missing"),
    ("an axis out of any rank", _set(lambda d: _node(d, "Sum"), "attrs", {"axes": [10 ** 12], "keepdims": False}),
     r"\(Sum\)\.attrs\.axes: entry 0: 1000000000000 is outside"),
    ("too many inputs", _set(lambda d: _node(d, "MatMul"), "inputs", [["in", 0], ["in", 0], ["in", 0]]),
     r"\(MatMul\)\.inputs: MatMul takes 2 inputs, got 3"),
    ("IdentityN without its gradient's inputs",
     lambda d: _node(d, "IdentityN").update(inputs=[["node", 2, 0]], num_outputs=1),
     r"\(IdentityN\)\.inputs: has 1 entries, but its custom gradient 'CustomGradient-\w+' needs 1 \+ 1 \+ 0"),
    ("a dtype that does not exist", _set(lambda d: _predict(d)["inputs"][0], "dtype", "float128"),
     r"predict'\]\.concretes\[0\]\.graph\.inputs\[0\]\.dtype: expected a dtype name, got str 'float128'"),
    ("a negative dimension", _set(lambda d: _predict(d)["inputs"][0], "shape", [-1, 4]),
     r"graph\.inputs\[0\]\.shape\[0\]: -1 is outside"),
    ("a rank of 100", _set(lambda d: _predict(d)["inputs"][0], "shape", [1] * 100),
     r"graph\.inputs\[0\]\.shape: has 100 entries, more than 64"),
    ("traced shapes of another rank", _set(_predict, "traced_shapes", [[2, 4, 1]]),
     r"graph\.traced_shapes\[0\]: \[2, 4, 1\] does not match the input's shape \[None, 4\]"),
    ("a variable of dtype object", _set(_a_variable, "dtype", "object"),
     r"objects\[\d+\]\.dtype: expected a numeric dtype name, got str 'object'"),
    ("a variable dimension of 2**41", _set(_a_variable, "shape", [2 ** 41]),
     r"objects\[\d+\]\.shape\[0\]: 2199023255552 is outside"),
    ("a Fill of 2**31 elements", lambda d: _predict(d)["nodes"].append(
        {"op": "Fill", "inputs": [["const", 0]], "attrs": {"dims": [2 ** 16, 2 ** 15]}, "num_outputs": 1}),
     r"\(Fill\)\.attrs\.dims: \[65536, 32768\] asks for more than 268435456 elements"),
    ("a variable read of a module", _set(lambda d: _node(d, "__VariableRead__"), "attrs", {"variable": 0}),
     r"\(__VariableRead__\)\.attrs\.variable: object 0 is a module, not a variable"),
    ("an assignment mode that is a mapping", _set(lambda d: _node(d, "__VariableAssign__")["attrs"], "mode", {}),
     r"\(__VariableAssign__\)\.attrs\.mode: expected one of \['add', 'assign', 'sub'\], got dict"),
    ("a child index out of range", _set(lambda d: d["objects"][0], "children", {"w": {"object": 99}}),
     r"objects\[0\]\.children\['w'\]\.object: 99 is outside"),
    ("an attribute named __class__", _set(lambda d: d["objects"][0], "children", {"__class__": {"object": 1}}),
     r"objects\[0\]\.children: the attribute name '__class__' is reserved"),
    ("an attribute named variables", _set(lambda d: d["objects"][0], "children", {"variables": {"object": 1}}),
     r"objects\[0\]\.children: the attribute name 'variables' is reserved"),
    ("objects as a mapping", _set(lambda d: d, "objects", {"0": {}}), r"objects: expected a list, got dict"),
    ("nodes as a string", _set(_predict, "nodes", "AddV2"), r"graph\.nodes: expected a list, got str"),
    ("a node as a list", lambda d: _predict(d)["nodes"].__setitem__(0, ["AddV2"]),
     r"graph\.nodes\[0\]: expected an object, got list"),
    ("a missing field", lambda d: _predict(d).pop("n_constants"), r"graph: the field 'n_constants' is missing"),
    ("a count as a string", _set(_predict, "n_constants", "1"), r"graph\.n_constants: expected an integer, got str"),
    ("a root that is a variable", lambda d: d["objects"].reverse(), r"objects\[0\]\.kind: the root object must be a module"),
    ("constant specs of another count", lambda d: _predict(d)["constant_specs"].append(
        {"shape": [], "dtype": "float32"}), r"graph\.constant_specs: has \d+ entries for \d+ constants"),
    ("a constants key leaving its group", _set(_predict, "constants_key", "../variables"),
     r"graph\.constants_key: '\.\./variables' is not a valid member name"),
    ("gradient inputs that do not match", _set(_gradient, "n_outputs", 3),
     r"custom_gradients\['CustomGradient-\w+'\]\.graph\.inputs: has 1 entries, but the gradient has 3"),
    ("a custom gradient naming itself", lambda d: [g["graph"]["nodes"].append(
        {"op": "IdentityN", "inputs": [["in", 0], ["in", 0]], "attrs": {"_gradient_op_type": name}, "num_outputs": 2})
        for name, g in d["custom_gradients"].items()],
     r"custom_gradients\['CustomGradient-\w+'\]: the custom gradients name each other in a cycle: "
     r"'(CustomGradient-\w+)' -> '\1'"),
    ("gradient outputs that are not a list", lambda d: _gradient(d)["graph"].__setitem__("outputs", {"python": None}),
     r"custom_gradients\['CustomGradient-\w+'\]\.graph\.outputs: a custom gradient returns a list of 1"),
    ("output structure 200 deep", _set(_predict, "outputs", _deep(200, {"python": 1})),
     r"graph\.outputs(\.list\[0\])+: nested more than 64 levels deep"),
    ("unsupported version", _set(lambda d: d, "version", 99), r"Unsupported SavedModel version 99"),
    ("not a SavedModel description", lambda d: d.pop("format"), r"is not a tapeflow SavedModel description"),
]


@pytest.mark.parametrize("edit, match", [case[1:] for case in JSON_CASES], ids=[case[0] for case in JSON_CASES])
def test_malformed_graph_fields_are_refused(saved_net, tmp_path, edit, match):
    directory = _copy(saved_net, tmp_path)
    _edit_json(directory, edit)
    _assert_refused(directory, match)


@pytest.mark.parametrize("text, match", [
    ('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}", "nests its JSON too deeply"),
    ('{"format": "tapeflow-saved-model", "version": ' + "9" * 5000 + "}", "is not valid JSON"),
    ("[]", "is not a tapeflow SavedModel description"),
    ("\udcff", "is not valid JSON"),
], ids=["10,000-deep JSON", "a 5000-digit integer", "a list", "bytes that are not UTF-8"])
def test_unreadable_json_is_refused(saved_net, tmp_path, text, match):
    directory = _copy(saved_net, tmp_path)
    (directory / "saved_model.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    _assert_refused(directory, match)


# ------------------------------------------------------------- variables.h5 ---
def _rewrite_member(directory, member, make):
    with h5py.File(directory / "variables.h5", "a") as f:
        del f[member]
        make(f, member)


def _outside_file(tmp_path):
    outside = tmp_path / "outside.h5"
    with h5py.File(outside, "w") as f:
        f["data"] = np.ones((4, 3), np.float32)
    return outside


def _variable_w(directory):
    document = json.loads((directory / "saved_model.json").read_text())
    return next(f"variables/{i}" for i, o in enumerate(document["objects"]) if o.get("name") == "w")


def _virtual(f, member, outside):
    layout = h5py.VirtualLayout(shape=(4, 3), dtype=np.float32)
    layout[:] = h5py.VirtualSource(str(outside), "data", shape=(4, 3))
    f.create_virtual_dataset(member, layout)


def _external_storage(f, member, outside):
    raw = outside.with_suffix(".raw")
    raw.write_bytes(np.ones((4, 3), np.float32).tobytes())
    f.create_dataset(member, shape=(4, 3), dtype=np.float32, external=[(str(raw), 0, 48)])


H5_CASES = [
    ("an external link", lambda f, m, o: f.__setitem__(m, h5py.ExternalLink(str(o), "data")),
     "it is an external link to the file"),
    ("a soft link", lambda f, m, o: f.__setitem__(m, h5py.SoftLink("/constants")), "it is a soft link to '/constants'"),
    ("a virtual dataset", _virtual, "virtual dataset"),
    ("external storage", _external_storage, "its data is stored in external files"),
    ("a declared shape with no data", lambda f, m, o: f.create_dataset(m, shape=(4, 3), dtype=np.float32),
     "no data is stored for it"),
    ("another shape", lambda f, m, o: f.create_dataset(m, data=np.ones((3, 4), np.float32)),
     r"has shape \(3, 4\), but the graph declares \(4, 3\)"),
    ("another dtype", lambda f, m, o: f.create_dataset(m, data=np.ones((4, 3), np.float64)),
     "has dtype float64, but the graph declares float32"),
    ("object references", lambda f, m, o: f.create_dataset(m, data=np.array([f.ref] * 12).reshape(4, 3),
                                                           dtype=h5py.ref_dtype), "holds object references"),
    ("a group", lambda f, m, o: f.create_group(m), "expected a dataset, found a group"),
    ("nothing", lambda f, m, o: None, "is missing"),
]


@pytest.mark.parametrize("make, match", [case[1:] for case in H5_CASES], ids=[case[0] for case in H5_CASES])
def test_unsafe_variables_members_are_refused(saved_net, tmp_path, make, match):
    directory = _copy(saved_net, tmp_path)
    outside = _outside_file(tmp_path)
    member = _variable_w(directory)
    _rewrite_member(directory, member, lambda f, m: make(f, m, outside))
    error = _assert_refused(directory, match)
    assert member in str(error)          # the message names the member


def test_a_huge_declared_variable_is_refused_before_reading(saved_net, tmp_path):
    directory = _copy(saved_net, tmp_path)
    member = _variable_w(directory)
    shape = [2 ** 15, 2 ** 15]          # 4 GiB of float32 declared by a file of a few kilobytes

    def edit(document):
        document["objects"][int(member.split("/")[1])]["shape"] = shape
    _edit_json(directory, edit)
    _rewrite_member(directory, member, lambda f, m: f.create_dataset(m, shape=shape, dtype=np.float32))
    assert os.path.getsize(directory / "variables.h5") < 100_000
    _assert_refused(directory, "variables/4: its data is damaged or truncated \\(no data is stored for it\\)")


def test_a_constant_of_another_dtype_is_refused(saved_net, tmp_path):
    directory = _copy(saved_net, tmp_path)
    key = json.loads((directory / "saved_model.json").read_text())
    member = f"constants/{_predict(key)['constants_key']}/0"
    _rewrite_member(directory, member, lambda f, m: f.create_dataset(m, data=np.array([1.0, 2.0, 3.0])))
    error = _assert_refused(directory, "has dtype float64, but the graph declares float32")
    assert f"member {member!r}" in str(error)


def test_variables_file_that_is_not_hdf5(saved_net, tmp_path):
    directory = _copy(saved_net, tmp_path)
    (directory / "variables.h5").write_bytes(b"not an HDF5 file" * 10)
    _assert_refused(directory, "is not a valid HDF5 file")


def test_missing_variables_file_is_an_os_error(saved_net, tmp_path):
    directory = _copy(saved_net, tmp_path)
    (directory / "variables.h5").unlink()
    with pytest.raises(OSError, match="variables.h5 does not exist"):
        tf.saved_model.load(str(directory))


def test_the_untouched_copy_still_loads_and_differentiates(saved_net, tmp_path):
    loaded = tf.saved_model.load(str(_copy(saved_net, tmp_path)))
    x = tf.constant(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    expected = _Net().predict(x)
    np.testing.assert_allclose(loaded.predict(x)["y"].numpy(), expected["y"].numpy(), rtol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loaded.predict(x)["y"]
    g = tape.gradient(y, x).numpy()
    # dL/dx = clip_by_norm(scale * 1, 0.5) @ w^T, from the file's own gradient
    upstream = np.full((2, 3), 2.0, np.float32)
    clipped = upstream * min(1.0, 0.5 / np.linalg.norm(upstream))
    np.testing.assert_allclose(g, clipped @ (np.arange(12, dtype=np.float32).reshape(4, 3) / 10).T, rtol=1e-6)


# ---------------------------------------------------------- legitimate graphs ---
class _EveryOp(tf.Module):
    """A function using each op family that has attributes, so the checks are shown to accept real traces."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
        self.count = tf.Variable(0, trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([3, 4], tf.float32), tf.TensorSpec([3], tf.int32)])
    def f(self, x, i):
        y = x * self.w
        sq = tf.matmul(x, x, transpose_b=True) + tf.eye(3)
        self.count.assign_add(1)
        return [
            tf.reduce_sum(y, 1), tf.reduce_mean(y), tf.reduce_max(y, 0), tf.reduce_min(y), tf.reduce_prod(y, [0, 1]),
            tf.reduce_any(y > 0.5), tf.reduce_all(y > -1.0, axis=1, keepdims=True),
            tf.argmax(y, 1), tf.argmin(y, 0, output_type=tf.int32), tf.argsort(y), tf.sort(y, direction="DESCENDING"),
            tf.broadcast_to(x[0], [2, 3, 4]), tf.cast(y, tf.float64), tf.concat([x, y], 0), tf.stack([x, y], 1),
            tf.unstack(x), tf.split(x, [1, 3], 1), tf.reshape(x, [-1]), tf.tile(x, [2, 1]), tf.transpose(x),
            tf.fill([2, 2], 3.0), tf.pad(x, [[1, 0], [0, 2]]), tf.pad(x, [[1, 1], [1, 1]], mode="REFLECT"),
            tf.pad(x, [[1, 1], [1, 1]], mode="SYMMETRIC"), x[1:, ::2], x[..., None, 0], x[-1],
            tf.math.cumsum(y, 1, exclusive=True, reverse=True), tf.einsum("ij,kj->ik", x, y), tf.gather(x, i),
            tf.gather(x, i, axis=1), tf.one_hot(i, 5), tf.one_hot(i, 3, on_value=2.0, off_value=-1.0, axis=0),
            tf.math.unsorted_segment_sum(x, i, 4), tf.where(x > 0.3, x, y), tf.clip_by_value(x, 0.1, 0.5),
            tf.matmul(x, y, transpose_a=True), tf.math.round(x), tf.math.floor(x),
            tf.linalg.inv(sq), tf.linalg.solve(sq, x), tf.linalg.det(sq), tf.linalg.slogdet(sq),
            tf.nn.relu(x), tf.nn.relu6(x), tf.nn.elu(x), tf.nn.selu(x), tf.nn.sigmoid(x), tf.nn.softplus(x),
            tf.nn.softsign(x), tf.nn.leaky_relu(x, 0.3), tf.nn.gelu(x), tf.nn.gelu(x, approximate=True),
            tf.nn.softmax(x), tf.nn.log_softmax(x, axis=0),
            tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(y), logits=x),
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
            # random ops: their values differ from call to call, only their shapes are compared
            tf.random.normal([2], seed=1), tf.random.uniform([2], seed=2),
            tf.random.uniform([2], 0, 5, dtype=tf.int32, seed=3), tf.random.truncated_normal([2], seed=4),
            tf.random.shuffle(x, seed=5), tf.random.categorical(x, 2, seed=6),
        ]


def test_every_op_family_round_trips_through_the_checks(tmp_path):
    module = _EveryOp()
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    i = tf.constant([0, 2, 1])
    expected = tf.nest.flatten(module.f(x, i))
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    got = tf.nest.flatten(loaded.f(x, i))
    assert len(got) == len(expected) and int(loaded.count.numpy()) == 2
    n_random = 6
    for e, g in zip(expected[:-n_random], got[:-n_random]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6)
    for e, g in zip(expected[-n_random:], got[-n_random:]):
        assert g.shape == e.shape and g.dtype == e.dtype


# -------------------------------------------------------------------- fuzz ---
def test_bounded_fuzz_of_saved_model_files_gives_only_clear_errors(tmp_path, audit_opens):
    """A few hundred seeded mutations of saved_model.json and variables.h5: each loads (and then
    runs) or fails with a FileFormatError; nothing else escapes and nothing stays registered."""
    fuzz_saved_model.save_model(tmp_path / "base")
    gc.collect()
    before = set(registry._GRADIENTS)
    counts = fuzz_saved_model.run_in_process(tmp_path / "base", tmp_path, seed=11, cases=300)
    assert counts["obscure"] == [], counts["obscure"][:3]
    assert counts["clear"] > 100 and counts["loaded"] > 10
    gc.collect()
    assert set(registry._GRADIENTS) == before


def test_compressed_variables_are_decoded_within_the_declared_size(saved_net, tmp_path):
    """h5_reader decodes deflate itself (never a filter plugin), bounded by the shape the graph declares."""
    directory = _copy(saved_net, tmp_path)
    member = _variable_w(directory)
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    _rewrite_member(directory, member, lambda f, m: f.create_dataset(m, data=values, compression="gzip"))
    loaded = tf.saved_model.load(str(directory))
    weights = {tuple(v.shape): v.numpy() for v in loaded.trainable_variables}
    np.testing.assert_array_equal(weights[(4, 3)], values)


def test_a_node_declaring_a_million_outputs_loads_in_proportion_and_fails_clearly(tmp_path):
    """Replay planning was quadratic in a node's output count: 2**20 declared outputs hung the load."""
    script = f"""
import json, tapeflow as tf
class M(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([3, 2], tf.float32)])
    def f(self, x):
        return tf.add_n(tf.unstack(x))
path = {str(tmp_path / "m")!r}
tf.saved_model.save(M(), path)
document = json.load(open(path + "/saved_model.json"))
node = document["objects"][0]["functions"]["f"]["concretes"][0]["graph"]["nodes"][0]
assert node["op"] == "Unpack"
node["num_outputs"] = 2 ** 20
json.dump(document, open(path + "/saved_model.json", "w"))
loaded = tf.saved_model.load(path)
try:
    loaded.f(tf.zeros((3, 2)))
except ValueError as e:
    print("clear:", e)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "clear: Unpack produced 3 outputs when the traced graph has 1048576" in done.stdout
