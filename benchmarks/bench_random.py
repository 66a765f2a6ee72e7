"""Large random draws: tapeflow's TensorFlow-identical Philox streams against numpy's generator.

    python benchmarks/bench_random.py [--size N] [--repeats R] [--clock wall|cpu]

For each of uniform / normal / truncated normal in float32 and float64, N values (1e6 by default):
  tapeflow   tf.random.stateless_* (seed -> key/counter, numba Philox-4x32-10 kernel, bits -> values)
  generator  tf.random.Generator.normal / uniform (reads and moves its state variable, then the same kernel)
  numpy      np.random.Generator (PCG64): random, standard_normal, and for the truncated normal
             standard_normal with the values beyond 2 drawn again (the reference a numpy engine would use)
Best of R repeats after one warm-up call (which compiles the numba kernels or loads them from the cache).
``--clock cpu`` uses the process's CPU time: on a busy shared machine the wall clock mostly measures waiting.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tapeflow as tf  # noqa: E402
from common import emit  # noqa: E402


def best(fn, repeats, clock):
    fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def numpy_truncated(rng, n, dtype):
    values = rng.standard_normal(n, dtype)
    outside = np.abs(values) >= 2
    while outside.any():
        values[outside] = rng.standard_normal(int(outside.sum()), dtype)
        outside = np.abs(values) >= 2
    return values


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10 ** 6)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    n, seed, rng = args.size, tf.constant([1, 2], tf.int64), np.random.default_rng(0)
    gen = tf.random.Generator.from_seed(1)
    print(f"{n} values, best of {args.repeats}, {args.clock} clock (ms)")
    print(f"{'draw':<28}{'tapeflow':>10}{'generator':>11}{'numpy':>9}{'ratio':>8}")
    for dtype, np_dtype in ((tf.float32, np.float32), (tf.float64, np.float64)):
        cases = [
            ("uniform", lambda: tf.random.stateless_uniform([n], seed, dtype=dtype),
             lambda: gen.uniform([n], dtype=dtype), lambda: rng.random(n, np_dtype)),
            ("normal", lambda: tf.random.stateless_normal([n], seed, dtype=dtype),
             lambda: gen.normal([n], dtype=dtype), lambda: rng.standard_normal(n, np_dtype)),
            ("truncated_normal", lambda: tf.random.stateless_truncated_normal([n], seed, dtype=dtype),
             lambda: gen.truncated_normal([n], dtype=dtype), lambda: numpy_truncated(rng, n, np_dtype)),
        ]
        for name, ours, generator, reference in cases:
            t_ours, t_gen, t_ref = (best(f, args.repeats, clock) for f in (ours, generator, reference))
            label = f"{name} {dtype.name}"
            print(f"{label:<28}{t_ours * 1e3:>10.2f}{t_gen * 1e3:>11.2f}{t_ref * 1e3:>9.2f}{t_ours / t_ref:>8.2f}")
            emit(f"random {label} ({n})", t_ours, t_ref, others={"generator": t_gen})


if __name__ == "__main__":
    main()
