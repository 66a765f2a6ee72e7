"""Seeded mutations of Keras files, and the load of one mutated file: shared by tests/test_fuzz_h5.py and
benchmarks/fuzz_h5_files.py.

``run_case(fmt, seed, workdir)`` writes the mutated file of case ``(fmt, seed)`` and loads it the way
format ``fmt`` is loaded; it returns ``(outcome, detail)`` with outcome ``ok`` (loaded, and the model
predicts with output of the right shape), ``clear`` (a FileFormatError, registry refusals included,
or an OSError) or ``obscure`` (any other exception). ``python fuzz_cases.py --serve`` answers one case per
line on stdin (``fmt seed``) with ``outcome detail`` on stdout, for runs in subprocesses.
"""
import os
import random
import shutil
import struct
import sys
import warnings
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "keras")

# format -> (fixture, how it loads)
FORMATS = {
    "weights.h5": ("m.weights.h5", "load_weights"),
    "keras": ("m.keras", "load_model"),
    "keras-valid-crc": ("m.keras", "load_model"),    # the HDF5 member mutated, then its CRC-32 fixed
    "keras-dir": ("m.keras", "load_model_dir"),      # an unzipped .keras: mutated model.weights.h5
    "keras-config": ("m.keras", "load_model"),       # a node of config.json replaced by a value of another type
    "legacy.h5": ("m.h5", "load_model"),
    "legacy-weights.h5": ("tfk2_weights.h5", "load_weights"),
}

_PRISTINE = {}


def _pristine(name):
    if name not in _PRISTINE:
        with open(os.path.join(FIXTURES, name), "rb") as f:
            _PRISTINE[name] = f.read()
    return _PRISTINE[name]


def _member_span(data, member="model.weights.h5"):
    """(start, size) of a stored member's bytes in a zip held in ``data``."""
    import io
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(member)
    name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
    return info.header_offset + 30 + name_len + extra_len, info.file_size


def mutate(data, rng):
    """``data`` with one seeded mutation: 1-4 bit flips, an overwrite of 1-8 bytes, or a truncation."""
    data = bytearray(data)
    kind = rng.random()
    if kind < 0.45:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return bytes(data)
    if kind < 0.85:
        n = rng.randint(1, 8)
        i = rng.randrange(len(data) - n)
        fill = rng.choice([b"\xff" * n, b"\x00" * n, bytes(rng.randrange(256) for _ in range(n))])
        data[i:i + n] = fill
        return bytes(data)
    return bytes(data[:rng.randrange(len(data))])


_WRONG_VALUES = [5, -1, 2.5, True, None, "x", "", [], [1, "a"], {}, {"class_name": 5}, {"config": []},
                 {"class_name": "Dense", "config": "x"}, {"module": 5, "class_name": "Dense", "config": {}},
                 [[[[[]]]]], "keras.layers", 10 ** 30, {"class_name": "__lambda__", "config": {}}]


def _nodes(value, path=()):
    """(path, value) of every node of parsed JSON."""
    out = [(path, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _nodes(v, path + (i,))
    return out


def mutate_config(config, rng):
    """``config`` with one node replaced by a value of another type, or a key dropped, or deep nesting."""
    import copy
    config = copy.deepcopy(config)
    paths = [p for p, _ in _nodes(config) if p]
    path = rng.choice(paths)
    parent = config
    for key in path[:-1]:
        parent = parent[key]
    kind = rng.random()
    if kind < 0.15 and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind < 0.25:
        parent[path[-1]] = f"__DEEP_{rng.choice([50, 200, 5000, 100000])}__"   # spelled out by config_text
    else:
        parent[path[-1]] = rng.choice(_WRONG_VALUES)
    return config


def config_text(config):
    """JSON of ``config`` with each ``"__DEEP_n__"`` replaced by lists and objects nested ``n`` deep."""
    import json
    import re
    return re.sub(r'"__DEEP_(\d+)__"', lambda m: '[{"config": ' * int(m.group(1)) + "0" + "}]" * int(m.group(1)),
                  json.dumps(config))


def mutated_file(fmt, seed, workdir):
    """Writes the file of case ``(fmt, seed)`` in ``workdir``; returns its path."""
    fixture, _ = FORMATS[fmt]
    rng = random.Random(f"{fmt}:{seed}")
    data = _pristine(fixture)
    if fmt == "keras-config":
        import json
        path = os.path.join(workdir, f"case{seed}.keras")
        with zipfile.ZipFile(os.path.join(FIXTURES, fixture)) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                member = src.read(info)
                if info.filename == "config.json":
                    member = config_text(mutate_config(json.loads(member), rng)).encode()
                dst.writestr(info.filename, member)
        return path
    if fmt in ("keras-valid-crc", "keras-dir"):
        start, size = _member_span(data)
        member = mutate(data[start:start + size], rng)
        if fmt == "keras-dir":
            path = os.path.join(workdir, f"case{seed}")
            shutil.rmtree(path, ignore_errors=True)
            os.mkdir(path)
            with zipfile.ZipFile(os.path.join(FIXTURES, fixture)) as z:
                for name in ("config.json", "metadata.json"):
                    with open(os.path.join(path, name), "wb") as f:
                        f.write(z.read(name))
            with open(os.path.join(path, "model.weights.h5"), "wb") as f:
                f.write(member)
            return path
        path = os.path.join(workdir, f"case{seed}.keras")
        with zipfile.ZipFile(os.path.join(FIXTURES, fixture)) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                dst.writestr(info.filename, member if info.filename == "model.weights.h5" else src.read(info))
        return path
    path = os.path.join(workdir, f"case{seed}{fixture[fixture.index('.'):]}")
    with open(path, "wb") as f:
        f.write(mutate(data, rng))
    return path


def target_model():
    import tapeflow as tf
    keras = tf.keras
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.optimizer.build(model.trainable_variables)
    return model


def _clear_types():
    from tapeflow.saving import FileFormatError
    return (FileFormatError, OSError)


def load(fmt, path):
    """Loads ``path`` as format ``fmt``; returns the model."""
    import tapeflow as tf
    how = FORMATS[fmt][1]
    if how == "load_weights":
        model = target_model()
        model.load_weights(path)
        return model
    return tf.keras.models.load_model(path)


def check_valid(model):
    x = np.load(os.path.join(FIXTURES, "m_x.npy"))
    y = np.asarray(model(x))
    if y.shape != (len(x), 3):
        raise AssertionError(f"the loaded model predicts shape {y.shape}")


def run_case(fmt, seed, workdir):
    path = mutated_file(fmt, seed, workdir)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load(fmt, path)
        check_valid(model)
        return "ok", ""
    except _clear_types() as e:
        return "clear", f"{type(e).__name__}"
    except Exception as e:  # noqa: BLE001 - every other type is what the fuzz run looks for
        return "obscure", f"{type(e).__name__}: {str(e)[:200]}".replace("\n", " ")
    finally:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(path):
            os.remove(path)


def serve():
    import tempfile
    import tapeflow  # noqa: F401  (imported before "ready")
    print("ready", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for line in sys.stdin:
            fmt, seed = line.split()
            outcome, detail = run_case(fmt, int(seed), workdir)
            print(f"{outcome} {detail}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    if sys.argv[1:] == ["--serve"]:
        serve()
