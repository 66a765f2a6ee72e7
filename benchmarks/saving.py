"""Saving and loading a 10 M-parameter model in each Keras format, against raw h5py.

The model is an MLP of 10.0 M float32 parameters, compiled with Adam and
trained one step, so every format also stores the optimizer state (the two
Adam slots: 30 M numbers, 120 MB in all). The reference writes exactly the
same arrays with h5py as flat datasets ``"0" .. "n-1"`` in one file, and
reads them back into numpy arrays: the floor for any HDF5-based format.

* save: ``model.save_weights`` / ``model.save`` (the write goes to a
  temporary file that is renamed into place; ``.keras`` also computes the
  zip CRC-32 of the weights member).
* load weights: ``model.load_weights`` into the existing model (everything is
  read and checked before any variable is assigned; ``.keras`` also checks
  the CRC-32).
* load model: ``load_model`` rebuilds the model from its config (creating
  and initializing 10 M fresh parameters and the optimizer slots) before the
  weights are read; the time of that rebuild alone is shown beside it.

Times are the best of several runs, on files in one temporary directory.
"""
import os
import shutil
import tempfile
import time
import warnings

import h5py
import numpy as np

import tapeflow as tf
from common import emit
from tapeflow.saving import keras_archive

WIDTHS = [1024, 2048, 2048, 1024, 1024, 512]   # 10,0 M parameters


def best_of(fn, repeat=7, before=None):
    """Best time of ``fn`` over ``repeat`` runs; ``before`` runs untimed before each, then a pause lets
    the filesystem settle (freeing the blocks of a replaced 120 MB file takes it ~0.1 s here)."""
    times = []
    for _ in range(repeat + 1):
        if before is not None:
            before()
        time.sleep(0.3)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times[1:])


def remove(path):
    if os.path.exists(path):
        os.remove(path)


def make_model():
    keras = tf.keras
    layers = [keras.Input((WIDTHS[0],))] + [keras.layers.Dense(w, activation="relu") for w in WIDTHS[1:]]
    model = keras.Sequential(layers, name="big")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    x = np.random.default_rng(0).standard_normal((8, WIDTHS[0])).astype(np.float32)
    model.fit(x, np.zeros((8, WIDTHS[-1]), np.float32), epochs=1, batch_size=8, verbose=0)
    return model


def raw_write(path, arrays):
    with h5py.File(path, "w") as f:
        for i, a in enumerate(arrays):
            f.create_dataset(str(i), data=a)


def raw_read(path, n):
    with h5py.File(path, "r") as f:
        return [f[str(i)][()] for i in range(n)]


def ratio(t, ref):
    return f"{t * 1e3:8.1f} {t / ref:5.2f}x"


def main():
    warnings.simplefilter("ignore")   # the legacy-format notice of model.save("m.h5")
    model = make_model()
    params = model.count_params()
    model_arrays = [np.asarray(v) for v in model.weights]
    arrays = model_arrays + [np.asarray(v) for v in model.optimizer.variables]
    total_mb = sum(a.nbytes for a in arrays) / 1e6
    tmp = tempfile.mkdtemp(prefix="tapeflow-bench-", dir=os.path.dirname(os.path.abspath(__file__)))
    try:
        raw = os.path.join(tmp, "raw.h5")
        raw_model = os.path.join(tmp, "raw_model.h5")
        raw_write(raw_model, model_arrays)
        t_raw_new = best_of(lambda: raw_write(raw, arrays), before=lambda: remove(raw))
        t_raw_over = best_of(lambda: raw_write(raw, arrays))
        t_raw_read = best_of(lambda: raw_read(raw, len(arrays)))
        t_raw_read_model = best_of(lambda: raw_read(raw_model, len(model_arrays)))
        rows = []
        for label, name, save in (
                (".weights.h5", "m.weights.h5", lambda p: model.save_weights(p)),
                (".keras", "m.keras", lambda p: model.save(p)),
                ("legacy .h5", "m.h5", lambda p: model.save(p))):
            path = os.path.join(tmp, name)
            t_new = best_of(lambda: save(path), before=lambda: remove(path))
            t_over = best_of(lambda: save(path))
            t_load = best_of(lambda: model.load_weights(path))
            # load_weights of a legacy .h5 reads only the model's weights (optimizer state comes with load_model).
            read_ref = t_raw_read_model if name == "m.h5" else t_raw_read
            t_model = t_build = None
            if name != "m.weights.h5":
                t_model = best_of(lambda: tf.keras.models.load_model(path), repeat=3)
                config = keras_archive.model_config(model)
                t_build = best_of(lambda: keras_archive.build_model(config, path), repeat=3)
            rows.append((label, t_new, t_over, t_load, read_ref, t_model, t_build))

        print(f"Saving a {params / 1e6:.1f} M-parameter model with its Adam state: {len(arrays)} arrays, "
              f"{total_mb:.0f} MB (load_weights of a legacy .h5 reads only the model's "
              f"{sum(a.nbytes for a in model_arrays) / 1e6:.0f} MB)")
        print(f"raw h5py, same arrays: write to a new file {t_raw_new * 1e3:.1f} ms, over the old file "
              f"{t_raw_over * 1e3:.1f} ms; read all {t_raw_read * 1e3:.1f} ms, read the model's "
              f"{t_raw_read_model * 1e3:.1f} ms")
        print(f"{'format':12s} {'save, new file':>15s} {'save, replacing':>16s} {'load_weights':>15s} "
              f"{'load_model ms (of which rebuild)':>33s}")
        for label, t_new, t_over, t_load, read_ref, t_model, t_build in rows:
            model_cols = "" if t_model is None else f"{t_model * 1e3:14.1f} ({t_build * 1e3:.1f})"
            print(f"{label:12s} {ratio(t_new, t_raw_new):>15s} {ratio(t_over, t_raw_over):>16s} "
                  f"{ratio(t_load, read_ref):>15s} {model_cols}")
        print("(x = time / raw h5py time for the same arrays; 'replacing' overwrites an existing file, which the "
              "raw writer truncates in place and tapeflow replaces atomically)")
        for label, t_new, t_over, t_load, read_ref, _, _ in rows:
            emit(f"save {label}, 10M params + Adam", t_new, t_raw_new, reference="raw h5py")
            emit(f"load_weights {label}, 10M params + Adam", t_load, read_ref, reference="raw h5py")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
