"""Per-op dispatch cost: common ops on a small tensor, tapeflow against the numpy call it wraps.

On a 4x4 float32 tensor the arithmetic is nothing, so the difference is what
one eager tapeflow op adds (argument checks, dtype rules, Tensor creation,
kernel dispatch). No tape is active; tape_overhead.py measures recording.
"""
import statistics
import sys
import time

import numpy as np

import tapeflow as tf
from common import emit

NUMBER = 2000


def best_of(fn, repeat=7):
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(NUMBER):
            fn()
        best = min(best, (time.perf_counter() - start) / NUMBER)
    return best


def cases():
    a = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    b = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    x, y = tf.constant(a), tf.constant(b)
    s = tf.constant(np.float32(1.5))
    bias, bias_np = tf.constant(b[0]), b[0]
    two = np.float32(2.0)
    return [
        ("x * y", lambda: x * y, lambda: a * b),
        ("scalar * scalar", lambda: s * s, lambda: two * two),
        ("x * 2.0 (Python number)", lambda: x * 2.0, lambda: a * two),
        ("x + bias row (broadcast)", lambda: x + bias, lambda: a + bias_np),
        ("x[0] (slice)", lambda: x[0], lambda: a[0]),
        ("tf.exp", lambda: tf.exp(x), lambda: np.exp(a)),
        ("tf.square", lambda: tf.square(x), lambda: np.square(a)),
        ("tf.nn.relu", lambda: tf.nn.relu(x), lambda: np.maximum(a, 0)),
        ("tf.matmul", lambda: tf.matmul(x, y), lambda: a @ b),
        ("tf.reduce_sum", lambda: tf.reduce_sum(x), lambda: np.add.reduce(a, axis=(0, 1))),
        ("tf.reduce_mean(axis=0)", lambda: tf.reduce_mean(x, axis=0), lambda: np.add.reduce(a, axis=0) / two),
        ("tf.reshape", lambda: tf.reshape(x, [16]), lambda: a.reshape(16)),
        ("tf.cast to float64", lambda: tf.cast(x, tf.float64), lambda: a.astype(np.float64)),
    ]


def main():
    print(f"one eager op on a 4x4 float32 tensor, no tape; python {sys.version.split()[0]}")
    print(f"{'op':28s} {'tapeflow us':>12s} {'numpy us':>9s} {'added us':>9s}")
    added = []
    for name, op, reference in cases():
        t_op, t_np = best_of(op), best_of(reference)
        added.append(t_op - t_np)
        print(f"{name:28s} {t_op * 1e6:12.2f} {t_np * 1e6:9.2f} {(t_op - t_np) * 1e6:9.2f}")
    median_op = statistics.median(best_of(op) for _, op, _ in cases())
    median_np = statistics.median(best_of(ref) for _, _, ref in cases())
    print(f"median added cost per op: {statistics.median(added) * 1e6:.2f} us")
    emit("one eager op, 4x4 float32 (median of 13 ops)", median_op, median_np, "numpy call", unit="us")


if __name__ == "__main__":
    main()
