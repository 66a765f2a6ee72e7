"""Tape overhead: a chain of scalar multiply-adds, recorded and differentiated.

Prints microseconds per recorded op (forward + backward) for tapeflow, and for
the same chain in plain numpy (forward only, and forward with a hand-written
backward), measured in the same run. Ratios are what to compare across
machines; absolute times on a shared machine are noisy.
"""
import sys
import time

import numpy as np

import tapeflow as tf
from common import emit, optional_import

N_MULADD = 100               # 100 multiply-adds = 200 recorded ops
OPS = 2 * N_MULADD


def best_of(fn, repeat=21, number=20):  # the best of many short runs: robust on a shared machine
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def tapeflow_chain():
    x = tf.constant(0.5)
    a = tf.constant(1.001)
    b = tf.constant(0.01)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(N_MULADD):
            y = y * a + b
    return tape.gradient(y, x)


def tapeflow_chain_no_tape():
    a = tf.constant(1.001)
    b = tf.constant(0.01)
    y = tf.constant(0.5)
    for _ in range(N_MULADD):
        y = y * a + b
    return y


def numpy_forward():
    a = np.float32(1.001)
    b = np.float32(0.01)
    y = np.float32(0.5)
    for _ in range(N_MULADD):
        y = y * a + b
    return y


def numpy_forward_backward():
    a = np.float32(1.001)
    b = np.float32(0.01)
    y = np.float32(0.5)
    saved = []
    for _ in range(N_MULADD):
        saved.append(y)
        y = y * a + b
    g = np.float32(1.0)
    for _ in reversed(saved):
        g = g * a          # d(y*a + b)/dy = a
    return g


def torch_chain(torch):
    a = torch.tensor(1.001)
    b = torch.tensor(0.01)
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(N_MULADD):
        y = y * a + b
    y.backward()
    return x.grad


def tensorflow_chain(real_tf):
    x = real_tf.constant(0.5)
    a = real_tf.constant(1.001)
    b = real_tf.constant(0.01)
    with real_tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(N_MULADD):
            y = y * a + b
    return tape.gradient(y, x)


def main():
    assert abs(float(tapeflow_chain()) - 1.001 ** N_MULADD) < 1e-3
    t_tape = best_of(tapeflow_chain)
    t_eager = best_of(tapeflow_chain_no_tape)
    t_np = best_of(numpy_forward)
    t_np_fb = best_of(numpy_forward_backward)
    us = 1e6 / OPS
    print(f"chain of {N_MULADD} scalar multiply-adds ({OPS} ops), float32, python {sys.version.split()[0]}")
    print(f"{'workload':44s} {'us/op':>8s}")
    print(f"{'tapeflow, recorded + gradient()':44s} {t_tape * us:8.2f}")
    print(f"{'tapeflow, no tape (eager forward only)':44s} {t_eager * us:8.2f}")
    print(f"{'numpy forward only':44s} {t_np * us:8.2f}")
    print(f"{'numpy forward + hand-written backward':44s} {t_np_fb * us:8.2f}")
    others = {}
    torch = optional_import("torch")
    if torch is not None:
        others["torch"] = best_of(lambda: torch_chain(torch)) / OPS
        print(f"{'PyTorch eager autograd':44s} {others['torch'] * 1e6:8.2f}")
    real_tf = optional_import("tensorflow")
    if real_tf is not None and real_tf is not tf:
        others["tensorflow"] = best_of(lambda: tensorflow_chain(real_tf)) / OPS
        print(f"{'TensorFlow eager GradientTape':44s} {others['tensorflow'] * 1e6:8.2f}")
    print(f"tape cost beyond numpy forward+backward: {(t_tape - t_np_fb) * us:.2f} us/op "
          f"(target < 3); ratio tapeflow / numpy fwd+bwd = {t_tape / t_np_fb:.1f}x")
    emit("tape: scalar op recorded + differentiated (per op)", t_tape / OPS, t_np_fb / OPS,
         "numpy + hand backward", others, unit="us")
    return t_tape * us, t_np_fb * us


if __name__ == "__main__":
    main()
