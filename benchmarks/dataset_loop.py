"""An epoch over a dataset: the loop inside a tf.function against the loop in Python and against numpy.

Workload: linear regression trained by SGD on 4096 rows of 32 features, batches of 64 (64 steps per
epoch), each step a forward, a mean-squared-error gradient and an update of a (32, 1) weight.

* graph loop: ``@tf.function def epoch(ds): for x, y in ds: <step>`` (one While node pulling batches);
* python loop: ``for x, y in ds: step(x, y)`` with ``step`` a tf.function (one call per batch);
* reference: the same epoch in numpy (row slices, matmul, hand-written gradient, in-place update).
"""
import time

import numpy as np

import tapeflow as tf
from common import emit

ROWS, FEATURES, BATCH, LR = 4096, 32, 64, 0.01


def best_of(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    y = (x @ rng.normal(size=(FEATURES, 1)).astype(np.float32)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    w = tf.Variable(np.zeros((FEATURES, 1), np.float32))

    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(xb, w) - yb) ** 2)
        w.assign_sub(LR * tape.gradient(loss, w))

    @tf.function
    def graph_epoch(dataset):
        for xb, yb in dataset:
            train_step(xb, yb)

    step = tf.function(train_step)

    def python_epoch():
        for xb, yb in ds:
            step(xb, yb)

    w_ref = np.zeros((FEATURES, 1), np.float32)

    def numpy_epoch():
        for start in range(0, ROWS, BATCH):
            xb, yb = x[start:start + BATCH], y[start:start + BATCH]
            grad = (2.0 / len(xb)) * (xb.T @ (xb @ w_ref - yb))
            w_ref[...] -= np.float32(LR) * grad.astype(np.float32)

    graph_epoch(ds)
    numpy_epoch()
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-4, atol=1e-5)
    t_graph = best_of(lambda: graph_epoch(ds))
    t_python = best_of(python_epoch)
    t_ref = best_of(numpy_epoch)
    print(f"epoch of {ROWS // BATCH} steps: graph loop {t_graph * 1e3:.1f} ms, python loop of tf.function calls "
          f"{t_python * 1e3:.1f} ms, numpy {t_ref * 1e3:.1f} ms; ratios to numpy {t_graph / t_ref:.1f} and "
          f"{t_python / t_ref:.1f}")
    emit("dataset epoch, loop in tf.function", t_graph, t_ref, others={"python loop": t_python})


if __name__ == "__main__":
    main()
