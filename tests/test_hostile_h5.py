"""Hostile and damaged HDF5-based files, for every format that holds one (.weights.h5, .keras zipped and
unzipped, legacy .h5): each class of attack gets a clear error of its family, no file outside the target
is opened (an audit hook sees Python's opens, inotify sees any process's), memory stays at the model's
size, and the model and its optimizer are left exactly as they were. Cases that once crashed or hung
the interpreter run in a subprocess with a timeout."""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import (ConfigContentError, ExternalReferenceError, FileContentError,
                             FileFormatError, OversizedContentError, UnknownClassError)
from tapeflow.saving.h5_reader import read_expected

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "keras")
keras = tf.keras
SECRET = b"root:x:0:0:SECRET-IN-ANOTHER-FILE\n" * 8


# ------------------------------------------------------------ observers ---
_AUDIT = {"active": False, "opened": []}


def _audit(event, args):
    if _AUDIT["active"] and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _AUDIT["opened"].append(os.fsdecode(args[0]))


if not getattr(sys, "_tapeflow_hostile_h5_audit", False):   # audit hooks cannot be removed: install once
    sys.addaudithook(_audit)
    sys._tapeflow_hostile_h5_audit = True


class InotifyWatch:
    """Any open or read of the watched files, by any code in any process (libc's inotify)."""
    IN_ACCESS, IN_OPEN = 0x1, 0x20

    def __init__(self, paths):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK)
        assert self.fd >= 0
        for path in paths:
            assert libc.inotify_add_watch(self.fd, os.fsencode(path), self.IN_ACCESS | self.IN_OPEN) >= 0

    def events(self):
        try:
            return os.read(self.fd, 4096)
        except BlockingIOError:
            return b""

    def close(self):
        os.close(self.fd)


@pytest.fixture
def secrets(tmp_path):
    """A raw file and an HDF5 file of 'secret' data that hostile files point at, watched by inotify."""
    raw = tmp_path / "secret.bin"
    raw.write_bytes(SECRET)
    h5 = tmp_path / "secret.h5"
    with h5py.File(h5, "w") as f:
        f["data"] = np.frombuffer(SECRET[:128], np.float32).reshape(4, 8)
    watch = InotifyWatch([raw, h5])
    yield {"raw": str(raw), "h5": str(h5), "watch": watch}
    watch.close()


def load_observed(load, allowed):
    """Runs ``load``; returns (exception, [paths opened outside ``allowed``])."""
    allowed = {os.path.realpath(p) for p in allowed}
    _AUDIT["opened"].clear()
    _AUDIT["active"] = True
    try:
        load()
        error = None
    except Exception as e:  # noqa: BLE001 - the test asserts the type
        error = e
    finally:
        _AUDIT["active"] = False
    outside = [p for p in _AUDIT["opened"]
               if os.path.realpath(p) not in allowed and not any(os.path.realpath(p).startswith(a + os.sep)
                                                                  for a in allowed)]
    return error, outside


# --------------------------------------------------------------- models ---
def m_model(build_optimizer=True):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    if build_optimizer:
        model.optimizer.build(model.trainable_variables)
    return model


def state(model):
    optimizer = model.optimizer
    return ([np.array(w) for w in model.weights], optimizer.built,
            [(v.name, np.array(v)) for v in optimizer.variables])


def assert_unchanged(model, before):
    weights, built, optimizer_variables = state(model)
    assert built == before[1]
    assert len(weights) == len(before[0]) and len(optimizer_variables) == len(before[2])
    for a, b in zip(weights, before[0]):
        np.testing.assert_array_equal(a, b)
    for (name_a, a), (name_b, b) in zip(optimizer_variables, before[2]):
        assert name_a == name_b
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------- hostile files ---
# Where each format keeps the kernel of the first Dense layer, (4, 8) float32.
KERNEL = {"weights.h5": "layers/dense/vars/0", "keras": "layers/dense/vars/0", "keras-dir": "layers/dense/vars/0",
          "legacy.h5": "model_weights/dense/seq/dense/kernel"}
FORMATS = list(KERNEL)


def plant(kind, f, name, secrets):
    """Replaces dataset ``name`` of the open h5py file ``f`` with a hostile object of ``kind``."""
    del f[name]
    if kind == "external_link":
        f[name] = h5py.ExternalLink(secrets["h5"], "/data")
    elif kind == "soft_link_out":
        f["outside"] = h5py.ExternalLink(secrets["h5"], "/data")
        f[name] = h5py.SoftLink("/outside")
    elif kind == "external_storage":
        f.create_dataset(name, shape=(4, 8), dtype="f4", external=[(secrets["raw"], 0, 128)])
    elif kind == "virtual":
        layout = h5py.VirtualLayout(shape=(4, 8), dtype="f4")
        layout[...] = h5py.VirtualSource(secrets["h5"], "data", shape=(4, 8))
        f.create_virtual_dataset(name, layout)
    elif kind == "object_reference":
        f.create_dataset(name, shape=(4, 8), dtype=h5py.ref_dtype)
    elif kind == "huge_shape":   # 4 GiB declared, one 4 KiB chunk stored: the file stays small
        d = f.create_dataset(name, shape=(1 << 30,), dtype="f4", chunks=(1024,))
        d[:1024] = 1.0
    else:
        raise ValueError(kind)


def hostile_file(tmp_path, fmt, edit):
    """A copy of the fixture of ``fmt`` whose HDF5 content went through ``edit(h5py.File)``; its path."""
    if fmt in ("weights.h5", "legacy.h5"):
        fixture = "m.weights.h5" if fmt == "weights.h5" else "m.h5"
        path = tmp_path / fixture
        shutil.copy(os.path.join(FIXTURES, fixture), path)
        os.chmod(path, 0o644)
        with h5py.File(path, "r+") as f:
            edit(f)
        return path
    member = tmp_path / "model.weights.h5"
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        member.write_bytes(z.read("model.weights.h5"))
        config = z.read("config.json")
    with h5py.File(member, "r+") as f:
        edit(f)
    return pack(tmp_path, fmt, config, member.read_bytes())


def pack(tmp_path, fmt, config, weights, compress=False):
    """A .keras archive (fmt "keras") or unzipped directory ("keras-dir") of these members."""
    if fmt == "keras-dir":
        path = tmp_path / "model_dir.keras"
        path.mkdir()
        (path / "config.json").write_bytes(config)
        (path / "metadata.json").write_bytes(b"{}")
        (path / "model.weights.h5").write_bytes(weights)
        return path
    path = tmp_path / "model.keras"
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("metadata.json", "{}")
        z.writestr("config.json", config)
        z.writestr("model.weights.h5", weights)
    return path


def load_weights_into(model, path):
    return lambda: model.load_weights(path)


def warm_up():
    """Imports and compiles everything a load uses, so the audit hook sees only the loads' own opens."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m_model().load_weights(os.path.join(FIXTURES, "m.weights.h5"))
        keras.models.load_model(os.path.join(FIXTURES, "m.keras"))
        keras.models.load_model(os.path.join(FIXTURES, "m.h5"))


POINTING_OUT = ["external_link", "soft_link_out", "external_storage", "virtual", "object_reference"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", POINTING_OUT)
def test_content_pointing_outside_the_file_is_refused_before_anything_is_read(tmp_path, secrets, fmt, kind):
    warm_up()
    path = hostile_file(tmp_path, fmt, lambda f: plant(kind, f, KERNEL[fmt], secrets))
    model = m_model()
    before = state(model)
    error, outside = load_observed(load_weights_into(model, path), [path])
    assert isinstance(error, ExternalReferenceError), repr(error)
    assert "dense" in str(error) and str(path) in str(error)
    assert outside == []
    assert secrets["watch"].events() == b""   # not opened, not read, by Python or by C code
    assert_unchanged(model, before)
    if fmt == "weights.h5":
        return   # weights only: nothing for load_model
    error, outside = load_observed(lambda: keras.models.load_model(path), [path])
    assert isinstance(error, ExternalReferenceError), repr(error)
    assert outside == [] and secrets["watch"].events() == b""


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_declared_shape_is_refused_before_allocating(tmp_path, secrets, fmt):
    path = hostile_file(tmp_path, fmt, lambda f: plant("huge_shape", f, KERNEL[fmt], secrets))
    assert os.path.getsize(path) < 100_000 if not os.path.isdir(path) else True
    model = m_model()
    before = state(model)
    tracemalloc.start()
    try:
        with pytest.raises(FileContentError, match=r"1073741824"):
            model.load_weights(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"{peak} bytes allocated for a file declaring 4 GiB"
    assert_unchanged(model, before)


def test_many_members_in_a_vars_group_are_not_all_listed(tmp_path, secrets):
    def edit(f):
        group = f["layers/dense/vars"]
        for i in range(2, 3000):
            group[str(i)] = np.float32(i)
    path = hostile_file(tmp_path, "weights.h5", edit)
    model = m_model()
    before = state(model)
    with pytest.raises(FileContentError, match=r"expected 2 variables .*but the file has more"):
        model.load_weights(path)
    assert_unchanged(model, before)


# ---------------------------------------------------------- archives ---
def junk_weights(tmp_path, megabytes):
    """m.keras's weights with a dataset of ``megabytes`` MB of zeros added (deflates to almost nothing)."""
    member = tmp_path / "junk.weights.h5"
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        member.write_bytes(z.read("model.weights.h5"))
        config = z.read("config.json")
    with h5py.File(member, "r+") as f:
        f.create_dataset("junk", shape=(megabytes << 18,), dtype="f4", fillvalue=0.0)[...] = 0.0
    return config, member.read_bytes()


def test_zip_bomb_member_is_refused_before_inflating(tmp_path):
    config, weights = junk_weights(tmp_path, 48)
    path = pack(tmp_path, "keras", config, weights, compress=True)
    assert os.path.getsize(path) < 1 << 20
    model = m_model()
    before = state(model)
    tracemalloc.start()
    try:
        with pytest.raises(OversizedContentError, match="model.weights.h5.*more than"):
            model.load_weights(path)
        with pytest.raises(OversizedContentError):
            keras.models.load_model(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20
    assert_unchanged(model, before)


def test_compressed_archive_within_the_model_size_loads(tmp_path):
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        path = pack(tmp_path, "keras", z.read("config.json"), z.read("model.weights.h5"), compress=True)
    model = keras.models.load_model(path)
    reference = keras.models.load_model(os.path.join(FIXTURES, "m.keras"))
    for a, b in zip(model.weights, reference.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_oversized_config_member_is_refused(tmp_path):
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        weights = z.read("model.weights.h5")
    path = pack(tmp_path, "keras", b" " * (65 << 20) + b"{}", weights, compress=True)
    with pytest.raises(OversizedContentError, match="config.json"):
        keras.models.load_model(path)


def test_symlinked_member_of_a_model_directory_is_refused(tmp_path, secrets):
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        path = pack(tmp_path, "keras-dir", z.read("config.json"), z.read("model.weights.h5"))
    os.remove(path / "model.weights.h5")
    os.symlink(secrets["h5"], path / "model.weights.h5")
    model = m_model()
    before = state(model)
    with pytest.raises(ExternalReferenceError, match="symbolic link"):
        model.load_weights(path)
    assert secrets["watch"].events() == b""
    assert_unchanged(model, before)


# ------------------------------------------------------------- configs ---
def config_of_m():
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        return json.loads(z.read("config.json")), z.read("model.weights.h5")


def with_config(tmp_path, fmt, text):
    """m's model in format ``fmt`` ("keras", "keras-dir", "legacy.h5") with config text ``text``."""
    _, weights = config_of_m()
    if fmt == "legacy.h5":
        path = tmp_path / "m.h5"
        shutil.copy(os.path.join(FIXTURES, "m.h5"), path)
        os.chmod(path, 0o644)
        with h5py.File(path, "r+") as f:
            f.attrs["model_config"] = text
        return path
    return pack(tmp_path, fmt, text.encode(), weights)


def deep(n):
    return '{"class_name": "Sequential", "config": ' + '{"a": [' * n + "0" + "]}" * n + "}"


def edited(edit):
    config, _ = config_of_m()
    edit(config)
    return json.dumps(config)


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return config


WRONG = {
    "module is a number": (lambda c: _set(c, ["config", "layers", 1, "module"], 5), ConfigContentError),
    "config is a list": (lambda c: _set(c, ["config", "layers", 1, "config"], [1, 2]), ConfigContentError),
    "class_name is a dict": (lambda c: _set(c, ["config", "layers", 2, "class_name"], {"a": 1}),
                             ConfigContentError),
    "layers is a dict": (lambda c: _set(c, ["config", "layers"], {"a": 1}), FileContentError),
    "activation is a dict": (lambda c: _set(c, ["config", "layers", 1, "config", "activation"], {}),
                             FileContentError),
    "unknown function": (lambda c: _set(c, ["config", "layers", 1, "config", "activation"],
                                        {"class_name": "function", "config": "system", "module": "os"}),
                         UnknownClassError),
}


@pytest.mark.parametrize("fmt", ["keras", "keras-dir", "legacy.h5"])
@pytest.mark.parametrize("case", sorted(WRONG))
def test_config_fields_of_the_wrong_type(tmp_path, fmt, case):
    edit, error = WRONG[case]
    path = with_config(tmp_path, fmt, edited(edit))
    with pytest.raises(error) as info:
        keras.models.load_model(path)
    assert isinstance(info.value, FileFormatError)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("fmt", ["keras", "keras-dir", "legacy.h5"])
@pytest.mark.parametrize("depth", [150, 10_000, 200_000])
def test_deep_json_config(tmp_path, fmt, depth):
    path = with_config(tmp_path, fmt, deep(depth))
    with pytest.raises(OversizedContentError, match="deep"):
        keras.models.load_model(path)


# ------------------------------------------------------- legacy layer counts ---
def many_layers_file(tmp_path, count):
    """A legacy weights file listing ``count`` layers, each a group with one weight."""
    path = tmp_path / "many.h5"
    names = [f"layer_{i}" for i in range(count)]
    with h5py.File(path, "w") as f:
        from tapeflow.saving.h5_attrs import set_string_list
        set_string_list(f, "layer_names", names)
        for name in names:
            g = f.create_group(name)
            set_string_list(g, "weight_names", ["w"])
            g["w"] = np.full((1, 1), 7.0, np.float32)
    return path


def test_legacy_file_listing_far_more_layers_than_the_model(tmp_path, monkeypatch):
    from tapeflow.saving import h5_reader
    path = many_layers_file(tmp_path, 3000)
    looked_up = []
    real = h5_reader.Group._child
    monkeypatch.setattr(h5_reader.Group, "_child", lambda self, part: looked_up.append(part) or real(self, part))
    model = m_model()
    before = state(model)
    with pytest.raises(OversizedContentError, match="3000 layers"):
        model.load_weights(path)
    assert len(looked_up) < 10   # rejected from the name list, before any layer group was opened
    looked_up.clear()
    model.load_weights(path, by_name=True)   # no layer of the file has the model's names: nothing to load...
    assert len(looked_up) < 10
    assert_unchanged(model, before)
    renamed = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, name="layer_2999", use_bias=False)])
    looked_up.clear()
    renamed.load_weights(path, by_name=True)    # ...one that has is found without visiting the others
    assert len(looked_up) < 10
    np.testing.assert_array_equal(renamed.layers[0].kernel.numpy(), np.full((1, 1), 7.0))


# ----------------------------------------------------- optimizer left unbuilt ---
def test_failed_load_weights_does_not_build_the_optimizer(tmp_path):
    def edit(f):
        del f["optimizer/vars/13"]
        f["optimizer/vars/13"] = np.zeros((4,), np.float32)
    path = hostile_file(tmp_path, "weights.h5", edit)
    model = m_model(build_optimizer=False)
    before = state(model)
    assert not before[1]
    with pytest.raises(FileContentError, match="optimizer"):
        model.load_weights(path)
    assert_unchanged(model, before)
    assert not model.optimizer.built and len(model.optimizer.variables) == 2
    model.load_weights(os.path.join(FIXTURES, "m.weights.h5"))   # a good file still builds and fills it
    assert model.optimizer.built and int(np.asarray(model.optimizer.iterations)) == 2


# --------------------------------------------------- crash and hang prone ---
def _flip_in_member(tmp_path, offset, bit=0):
    """m.keras with one bit flipped at ``offset`` of its HDF5 member (the CRC-32 left as it was)."""
    data = bytearray(open(os.path.join(FIXTURES, "m.keras"), "rb").read())
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:
        info = z.getinfo("model.weights.h5")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + offset] ^= 1 << bit
    path = tmp_path / f"flipped{offset}.keras"
    path.write_bytes(bytes(data))
    return path


def _flipped(fmt, seed, workdir):
    sys.path.insert(0, HERE)
    import fuzz_cases
    return fuzz_cases.mutated_file(fmt, seed, str(workdir))


ISOLATED = textwrap.dedent("""
    import sys, warnings
    import tapeflow as tf
    from tapeflow.saving import FileFormatError
    warnings.simplefilter("ignore")
    for line in sys.stdin:
        how, path = line.split(maxsplit=1)
        path = path.strip()
        print("start", path, flush=True)
        try:
            if how == "model":
                tf.keras.models.load_model(path)
            else:
                model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                             tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(3)])
                model.load_weights(path)
            print("loaded", flush=True)
        except FileFormatError as e:
            print("clear", type(e).__name__, flush=True)
        except Exception as e:
            print("obscure", type(e).__name__, str(e)[:200].replace(chr(10), " "), flush=True)
""")


def run_isolated(cases, timeout=90):
    """Loads each (how, path) in one subprocess; returns [outcome line] and fails on a crash or a hang."""
    stdin = "".join(f"{how} {path}\n" for how, path in cases)
    try:
        done = subprocess.run([sys.executable, "-c", ISOLATED], input=stdin, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"loading hung (no answer in {timeout} s); last output: {(e.stdout or '')[-300:]}")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, f"the loading process died ({done.returncode}) after {lines[-2:]}"
    return [line for line in lines if not line.startswith("start")]


def test_files_that_crashed_or_hung_libhdf5_give_clear_errors_in_a_subprocess(tmp_path, secrets):
    cases = [
        ("weights", _flipped("legacy-weights.h5", 75, tmp_path)),    # a string attribute's type turned into a
                                                                     # vlen sequence: segfaulted in libhdf5
        ("weights", _flipped("legacy-weights.h5", 918, tmp_path)),   # a damaged global heap: hung libhdf5 (the
                                                                     # damage is in its free space: loads)
        ("model", _flipped("legacy.h5", 1793, tmp_path)),            # the same, in a legacy model
        ("model", _flip_in_member(tmp_path, 100)),                   # a flipped bit in an archive's HDF5 member
        ("weights", _flip_in_member(tmp_path, 2000, 3)),
    ]
    (tmp_path / "vds").mkdir()
    vds = hostile_file(tmp_path / "vds", "keras", lambda f: plant("virtual", f, KERNEL["keras"], secrets))
    cases.append(("model", vds))   # a virtual dataset read through the zip: segfaulted in load_model
    outcomes = run_isolated([(how, str(path)) for how, path in cases])
    assert outcomes == ["clear FileContentError", "loaded", "clear FileContentError", "clear ArchiveError",
                        "clear ArchiveError", "clear ExternalReferenceError"]


# ------------------------------------------------------------ SavedModel ---
def test_read_expected_for_a_variables_file(tmp_path, secrets):
    path = tmp_path / "variables.h5"
    with h5py.File(path, "w") as f:
        f["variables/0"] = np.arange(6, dtype=np.float32).reshape(2, 3)
        f["variables/1"] = h5py.ExternalLink(secrets["h5"], "/data")
    arrays = read_expected(str(path), {"variables/0": (2, 3)})
    np.testing.assert_array_equal(arrays["variables/0"], np.arange(6).reshape(2, 3))
    with pytest.raises(FileContentError, match="shape"):
        read_expected(str(path), {"variables/0": (3, 2)})
    with pytest.raises(ExternalReferenceError, match="variables/1"):
        read_expected(str(path), {"variables/0": (2, 3), "variables/1": (4, 8)})
    assert secrets["watch"].events() == b""
