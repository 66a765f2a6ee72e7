"""Jacobian cost: jacobian and batch_jacobian against one gradient() call of the same network.

Two workloads: the advanced guide's batch_jacobian example (x [7, 5], two
elu Dense-like layers 5->8->6) and a larger one (x [64, 32] -> y [64, 32]).
The jacobian runs one vectorised backward pass over a stack of cotangents,
so its cost is a small multiple of one gradient, not one gradient per output.
"""
import time

import numpy as np

import tapeflow as tf
from common import emit


def best_of(fn, repeat=5, number=5):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def workload(batch, n_in, hidden, n_out, seed=0):
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(batch, n_in)).astype(np.float32))
    w1 = tf.constant((rng.normal(size=(n_in, hidden)) / np.sqrt(n_in)).astype(np.float32))
    b1 = tf.constant(np.zeros(hidden, np.float32))
    w2 = tf.constant((rng.normal(size=(hidden, n_out)) / np.sqrt(hidden)).astype(np.float32))
    b2 = tf.constant(np.zeros(n_out, np.float32))

    def forward():
        return tf.nn.elu(tf.nn.elu(x @ w1 + b1) @ w2 + b2)

    def gradient():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = forward()
        return tape.gradient(y, x)

    def jacobian():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = forward()
        return tape.jacobian(y, x)

    def batch_jacobian():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = forward()
        return tape.batch_jacobian(y, x)

    return gradient, jacobian, batch_jacobian


def main():
    print(f"{'workload':28s} {'gradient ms':>12s} {'jacobian ms':>12s} {'ratio':>7s} {'batch_jac ms':>13s} {'ratio':>7s}")
    rows = []
    for name, shape in [("guide: [7,5] 5->8->6", (7, 5, 8, 6)), ("[64,32] 32->64->32", (64, 32, 64, 32))]:
        gradient, jacobian, batch_jacobian = workload(*shape)
        tg, tj, tb = best_of(gradient), best_of(jacobian), best_of(batch_jacobian)
        rows.append((name, tg, tj, tb))
        print(f"{name:28s} {tg * 1e3:12.3f} {tj * 1e3:12.3f} {tj / tg:6.1f}x {tb * 1e3:13.3f} {tb / tg:6.1f}x")
        emit(f"jacobian {name}", tj, tg, "one gradient")
        emit(f"batch_jacobian {name}", tb, tg, "one gradient")
    print("targets: a full jacobian of the 64x32 output < 10 gradient calls; batch_jacobian < 3")
    return rows


if __name__ == "__main__":
    main()
