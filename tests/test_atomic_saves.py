"""Saves are atomic and durable and keep what they replace: the replaced file's mode, a symlinked
path's link; temporaries of killed saves are swept by the next save; concurrent saves from two
processes each win whole; a process SIGKILLed anywhere in a save leaves the previous or the new model."""
import json
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings
import zipfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import api, atomic
from tapeflow.saving.rename_exchange import ExchangeUnsupported

keras = tf.keras
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "keras")
NAMES = {"keras": "m.keras", "weights": "m.weights.h5", "h5": "m.h5", "saved_model": "sm",
         "keras_dir": "d.keras"}
DIRECTORY_FORMATS = ("saved_model", "keras_dir")


# ------------------------------------------- the models saved (also imported by the child processes) ---
def make_model():
    return keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(8)])


class Pair(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(np.zeros((64, 32), np.float32))
        self.b = tf.Variable(np.zeros((64,), np.float32))


_MODELS = {}


def save(fmt, path, k):
    """Saves in format ``fmt`` a model all of whose numbers are ``k``."""
    path = os.fspath(path)
    if fmt == "saved_model":
        module = _MODELS.setdefault("pair", Pair())
        module.a.assign(np.full((64, 32), k, np.float32))
        module.b.assign(np.full((64,), k, np.float32))
        tf.saved_model.save(module, path)
        return
    model = _MODELS.setdefault("model", make_model())
    model.set_weights([np.full(w.shape, k, np.float32) for w in model.get_weights()])
    if fmt == "weights":
        model.save_weights(path)
    elif fmt == "keras_dir":
        model.save(path, zipped=False)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the legacy .h5 warning
            model.save(path)


def loaded_value(fmt, path):
    """The number ``k`` of the model at ``path``, after checking all its numbers are that one."""
    path = os.fspath(path)
    if fmt == "saved_model":
        loaded = tf.saved_model.load(path)
        values = [loaded.a.numpy(), loaded.b.numpy()]
    elif fmt == "weights":
        model = make_model()
        model.load_weights(path)
        values = model.get_weights()
    else:
        values = keras.models.load_model(path).get_weights()
    k = float(values[0].flat[0])
    assert all(np.all(v == k) for v in values), f"{path} holds a mixture of saves"
    return k


def entries(directory):
    return sorted(os.listdir(directory))


# ------------------------------------------------------------------- mode ---
@pytest.mark.parametrize("fmt", ["weights", "keras", "h5", "saved_model", "keras_dir"])
def test_the_replaced_files_mode_is_kept(tmp_path, fmt):
    path = tmp_path / NAMES[fmt]
    save(fmt, path, 1)
    os.chmod(path, 0o700 if fmt in DIRECTORY_FORMATS else 0o600)
    save(fmt, path, 2)
    assert stat.S_IMODE(os.stat(path).st_mode) == (0o700 if fmt in DIRECTORY_FORMATS else 0o600)
    assert loaded_value(fmt, path) == 2
    assert entries(tmp_path) == [NAMES[fmt]]


@pytest.mark.parametrize("fmt", ["weights", "saved_model"])
def test_a_new_save_gets_the_umasks_mode(tmp_path, fmt):
    previous = os.umask(0o027)
    try:
        save(fmt, tmp_path / NAMES[fmt], 1)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / NAMES[fmt]).st_mode) == (0o750 if fmt in DIRECTORY_FORMATS else 0o640)


def test_the_temporary_file_replacing_a_private_file_is_private_while_written(tmp_path, monkeypatch):
    path = tmp_path / NAMES["weights"]
    save("weights", path, 1)
    os.chmod(path, 0o600)
    modes, real = [], api.write_weights

    def recording(h5, model):
        modes.append(stat.S_IMODE(os.stat(h5.filename).st_mode))
        return real(h5, model)
    monkeypatch.setattr(api, "write_weights", recording)
    save("weights", path, 2)
    assert modes == [0o600]


# --------------------------------------------------------------- symlinks ---
@pytest.mark.parametrize("fmt", ["weights", "keras", "h5", "saved_model", "keras_dir"])
def test_saving_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path, fmt):
    (tmp_path / "store").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "store" / NAMES[fmt]
    save(fmt, target, 1)
    link = tmp_path / "links" / NAMES[fmt]
    os.symlink(os.path.join("..", "store", NAMES[fmt]), link)   # relative, as users often make them
    save(fmt, link, 2)
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "store", NAMES[fmt])
    assert loaded_value(fmt, target) == 2 and loaded_value(fmt, link) == 2
    assert entries(tmp_path / "store") == [NAMES[fmt]] and entries(tmp_path / "links") == [NAMES[fmt]]

    dangling = tmp_path / "links" / ("new-" + NAMES[fmt])
    os.symlink(tmp_path / "store" / ("new-" + NAMES[fmt]), dangling)
    save(fmt, dangling, 3)
    assert dangling.is_symlink() and loaded_value(fmt, tmp_path / "store" / ("new-" + NAMES[fmt])) == 3


# ------------------------------------------------------------------ fsync ---
def _record_fsyncs_and_renames(monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    real_exchange, real_noreplace = atomic.exchange, atomic.rename_noreplace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), stat.S_ISDIR(os.fstat(fd).st_mode)))
        return real_fsync(fd)

    def renaming(real):
        def rename(source, destination):
            real(source, destination)
            events.append(("rename", os.fspath(source), os.fspath(destination)))
        return rename
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", renaming(real_replace))
    monkeypatch.setattr(atomic, "exchange", renaming(real_exchange))
    monkeypatch.setattr(atomic, "rename_noreplace", renaming(real_noreplace))
    return events


@pytest.mark.parametrize("fmt", ["weights", "keras", "h5"])
def test_a_file_is_fsynced_before_its_rename_and_its_directory_after(tmp_path, monkeypatch, fmt):
    directory = os.path.realpath(tmp_path)
    path = os.path.join(directory, NAMES[fmt])
    save(fmt, path, 1)
    events = _record_fsyncs_and_renames(monkeypatch)
    save(fmt, path, 2)
    renames = [e for e in events if e[0] == "rename"]
    assert len(renames) == 1 and renames[0][2] == path
    tmp, at = renames[0][1], events.index(renames[0])
    assert ("fsync", tmp, False) in events[:at]
    assert ("fsync", directory, True) in events[at:]


@pytest.mark.parametrize("fmt", DIRECTORY_FORMATS)
def test_a_directory_and_everything_in_it_is_fsynced_before_it_is_swapped_in(tmp_path, monkeypatch, fmt):
    parent = os.path.realpath(tmp_path)
    path = os.path.join(parent, NAMES[fmt])
    events = _record_fsyncs_and_renames(monkeypatch)
    save(fmt, path, 1)   # a new path: renamed in
    save(fmt, path, 2)   # over the first: exchanged
    renames = [i for i, e in enumerate(events) if e[0] == "rename"]
    assert len(renames) == 2
    for start, at in zip([0] + renames, renames):
        tmp = events[at][1]
        assert events[at][2] == path
        fsynced = {(p, is_dir) for kind, p, is_dir in events[start:at] if kind == "fsync"}
        members = {(os.path.join(tmp, name), False) for name in os.listdir(path)
                   if os.path.isfile(os.path.join(path, name))}
        assert members and members <= fsynced
        assert (tmp, True) in fsynced
        assert ("fsync", parent, True) in events[at:at + 3]
    assert loaded_value(fmt, path) == 2


def test_model_checkpoint_creates_its_directories_durably(tmp_path, monkeypatch):
    events = _record_fsyncs_and_renames(monkeypatch)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    base = os.path.realpath(tmp_path)
    pattern = os.path.join(base, "runs", "a", "ckpt-{epoch}.keras")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 1), np.float32), epochs=1, verbose=0,
              callbacks=[keras.callbacks.ModelCheckpoint(pattern)])
    fsynced_dirs = {p for kind, p, is_dir in events if kind == "fsync" and is_dir}
    assert {base, os.path.join(base, "runs"), os.path.join(base, "runs", "a")} <= fsynced_dirs
    assert entries(os.path.join(base, "runs", "a")) == ["ckpt-1.keras"]


# ------------------------------------------------------- directory scheme ---
def test_a_plain_directory_written_by_keras_is_replaced_whole(tmp_path):
    path = tmp_path / "k.keras"
    with zipfile.ZipFile(os.path.join(FIXTURES, "m.keras")) as z:   # what Keras writes with zipped=False
        z.extractall(path)
    (path / "notes.txt").write_text("the user's own file")
    os.chmod(path, 0o750)
    keras.models.load_model(path)   # a plain directory loads as it is
    save("keras_dir", path, 4)
    assert path.is_dir() and not path.is_symlink()
    assert entries(path) == ["config.json", "metadata.json", "model.weights.h5"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750
    assert loaded_value("keras_dir", path) == 4
    assert entries(tmp_path) == ["k.keras"]


@pytest.mark.parametrize("fmt", DIRECTORY_FORMATS)
def test_without_an_atomic_exchange_two_renames_still_replace_the_directory(tmp_path, monkeypatch, fmt):
    def unsupported(*args):
        raise ExchangeUnsupported(22, "not supported here (simulated)")
    monkeypatch.setattr(atomic, "exchange", unsupported)
    monkeypatch.setattr(atomic, "rename_noreplace", unsupported)
    path = tmp_path / NAMES[fmt]
    save(fmt, path, 1)
    save(fmt, path, 2)
    assert loaded_value(fmt, path) == 2
    assert entries(tmp_path) == [NAMES[fmt]]


def test_a_target_that_keeps_vanishing_fails_clearly_and_leaves_the_previous_directory(tmp_path, monkeypatch):
    path = tmp_path / NAMES["saved_model"]
    save("saved_model", path, 1)

    def vanished(source, destination):
        raise FileNotFoundError(2, "No such file or directory", destination)
    monkeypatch.setattr(atomic, "exchange", vanished)
    with pytest.raises(OSError, match=r"Cannot save to .*other processes replaced it"):
        save("saved_model", path, 2)
    assert loaded_value("saved_model", path) == 1
    assert entries(tmp_path) == [NAMES["saved_model"]]


def test_wrong_kinds_of_targets_fail_clearly(tmp_path):
    (tmp_path / "m.keras").mkdir()
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        save("keras", tmp_path / "m.keras", 1)
    (tmp_path / "sm").write_bytes(b"x")
    with pytest.raises(FileExistsError, match="a file of that name exists"):
        save("saved_model", tmp_path / "sm", 1)
    assert entries(tmp_path) == ["m.keras", "sm"]


# ------------------------------------------------------ child processes ---
PRELUDE = f"""
import os, sys, threading, time
sys.path.insert(0, {HERE!r})
from test_atomic_saves import save
from tapeflow.saving import atomic, temp_names
"""

BLOCKED_SAVES = PRELUDE + """
directory = sys.argv[1]
blocked = threading.Semaphore(0)

def block(tmp):   # the temporary is complete: stop here until killed
    print(tmp, flush=True)
    blocked.release()
    time.sleep(600)
atomic.fsync_path = atomic.fsync_tree = block
for fmt in ("keras", "saved_model"):   # one file save and one directory save, stopped before their renames
    threading.Thread(target=save, args=(fmt, os.path.join(directory, sys.argv[2 if fmt == "keras" else 3]), 9),
                     daemon=True).start()
    blocked.acquire()
temp_names._host_tag = lambda: "0badc0de"   # and what a save on another machine sharing the directory left
for name in sys.argv[2:4]:
    other = temp_names.temp_path(os.path.join(directory, name))
    open(other, "wb").close()
    print(other, flush=True)
time.sleep(600)
"""


def _start(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stop(process):
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=30)


def test_the_next_save_removes_the_temporaries_of_dead_processes_only(tmp_path):
    names = [NAMES["keras"], NAMES["saved_model"]]
    for fmt in ("keras", "saved_model"):
        save(fmt, tmp_path / NAMES[fmt], 1)
    children = {role: _start(BLOCKED_SAVES, tmp_path, *names) for role in ("dead", "alive")}
    try:
        temps = {}
        for role, child in children.items():   # [file, directory, other host's file, other host's directory]
            temps[role] = [child.stdout.readline().strip() for _ in range(4)]
            assert all(temps[role]), child.stderr.read()
        stuck_file, stuck_directory = temps["dead"][:2]
        assert os.path.getsize(stuck_file) > 10_000   # the model is in it
        assert sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(stuck_directory) for f in fs) > 10_000
        _stop(children["dead"])
        for fmt in ("keras", "saved_model"):
            save(fmt, tmp_path / NAMES[fmt], 2)
            assert loaded_value(fmt, tmp_path / NAMES[fmt]) == 2
        assert not any(os.path.exists(t) for t in temps["dead"][:2])
        assert all(os.path.exists(t) for t in temps["alive"] + temps["dead"][2:])   # alive; another host's
        _stop(children["alive"])
        for fmt in ("keras", "saved_model"):
            save(fmt, tmp_path / NAMES[fmt], 3)
        others = temps["dead"][2:] + temps["alive"][2:]
        assert sorted(os.path.join(tmp_path, e) for e in entries(tmp_path)) \
            == sorted([str(tmp_path / name) for name in names] + others)
    finally:
        for child in children.values():
            _stop(child)


CONCURRENT_CASES = [("keras", "exchange"), ("weights", "exchange"), ("saved_model", "exchange"),
                    ("keras_dir", "exchange"), ("saved_model", "two renames")]

CONCURRENT_SAVER = PRELUDE + """
import json
directory, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
from tapeflow.saving.rename_exchange import ExchangeUnsupported
def unsupported(*args):
    raise ExchangeUnsupported(22, "simulated")
def slowed(real):
    def slow(*args):   # widens the windows in which two saves overlap
        time.sleep(0.003)
        return real(*args)
    return slow
os.replace, os.rename = slowed(os.replace), slowed(os.rename)
swaps = {"exchange": (slowed(atomic.exchange), slowed(atomic.rename_noreplace)),
         "two renames": (unsupported, unsupported)}
print("ready", flush=True)
for line in sys.stdin:   # one case at a time, when the test says so
    fmt, mode, name = line.split()
    atomic.exchange, atomic.rename_noreplace = swaps[mode.replace("_", " ")]
    results = []
    for k in range(first, first + count):
        start = time.time()
        try:
            save(fmt, os.path.join(directory, name), k)
            results.append([k, None, start, time.time()])
        except OSError as e:
            results.append([k, f"{type(e).__name__}: {e}", start, time.time()])
    print(json.dumps(results), flush=True)
"""


def test_two_processes_saving_one_path_each_win_whole_or_fail_clearly(tmp_path):
    children = [_start(CONCURRENT_SAVER, tmp_path, first, 10) for first in (100, 200)]
    try:
        for child in children:
            assert child.stdout.readline().strip() == "ready", child.stderr.read()
        for fmt, mode in CONCURRENT_CASES:
            name = NAMES[fmt] if mode == "exchange" else "renamed-" + NAMES[fmt]
            _two_processes_save_one_path(tmp_path / name, fmt, mode, children)
        assert entries(tmp_path) == sorted(NAMES[fmt] if mode == "exchange" else "renamed-" + NAMES[fmt]
                                           for fmt, mode in CONCURRENT_CASES)   # no temporary, no old one
    finally:
        for child in children:
            _stop(child)


def _two_processes_save_one_path(path, fmt, mode, children):
    save(fmt, path, 0)
    loads, problems, done = [], [], threading.Event()

    def observe():
        if fmt != "keras":
            return loaded_value(fmt, path)
        # load_model opens a .keras path several times (zip directory, HDF5 member, CRC check), so a load
        # racing a save can read two different files; one open shows whether the file itself is whole
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
        return 0

    def read_while_they_save():   # the path is never missing nor mixed (two renames excepted)
        while not done.is_set():
            try:
                loads.append(observe())
            except Exception as e:  # noqa: BLE001 - reported below
                problems.append(f"{type(e).__name__}: {e}")
    reader = threading.Thread(target=read_while_they_save) if mode == "exchange" else None
    for child in children:
        child.stdin.write(f"{fmt} {mode.replace(' ', '_')} {path.name}\n")
        child.stdin.flush()
    if reader is not None:
        reader.start()
    results = []
    try:
        for child in children:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            results.append(json.loads(line))
    finally:
        done.set()
        if reader is not None:
            reader.join()
    spans = [[(start, end) for _, _, start, end in outcome] for outcome in results]
    assert any(a0 < b1 and b0 < a1 for a0, a1 in spans[0] for b0, b1 in spans[1]), "the saves never overlapped"
    succeeded = set()
    for outcome in results:
        for k, error, _, _ in outcome:
            if error is None:
                succeeded.add(k)
            else:
                assert error.startswith("OSError: [Errno 16] Cannot save to"), (fmt, mode, error)
    assert succeeded, results
    last_of_each = {max(k for k, error, _, _ in outcome if error is None) for outcome in results
                    if any(error is None for _, error, _, _ in outcome)}
    assert loaded_value(fmt, path) in last_of_each, (fmt, mode)
    assert problems == [], (fmt, mode)
    assert set(loads) <= succeeded | {0}, (fmt, mode)


# ----------------------------------------------------------- SIGKILLs ---
KILL_FORMATS = ("keras", "weights", "saved_model", "keras_dir")

ZYGOTE = PRELUDE + """
import json
paths = json.loads(sys.argv[1])
formats = list(paths)

def mark(log, text):
    if log is not None:
        os.write(log, (text + "\\n").encode())

def slowed(real, before, after):
    def wrapper(*args):   # small sleeps that make kills land between the steps of a directory swap
        mark(LOG[0], before)
        time.sleep(0.005)
        result = real(*args)
        mark(LOG[0], after)
        time.sleep(0.005)
        return result
    return wrapper
LOG = [None]
atomic.exchange = slowed(atomic.exchange, "swapping", "swapped")
atomic.rename_noreplace = slowed(atomic.rename_noreplace, "swapping", "swapped")
os.rename = slowed(os.rename, "swapping", "swapped")   # what a swap by two renames would use
for fmt in formats:   # the first save of each path, before any kill; also warms everything up
    save(fmt, paths[fmt], 0)
print("ready", flush=True)
for line in sys.stdin:
    first, forever, log_path = line.split()
    pid = os.fork()
    if pid == 0:
        LOG[0] = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        k = int(first)
        while True:
            for fmt in formats:
                mark(LOG[0], f"start {fmt} {k}")
                save(fmt, paths[fmt], k)
                mark(LOG[0], f"done {fmt} {k}")
            k += 1
            if forever == "once":
                os._exit(0)
    print(pid, flush=True)
    os.waitpid(pid, 0)
    print("reaped", flush=True)
"""


def test_a_save_killed_at_any_point_leaves_the_previous_or_the_new_model(tmp_path):
    rng = random.Random(20240611)
    paths = {fmt: str(tmp_path / NAMES[fmt]) for fmt in KILL_FORMATS}
    zygote = _start(ZYGOTE, json.dumps(paths))
    try:
        assert zygote.stdout.readline().strip() == "ready", zygote.stderr.read()
        saved = {fmt: 0 for fmt in KILL_FORMATS}   # the value of each path's last completed save
        k = 1
        landed = {"writing a file": 0, "writing a directory": 0, "around the swap of a directory": 0}
        left_behind = False      # whether some kill left a temporary (the next save sweeps it)
        for i in range(150):   # at least 30 kills, more until every phase was hit 3 times (a loaded machine)
            if i >= 30 and min(landed.values()) >= 3:
                break
            log = tmp_path.parent / f"kill-{tmp_path.name}-{i}.log"
            zygote.stdin.write(f"{k} forever {log}\n")
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline())
            time.sleep(rng.uniform(0.005, 0.25))
            os.kill(pid, signal.SIGKILL)
            assert zygote.stdout.readline().strip() == "reaped"
            lines = log.read_text().splitlines() if log.exists() else []
            in_progress = None
            for line in lines:
                words = line.split()
                if words[0] == "start":
                    in_progress = (words[1], float(words[2]))
                elif words[0] == "done":
                    saved[words[1]], in_progress = float(words[2]), None
                    k = int(words[2]) + 1
            for fmt in KILL_FORMATS:
                allowed = {saved[fmt]}
                if in_progress is not None and in_progress[0] == fmt:
                    allowed.add(in_progress[1])
                saved[fmt] = loaded_value(fmt, paths[fmt])   # the killed save may have completed
                assert saved[fmt] in allowed, (i, fmt, lines[-3:])
            if in_progress is not None:
                k = max(k, int(in_progress[1]) + 1)
            left_behind = left_behind or any(e.startswith(".") for e in entries(tmp_path))
            last = lines[-1].split() if lines else ["done"]
            if last[0] == "start":
                landed["writing a directory" if last[1] in DIRECTORY_FORMATS else "writing a file"] += 1
            elif last[0] in ("swapping", "swapped"):   # just before it, or before the replaced one is removed
                landed["around the swap of a directory"] += 1
        assert min(landed.values()) >= 3, landed   # the kills did land everywhere
        assert left_behind, "no kill left a temporary behind: the kills did not land inside saves"
        zygote.stdin.write(f"{k} once {tmp_path.parent / ('final-' + tmp_path.name + '.log')}\n")
        zygote.stdin.flush()
        int(zygote.stdout.readline())
        assert zygote.stdout.readline().strip() == "reaped"
        assert entries(tmp_path) == sorted(NAMES[fmt] for fmt in KILL_FORMATS)   # every stale one swept
        for fmt in KILL_FORMATS:
            assert loaded_value(fmt, paths[fmt]) == k
    finally:
        zygote.kill()
        zygote.communicate(timeout=30)
