"""Start-up: `import tapeflow`, the first gradient, and the first training step of the digits
example, each in a fresh process.

"warm" means numba's on-disk cache already holds the kernels (the runs before
warm it); "cold" points NUMBA_CACHE_DIR at an empty directory, so every kernel
the step needs is compiled.
"""
import json
import os
import subprocess
import sys
import tempfile

from common import emit

GRADIENT_PROBE = r"""
import json, time
t0 = time.perf_counter()
import tapeflow as tf
t1 = time.perf_counter()
x = tf.Variable(tf.random.normal([32, 16]))
w = tf.Variable(tf.random.normal([16, 8]))
with tf.GradientTape() as tape:
    y = tf.reduce_mean(tf.nn.softmax(tf.nn.relu(x @ w)))
tape.gradient(y, [x, w])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1}))
"""

FIT_PROBE = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import tapeflow as tf
sys.path.insert(0, os.path.join(sys.argv[1], "examples"))
from keras_fit import build_model, load_digits
t1 = time.perf_counter()
(x, y), _ = load_digits()
model = build_model()
model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.train_on_batch(x[:32], y[:32])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1}))
"""

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def probe(code, env=None):
    out = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True, check=True,
                         env={**os.environ, **(env or {})}).stdout
    return json.loads(out.strip().splitlines()[-1])


def best(code, runs=3):
    return min((probe(code) for _ in range(runs)), key=lambda r: r["import"] + r["first"])


def main():
    probe(GRADIENT_PROBE)
    probe(FIT_PROBE)  # warm the cache
    grad, fit = best(GRADIENT_PROBE), best(FIT_PROBE)
    with tempfile.TemporaryDirectory() as empty:
        cold = probe(FIT_PROBE, {"NUMBA_CACHE_DIR": empty})
    print(f"{'measurement (fresh process each)':52s} {'seconds':>8s}")
    print(f"{'import tapeflow':52s} {grad['import']:8.3f}   (target < 0.5)")
    print(f"{'first gradient after import, warm cache':52s} {grad['first']:8.3f}   (target < 1)")
    print(f"{'first digits training step, warm cache':52s} {fit['first']:8.3f}   (target < 2)")
    print(f"{'first digits training step, cold cache (compiles)':52s} {cold['first']:8.3f}")
    emit("import tapeflow (fresh process)", grad["import"], 0.5, "target 0.5 s")
    emit("first digits training step, warm numba cache", fit["first"], 2.0, "target 2 s")


if __name__ == "__main__":
    main()
