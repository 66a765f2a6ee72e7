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


def best_of(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


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


def main():
    warnings.simplefilter("ignore")   # the legacy-format notice of model.save("m.h5")
    model = make_model()
    params = model.count_params()
    arrays = [np.asarray(v) for v in model.weights] + [np.asarray(v) for v in model.optimizer.variables]
    total_mb = sum(a.nbytes for a in arrays) / 1e6
    tmp = tempfile.mkdtemp(prefix="tapeflow-bench-")
    try:
        raw = os.path.join(tmp, "raw.h5")
        t_raw_save = best_of(lambda: raw_write(raw, arrays))
        t_raw_load = best_of(lambda: raw_read(raw, len(arrays)))
        rows = []
        for label, name, save in (
                (".weights.h5", "m.weights.h5", lambda p: model.save_weights(p)),
                (".keras", "m.keras", lambda p: model.save(p)),
                ("legacy .h5", "m.h5", lambda p: model.save(p))):
            path = os.path.join(tmp, name)
            t_save = best_of(lambda: save(path))
            t_load = best_of(lambda: model.load_weights(path))
            t_model = t_build = None
            if name != "m.weights.h5":
                t_model = best_of(lambda: tf.keras.models.load_model(path), repeat=3)
                config = keras_archive.model_config(model)
                t_build = best_of(lambda: keras_archive.build_model(config, path), repeat=3)
            rows.append((label, t_save, t_load, t_model, t_build))

        print(f"Saving a {params / 1e6:.1f} M-parameter model (Adam state included: {len(arrays)} arrays, "
              f"{total_mb:.0f} MB)")
        print(f"raw h5py: write {t_raw_save * 1e3:.1f} ms, read {t_raw_load * 1e3:.1f} ms")
        print(f"{'format':12s} {'save ms':>8s} {'x raw':>6s} {'load_weights ms':>16s} {'x raw':>6s} "
              f"{'load_model ms':>14s} {'(rebuild ms)':>13s}")
        for label, t_save, t_load, t_model, t_build in rows:
            model_cols = "" if t_model is None else f"{t_model * 1e3:14.1f} {f'({t_build * 1e3:.1f})':>13s}"
            print(f"{label:12s} {t_save * 1e3:8.1f} {t_save / t_raw_save:6.2f} {t_load * 1e3:16.1f} "
                  f"{t_load / t_raw_load:6.2f} {model_cols}")
        for label, t_save, t_load, _, _ in rows:
            emit(f"save {label}, 10M params + Adam", t_save, t_raw_save, reference="raw h5py")
            emit(f"load_weights {label}, 10M params + Adam", t_load, t_raw_load, reference="raw h5py")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
