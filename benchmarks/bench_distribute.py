"""Data-parallel training on MPI: the fit step of an MLP on 1 and 2 processes, and the all-reduce cost.

    python benchmarks/bench_distribute.py [--steps N]

The script launches itself under the mpiexec installed next to the interpreter (the `mpich` wheel):

  fit step   model.fit of a 784-256-256-10 ReLU MLP (Adam, float32), global batch 256, per-step time
             over whole epochs. 1 process with 1 and with 2 BLAS threads, and 2 processes of 1 thread
             each (MultiWorkerMirroredStrategy: each trains on 128 rows, one all-reduce of the
             gradients per step). Two cores cap the speed-up at 2x.
  allreduce  MPI_Allreduce (in place, float32, 2 processes) of 1-16 MB, against a plain memory copy of
             the same buffer in the same process (the reference: what one pass over the data costs).

It ends with a paper estimate for 8-64 nodes: each node keeps a batch of 128 rows (weak scaling), so a
step costs the measured 1-process, 1-thread fit step on 128 rows plus a ring all-reduce of the model's
gradients, 2 (N-1)/N x size / link bandwidth + 2 (N-1) x latency, for a 10 Gb/s link (1.25 GB/s,
25 us) and a 100 Gb/s one (12.5 GB/s, 5 us). These are assumptions, not measurements.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import emit  # noqa: E402

SIZES = (784, 256, 256, 10)
GLOBAL_BATCH = 256
RESULT = "BENCH_DISTRIBUTE "


def worker(steps, mode, batch):
    import tapeflow as tf
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    backend = strategy.extended.backend
    result = {"size": backend.size}
    if mode in ("fit", "all"):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch * steps, SIZES[0])).astype(np.float32)
        y = rng.integers(0, SIZES[-1], len(x))
        tf.keras.utils.set_random_seed(1)
        with strategy.scope():
            layers = [tf.keras.Input((SIZES[0],))] + [tf.keras.layers.Dense(n, activation="relu")
                                                      for n in SIZES[1:-1]] + [tf.keras.layers.Dense(SIZES[-1])]
            model = tf.keras.Sequential(layers)
            model.compile(tf.keras.optimizers.Adam(1e-3),
                          tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)   # compile kernels, warm up
        best = np.inf
        for _ in range(3):
            backend.barrier()
            start = time.perf_counter()
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
            best = min(best, (time.perf_counter() - start) / steps)
        result["fit_step"] = best
        result["parameters"] = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    if mode in ("allreduce", "all") and backend.size > 1:
        result["allreduce"] = {}
        for megabytes in (1, 4, 16):
            buffer = np.ones(megabytes * (1 << 20) // 4, np.float32)
            copy = np.empty_like(buffer)
            backend.allreduce(buffer)
            reduce_times, copy_times = [], []
            for _ in range(10):
                backend.barrier()
                start = time.perf_counter()
                backend.allreduce(buffer)
                reduce_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                np.copyto(copy, buffer)
                copy_times.append(time.perf_counter() - start)
            result["allreduce"][megabytes] = (float(np.median(reduce_times)), float(np.median(copy_times)))
    if backend.rank == 0:
        print(RESULT + json.dumps(result), flush=True)


def launch(processes, threads, steps, mode, batch=GLOBAL_BATCH):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", str(processes), sys.executable, os.path.abspath(__file__), "--worker", mode,
               "--steps", str(steps), "--batch", str(batch)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def ring_allreduce_seconds(nodes, nbytes, bandwidth, latency):
    return 2 * (nodes - 1) / nodes * nbytes / bandwidth + 2 * (nodes - 1) * latency


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--worker", choices=["fit", "allreduce", "all"])
    parser.add_argument("--batch", type=int, default=GLOBAL_BATCH)
    args = parser.parse_args()
    if args.worker:
        return worker(args.steps, args.worker, args.batch)

    one_thread = launch(1, 1, args.steps, "fit")
    two_threads = launch(1, 2, args.steps, "fit")
    two_procs = launch(2, 1, args.steps, "all")
    half_batch = launch(1, 1, args.steps, "fit", batch=GLOBAL_BATCH // 2)   # one node's share in the estimate

    print(f"fit step, MLP {'-'.join(map(str, SIZES))}, global batch {GLOBAL_BATCH} ({two_procs['parameters']:,} "
          "parameters):")
    print(f"  1 process,   1 thread   {one_thread['fit_step'] * 1e3:8.2f} ms")
    print(f"  1 process,   2 threads  {two_threads['fit_step'] * 1e3:8.2f} ms")
    print(f"  2 processes, 1 thread   {two_procs['fit_step'] * 1e3:8.2f} ms   speed-up "
          f"{one_thread['fit_step'] / two_procs['fit_step']:.2f}x over 1 thread, "
          f"{two_threads['fit_step'] / two_procs['fit_step']:.2f}x over 2 threads")
    print("allreduce, 2 processes (float32, in place) against a memory copy of the same buffer:")
    for megabytes, (reduce_s, copy_s) in two_procs["allreduce"].items():
        print(f"  {int(megabytes):3d} MB  allreduce {reduce_s * 1e3:7.2f} ms ({int(megabytes) / reduce_s / 1024:5.2f} "
              f"GB/s)  copy {copy_s * 1e3:6.2f} ms  ratio {reduce_s / copy_s:5.1f}x")
    per_mb = two_procs["allreduce"]["16"][0] / 16
    gradient_bytes = two_procs["parameters"] * 4
    measured_reduce = per_mb * gradient_bytes / (1 << 20)
    print(f"  cost per MB (16 MB buffer): {per_mb * 1e3:.2f} ms; the MLP's gradients ({gradient_bytes / 1e6:.2f} MB) "
          f"take about {measured_reduce * 1e3:.2f} ms per step here")

    compute = half_batch["fit_step"]   # measured: one process, 1 thread, 128 rows
    print("paper estimate, weak scaling (128 rows per node, global batch 128 x N), step time and efficiency:")
    for name, bandwidth, latency in (("10 Gb/s", 1.25e9, 25e-6), ("100 Gb/s", 12.5e9, 5e-6)):
        cells = []
        for nodes in (8, 16, 32, 64):
            step = compute + ring_allreduce_seconds(nodes, gradient_bytes, bandwidth, latency)
            cells.append(f"N={nodes}: {step * 1e3:6.2f} ms ({compute / step:4.0%})")
        print(f"  {name:9s}" + "  ".join(cells))

    emit("distribute: MLP fit step, 2 processes vs 1 (1 thread each)", two_procs["fit_step"],
         one_thread["fit_step"], reference="1 process")
    emit("distribute: allreduce 16 MB, 2 processes vs memory copy", two_procs["allreduce"]["16"][0],
         two_procs["allreduce"]["16"][1], reference="np.copyto")


if __name__ == "__main__":
    main()
