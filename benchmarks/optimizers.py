"""One Adam step over 10 M float32 parameters: tapeflow's fused kernel vs numpy.

The numpy reference is the same formula written with whole-array numpy
operations (and their temporaries): the best a numpy-only engine does. The
fused kernel reads g, m, v, w and writes m, v, w once each: 7 x 4 bytes per
parameter. Both are compared with the machine's practical memory bandwidth,
measured as a numpy copy moving the same number of bytes.
"""
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import tapeflow as tf
from common import emit
from tapeflow import optimizers
from tapeflow.kernels import optimizers as kernels

SHAPES = [(2500, 2000), (2000, 1000), (1500, 1000), (1000, 1000), (500, 1000)]   # 10,000,000 parameters
LR, BETA_1, BETA_2, EPS = 1e-3, 0.9, 0.999, 1e-7


def best_of(fn, repeat=7, number=3):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def numpy_adam(ws, gs, ms, vs, state):
    """Adam in plain numpy, as Keras writes it (float32 throughout)."""
    state["t"] += 1
    t = np.float32(state["t"])
    lr = np.float32(LR)
    alpha = lr * np.sqrt(np.float32(1) - np.float32(BETA_2) ** t) / (np.float32(1) - np.float32(BETA_1) ** t)
    c1, c2, eps = np.float32(1 - BETA_1), np.float32(1 - BETA_2), np.float32(EPS)
    for w, g, m, v in zip(ws, gs, ms, vs):
        m += (g - m) * c1
        v += (g * g - v) * c2
        w -= (m * alpha) / (np.sqrt(v) + eps)


def main():
    rng = np.random.default_rng(0)
    n = sum(int(np.prod(s)) for s in SHAPES)
    init = [rng.standard_normal(s, dtype=np.float32) for s in SHAPES]
    grads = [tf.constant(rng.standard_normal(s, dtype=np.float32)) for s in SHAPES]

    variables = [tf.Variable(x) for x in init]
    opt = optimizers.Adam(learning_rate=LR)
    pairs = list(zip(grads, variables))
    t_fused = best_of(lambda: opt.apply_gradients(pairs))
    kernels.MAX_THREADS = 1
    t_fused_1 = best_of(lambda: opt.apply_gradients(pairs))
    kernels.MAX_THREADS = None
    threads = kernels.config.NUMBA_NUM_THREADS

    ws = [x.copy() for x in init]
    gs = [g.numpy() for g in grads]
    ms = [np.zeros_like(x) for x in init]
    vs = [np.zeros_like(x) for x in init]
    state = {"t": 0}
    t_numpy = best_of(lambda: numpy_adam(ws, gs, ms, vs, state))

    # Same number of steps on both sides: the results must agree bit for bit.
    ref = [x.copy() for x in init]
    ref_m = [np.zeros_like(x) for x in init]
    ref_v = [np.zeros_like(x) for x in init]
    ref_state = {"t": 0}
    for _ in range(int(opt.iterations.numpy())):
        numpy_adam(ref, gs, ref_m, ref_v, ref_state)
    max_diff = max(float(np.max(np.abs(v.numpy() - r))) for v, r in zip(variables, ref))

    adam_bytes = 7 * 4 * n
    src = np.ones(adam_bytes // 8, np.float32)           # copy: read + write = the same bytes as one Adam step
    dst = np.empty_like(src)
    t_copy = best_of(lambda: np.copyto(dst, src))
    copy_gbs = adam_bytes / t_copy / 1e9
    # The same copy on every thread (np.copyto releases the GIL): the bus, not one core, as the limit.
    pool = ThreadPoolExecutor(threads)
    chunks = np.array_split(np.arange(src.size), threads)
    bounds = [(c[0], c[-1] + 1) for c in chunks]

    def threaded_copy():
        list(pool.map(lambda b: np.copyto(dst[b[0]:b[1]], src[b[0]:b[1]]), bounds))
    t_copy_all = best_of(threaded_copy)

    print(f"Adam step, {n:,} float32 parameters in {len(SHAPES)} arrays "
          f"({adam_bytes / 1e6:.0f} MB of memory traffic per fused step)")
    print(f"{'implementation':34s} {'ms/step':>9s} {'GB/s':>7s} {'% of copy':>10s}")
    print(f"{'numpy copy of the same bytes':34s} {t_copy * 1e3:9.2f} {copy_gbs:7.2f} {100.0:9.0f}%")
    print(f"{f'numpy copy, {threads} threads':34s} {t_copy_all * 1e3:9.2f} {adam_bytes / t_copy_all / 1e9:7.2f} "
          f"{100 * t_copy / t_copy_all:9.0f}%")
    rows = (("numpy Adam (with temporaries)", t_numpy), ("tapeflow Adam, fused, 1 thread", t_fused_1),
            (f"tapeflow Adam, fused, {threads} threads", t_fused))
    for label, t in rows:
        gbs = adam_bytes / t / 1e9
        print(f"{label:34s} {t * 1e3:9.2f} {gbs:7.2f} {100 * gbs / copy_gbs:9.0f}%")
    emit("Adam step, 10M float32 parameters", t_fused, t_numpy)
    print(f"speed-up over numpy: {t_numpy / t_fused_1:.2f}x on 1 thread, {t_numpy / t_fused:.2f}x on {threads}   "
          f"(max |tapeflow - numpy| after {int(opt.iterations.numpy())} steps: {max_diff:g})")


if __name__ == "__main__":
    main()
