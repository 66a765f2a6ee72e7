"""Traced control flow against the same loop written in numpy.

* while_loop: a tf.function whose AutoGraph loop ``for i in tf.range(n): x = x * 0.999 + 1.0`` runs
  n = 2000 iterations on 64 float32 values (one While node replayed per call: each iteration runs the
  condition and body sub-graphs on arrays). Reference: the same update in a Python loop on a numpy array.
* while_loop gradient: tape.gradient of the sum of that loop's result with respect to x (the recorded
  While node's gradient: a loop recomputing and stacking the states, then a backward loop). Reference: the
  forward numpy loop plus its hand-written backward loop (the derivative is 0.999 ** n per element).
* cond: a tf.function choosing between two branches by a traced predicate, per call. Reference: the numpy
  expression chosen by a Python if.
"""
import time

import numpy as np

import tapeflow as tf
from common import emit

N, SIZE = 2000, 64


def best_of(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


@tf.function
def loop(n, x):
    for _ in tf.range(n):
        x = x * 0.999 + 1.0
    return x


@tf.function
def choose(p, x):
    if p:
        x = x * 2.0
    else:
        x = x - 1.0
    return x


def numpy_loop(x):
    for _ in range(N):
        x = x * np.float32(0.999) + np.float32(1.0)
    return x


def numpy_loop_and_gradient(x):
    for _ in range(N):
        x = x * np.float32(0.999) + np.float32(1.0)
    g = np.ones_like(x)
    for _ in range(N):
        g = g * np.float32(0.999)
    return x, g


def main():
    x0 = np.linspace(0.0, 1.0, SIZE).astype(np.float32)
    x, n = tf.constant(x0), tf.constant(N)
    np.testing.assert_allclose(loop(n, x).numpy(), numpy_loop(x0), rtol=1e-5)
    t_loop = best_of(lambda: loop(n, x))
    t_ref = best_of(lambda: numpy_loop(x0))
    print(f"while_loop, {N} iterations: tapeflow {t_loop * 1e3:.1f} ms, numpy {t_ref * 1e3:.1f} ms, "
          f"ratio {t_loop / t_ref:.1f}")
    emit(f"while_loop {N} iterations", t_loop, t_ref)

    v = tf.Variable(x0)

    def gradient():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(loop(n, v))
        return tape.gradient(y, v)
    np.testing.assert_allclose(gradient().numpy(), numpy_loop_and_gradient(x0)[1], rtol=1e-4)
    t_grad = best_of(gradient, repeat=3)
    t_grad_ref = best_of(lambda: numpy_loop_and_gradient(x0), repeat=3)
    print(f"while_loop + gradient: tapeflow {t_grad * 1e3:.1f} ms, numpy {t_grad_ref * 1e3:.1f} ms, "
          f"ratio {t_grad / t_grad_ref:.1f}")
    emit(f"while_loop {N} iterations + gradient", t_grad, t_grad_ref)

    p, q = tf.constant(True), tf.constant(False)

    def calls():
        for _ in range(100):
            choose(p, x)
            choose(q, x)

    def numpy_calls():
        for flag in [True, False] * 100:
            _ = x0 * np.float32(2.0) if flag else x0 - np.float32(1.0)
    t_cond, t_cond_ref = best_of(calls) / 200, best_of(numpy_calls) / 200
    print(f"cond call: tapeflow {t_cond * 1e6:.1f} us, numpy {t_cond_ref * 1e6:.1f} us")
    emit("cond per call", t_cond, t_cond_ref, unit="us")


if __name__ == "__main__":
    main()
