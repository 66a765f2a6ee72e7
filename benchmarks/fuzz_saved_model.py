"""Fuzzes tf.saved_model.load with seeded mutations of a SavedModel's two files.

Each case mutates saved_model.json (a field replaced by a hostile value, deleted,
duplicated, nested 10,000 deep, bytes flipped or cut) or variables.h5 (bytes
flipped, zeroed or cut; a dataset replaced by a link, another shape or dtype,
chunks). A load must then either succeed or raise FileFormatError (OSError for
I/O): anything else is *obscure*. A model that loads is called and
differentiated; an error there must be an op error, ValueError, TypeError or the
LookupError of a missing gradient. Worker subprocesses run the cases with a
timeout each, so crashes (a signal) and hangs are counted, not fatal.

    python benchmarks/fuzz_saved_model.py [--cases 10000] [--workers 2] [--seed 0]

prints cases / clear / loaded / obscure / crashes / hangs. tests/test_hostile_saved_model.py
runs a few hundred of the same cases in process (run_in_process).
"""
import argparse
import collections
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HOSTILE_VALUES = [None, True, False, 0, -1, 1, 2, 7, 2 ** 31, 2 ** 63, -2 ** 63 - 1, 10 ** 30, 1.5, -0.0,
                  float("nan"), float("inf"), "", "x", "AddV2", "IdentityN", "Unpack", "__VariableRead__",
                  "__VariableAssign__", "__PythonCall__", "float64", "int32", "string", "../variables", "a" * 5000,
                  [], [0], [-1], [2 ** 40], ["node", 0, 0], ["in", 0], ["const", 0], ["capture", 0],
                  {}, {"list": []}, {"ref": ["in", 0]}, {"object": 0}, {"python": None}]


# ------------------------------------------------------------------ the model ---
MODEL_SOURCE = """
import numpy as np
import tapeflow as tf


@tf.custom_gradient
def clip(y):
    return y, lambda dy: tf.clip_by_norm(dy, 0.5)


class Head(tf.Module):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(np.float32(2.0), name="scale")
        self.steps = tf.Variable(0, trainable=False, name="steps")


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, name="w")
        self.heads = [Head()]

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def predict(self, x):
        y = clip(tf.matmul(x, self.w) + tf.constant([1.0, 2.0, 3.0]))
        parts = tf.unstack(tf.transpose(y))
        self.heads[0].steps.assign_add(1)
        return {"y": y * self.heads[0].scale, "total": tf.reduce_sum(y, axis=1), "first": parts[0],
                "soft": tf.nn.softmax(tf.reshape(y, [-1, 3]), axis=-1)}
"""


def save_model(directory):
    """Saves the fuzzed model (variables, constants, a custom gradient, several op kinds) to ``directory``."""
    import tapeflow as tf
    namespace = {}
    exec(compile(MODEL_SOURCE, "fuzz_model", "exec"), namespace)  # this script's own source
    tf.saved_model.save(namespace["Net"](), str(directory))


# -------------------------------------------------------------- mutations ---
def _paths(value, path=()):
    """Every (container, key) in a JSON tree, with its depth-first path."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield value, k
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield value, i
            yield from _paths(v, path + (i,))


def _deep(depth):
    text = "[" * depth + "]" * depth
    return text


def mutate_json(text, rng):
    """(description, mutated bytes) of a saved_model.json."""
    kind = rng.choice(["value", "value", "value", "int", "int", "swap", "delete", "duplicate", "deep", "bytes"])
    if kind == "bytes":
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data))
            op = rng.random()
            if op < 0.5:
                data[at] = rng.randrange(256)
            elif op < 0.75:
                del data[at:at + rng.randint(1, 20)]
            else:
                data[at:at] = bytes(rng.choice(b'{}[]",:0123456789-eE.') for _ in range(rng.randint(1, 5)))
        return "bytes", bytes(data)
    document = json.loads(text)
    places = list(_paths(document))
    if kind == "int":
        ints = [(c, k) for c, k in places if isinstance(c[k], int) and not isinstance(c[k], bool)]
        container, key = rng.choice(ints)
        old = container[key]
        container[key] = rng.choice([old + 1, old - 1, -old - 1, old * 2 + 1, old + 2 ** 31, 2 ** 20, 0])
        return f"int {key!r}: {old} -> {container[key]}", json.dumps(document).encode()
    container, key = rng.choice(places)
    if kind == "value":
        container[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        return f"value {key!r} -> {str(container[key])[:30]}", json.dumps(document).encode()
    if kind == "swap":                  # another value of the same file: an op name, a reference, a spec
        other_container, other_key = rng.choice(places)
        container[key] = copy.deepcopy(other_container[other_key])
        return f"swap {key!r} <- {other_key!r}", json.dumps(document).encode()
    if kind == "delete":
        if isinstance(container, dict):
            del container[key]
        else:
            container.pop(key)
        return f"delete {key!r}", json.dumps(document).encode()
    if kind == "duplicate":
        if isinstance(container, list):
            container.insert(rng.randrange(len(container) + 1), copy.deepcopy(container[key]))
        else:
            container[f"{key}_copy"] = copy.deepcopy(container[key])
        return f"duplicate {key!r}", json.dumps(document).encode()
    depth = rng.choice([70, 500, 10_000])
    container[key] = "@DEEP@"
    return f"deep {key!r} x{depth}", json.dumps(document).replace('"@DEEP@"', _deep(depth)).encode()


def mutate_h5_bytes(data, rng):
    data = bytearray(data)
    kind = rng.choice(["flip", "flip", "zero", "cut"])
    if kind == "cut":
        return "cut", bytes(data[:rng.randrange(len(data))])
    if kind == "zero":
        at = rng.randrange(len(data))
        data[at:at + rng.randint(1, 64)] = bytes(min(64, len(data) - at))
        return f"zero at {at}", bytes(data)
    for _ in range(rng.randint(1, 6)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return "flip", bytes(data)


def mutate_h5_structure(path, rng):
    """Replaces one dataset of variables.h5 (in place) by something unsafe or inconsistent."""
    import h5py
    with h5py.File(path, "a") as f:
        names = []
        f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
        member = rng.choice(names)
        old = f[member][()]
        del f[member]
        kind = rng.choice(["soft", "external", "shape", "dtype", "chunked", "empty", "scalar", "huge"])
        if kind == "soft":
            f[member] = h5py.SoftLink("/" + rng.choice(names))
        elif kind == "external":
            f[member] = h5py.ExternalLink(os.path.join(os.path.dirname(path), "..", "other.h5"), "/x")
        elif kind == "shape":
            f[member] = np.resize(old, (np.size(old) + 1,))
        elif kind == "dtype":
            f[member] = np.asarray(old).astype(rng.choice([np.float64, np.int8, np.complex64, np.uint16]))
        elif kind == "chunked":
            f.create_dataset(member, data=np.atleast_1d(old), chunks=True)
        elif kind == "empty":
            f.create_dataset(member, shape=np.shape(old), dtype=np.asarray(old).dtype)
        elif kind == "scalar":
            f[member] = np.float32(1)
        else:
            f.create_dataset(member, shape=(2 ** 34,), dtype=np.float32)
    return f"h5 {kind} {member}"


def make_case(base, target, rng):
    """Copies the SavedModel ``base`` to ``target`` with one mutation; returns its description."""
    if os.path.exists(target):
        shutil.rmtree(target)
    shutil.copytree(base, target)
    roll = rng.random()
    if roll < 0.7:
        with open(os.path.join(base, "saved_model.json")) as f:
            description, data = mutate_json(f.read(), rng)
        with open(os.path.join(target, "saved_model.json"), "wb") as f:
            f.write(data)
        return "json " + description
    h5 = os.path.join(target, "variables.h5")
    if roll < 0.85:
        with open(h5, "rb") as f:
            description, data = mutate_h5_bytes(f.read(), rng)
        with open(h5, "wb") as f:
            f.write(data)
        return "h5 bytes " + description
    return mutate_h5_structure(h5, rng)


# ----------------------------------------------------------------- verdicts ---
def judge(directory):
    """'clear' (refused with a FileFormatError or OSError), 'loaded' (loaded, and ran or failed with a
    clear error), or ('obscure', what happened)."""
    import tapeflow as tf
    from tapeflow.saving import FileFormatError
    try:
        model = tf.saved_model.load(str(directory))
    except (FileFormatError, OSError):
        return "clear"
    except Exception as err:  # noqa: BLE001 - anything else is what the fuzz looks for
        return "obscure", f"load: {type(err).__name__}: {err}"[:300] + "\n" + traceback.format_exc()[-600:]
    try:
        x = tf.constant(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
        predict = getattr(model, "predict", None)
        if predict is not None:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = predict(x)
            flat = [t for t in tf.nest.flatten(y) if isinstance(t, tf.Tensor) and t.dtype.is_floating]
            if flat:
                tape.gradient(flat, x)
    except (tf.errors.OpError, ValueError, TypeError, NotImplementedError, ArithmeticError):
        pass
    except LookupError as err:
        if type(err) is not LookupError:   # KeyError, IndexError: a bug, not a message
            return "obscure", f"call: {type(err).__name__}: {err}"[:300] + "\n" + traceback.format_exc()[-600:]
    except Exception as err:  # noqa: BLE001
        return "obscure", f"call: {type(err).__name__}: {err}"[:300] + "\n" + traceback.format_exc()[-600:]
    return "loaded"


def run_in_process(base, workdir, seed, cases):
    """Runs ``cases`` mutations of the SavedModel ``base`` here; returns the counts."""
    rng = random.Random(seed)
    counts = {"cases": 0, "clear": 0, "loaded": 0, "obscure": []}
    target = os.path.join(str(workdir), "case")
    for _ in range(cases):
        description = make_case(str(base), target, rng)
        verdict = judge(target)
        counts["cases"] += 1
        if isinstance(verdict, tuple):
            counts["obscure"].append((description, verdict[1]))
        else:
            counts[verdict] += 1
    return counts


# ------------------------------------------------------------- the long run ---
def _worker(base, workdir, seed, first, count):
    """Worker mode: judges cases ``first`` .. ``first + count``; prints one JSON line per case."""
    for index in range(first, first + count):
        rng = random.Random(f"{seed}-{index}")
        target = os.path.join(workdir, f"case-{index}")
        description = make_case(base, target, rng)
        print(json.dumps({"index": index, "description": description, "start": True}), flush=True)
        verdict = judge(target)
        shutil.rmtree(target, ignore_errors=True)
        print(json.dumps({"index": index, "description": description,
                          "verdict": verdict if isinstance(verdict, str) else list(verdict)}), flush=True)


def _run_batch(base, workdir, seed, first, count, timeout):
    """Runs one worker on a batch; a hang or crash ends the batch and is blamed on the unfinished case."""
    command = [sys.executable, __file__, "--worker", base, workdir, str(seed), str(first), str(count)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        output, failure = result.stdout, None if result.returncode == 0 else f"crash (exit {result.returncode})"
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        failure = "hang"
    finished, started = {}, None
    for line in output.splitlines():
        record = json.loads(line)
        if record.get("start"):
            started = record
        else:
            finished[record["index"]] = record
    return finished, (started if started and started["index"] not in finished else None), failure


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        base, workdir, seed, first, count = args.worker
        _worker(base, workdir, int(seed), int(first), int(count))
        return
    from concurrent.futures import ThreadPoolExecutor
    with tempfile.TemporaryDirectory() as workdir:
        base = os.path.join(workdir, "base")
        save_model(base)
        counts = collections.Counter()
        obscure, crashes, hangs = [], [], []
        start = time.perf_counter()
        pending = [(first, min(args.batch, args.cases - first)) for first in range(0, args.cases, args.batch)]
        with ThreadPoolExecutor(args.workers) as pool:
            while pending:
                batches = pending
                pending = []
                futures = [pool.submit(_run_batch, base, workdir, args.seed, first, count,
                                       args.timeout * count + 20) for first, count in batches]
                for (first, count), future in zip(batches, futures):
                    finished, culprit, failure = future.result()
                    for record in finished.values():
                        verdict = record["verdict"]
                        counts["cases"] += 1
                        if isinstance(verdict, list):
                            counts["obscure"] += 1
                            obscure.append((record["description"], verdict[1]))
                        else:
                            counts[verdict] += 1
                    if culprit is not None:
                        counts["cases"] += 1
                        counts["hangs" if failure == "hang" else "crashes"] += 1
                        (hangs if failure == "hang" else crashes).append(culprit["description"])
                    done = len(finished) + (culprit is not None)
                    if done < count:   # the batch stopped early: the rest runs in a new worker
                        pending.append((first + done, count - done))
        elapsed = time.perf_counter() - start
    print(f"SavedModel fuzz: seed {args.seed}, {args.workers} workers, {elapsed:.0f} s")
    print(f"  cases    {counts['cases']}")
    print(f"  clear    {counts['clear']}   (FileFormatError / OSError at load)")
    print(f"  loaded   {counts['loaded']}   (loaded; ran, or failed with an op/value/type error)")
    print(f"  obscure  {counts['obscure']}")
    print(f"  crashes  {counts['crashes']}")
    print(f"  hangs    {counts['hangs']}")
    for description, what in obscure[:10]:
        print(f"  obscure: {description}\n    {what}")
    for description in crashes[:10]:
        print(f"  crash: {description}")
    for description in hangs[:10]:
        print(f"  hang: {description}")


if __name__ == "__main__":
    main()
