"""Per-call cost of a traced tf.function against calling the same Python function eagerly.

The body is small (``x * y + 1.0`` on 4x4 float32 tensors), so the difference is what one call of an
already traced function adds: building the cache key from the arguments, finding the trace, and replaying
its graph. The numpy line is the arithmetic alone, the floor any engine on numpy can reach.
"""
import sys
import time

import numpy as np

import tapeflow as tf
from common import emit

NUMBER = 5000


def best_of(fn, repeat=7):
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(NUMBER):
            fn()
        best = min(best, (time.perf_counter() - start) / NUMBER)
    return best


def body(x, y):
    return x * y + 1.0


def scaled(x, y, scale):
    return x * y * scale


def main():
    a = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    b = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    x, y = tf.constant(a), tf.constant(b)
    traced = tf.function(body)
    signed = tf.function(body, input_signature=[tf.TensorSpec([None, 4], tf.float32)] * 2)
    relaxed = tf.function(body, reduce_retracing=True)
    with_python_arg = tf.function(scaled)
    cases = [
        ("tf.function(f)(x, y)", lambda: traced(x, y), lambda: body(x, y)),
        ("input_signature [None, 4]", lambda: signed(x, y), lambda: body(x, y)),
        ("reduce_retracing=True", lambda: relaxed(x, y), lambda: body(x, y)),
        ("f(x, y, 2.0) (Python arg)", lambda: with_python_arg(x, y, 2.0), lambda: scaled(x, y, 2.0)),
    ]
    t_numpy = best_of(lambda: a * b + np.float32(1.0))
    print(f"a traced call of f(x, y) = x * y + 1.0 on 4x4 float32, no tape; python {sys.version.split()[0]}")
    print(f"numpy a * b + 1: {t_numpy * 1e6:.2f} us")
    print(f"{'call':28s} {'tf.function us':>15s} {'plain Python us':>16s} {'added us':>9s} {'ratio':>6s}")
    for name, call, plain in cases:
        t_fn, t_plain = best_of(call), best_of(plain)
        print(f"{name:28s} {t_fn * 1e6:15.2f} {t_plain * 1e6:16.2f} {(t_fn - t_plain) * 1e6:9.2f} "
              f"{t_fn / t_plain:6.2f}")
        emit(f"tf.function call: {name}", t_fn, t_plain, reference="plain Python call", unit="us")
    assert traced.experimental_get_tracing_count() == 1 and signed.experimental_get_tracing_count() == 1


if __name__ == "__main__":
    main()
