"""tf.data input pipelines against hand-written numpy batching of the same data.

Data: 60,000 examples of 784 float32 features and an int64 label (MNIST's
size). One epoch is timed, best of several runs:

* shuffle+batch: ``from_tensor_slices((x, y)).shuffle(60000).batch(128)``,
  every batch a pair of Tensors. Reference: ``perm = rng.permutation(n)``,
  then ``x[perm[i:i+128]], y[perm[i:i+128]]`` per batch (numpy fancy indexing).
  tapeflow runs the shuffle buffer on row indices in numba and gathers each
  batch with one fancy index per array (the index fast path); the same
  pipeline element by element (the fast path switched off) is shown beside.
* shuffle(1000)+batch: a partial shuffle buffer, same reference.
* batch: no shuffle; reference: ``x[i:i+128].copy()``.
* batch+map: ``.batch(128).map(lambda x, y: (x / 255, y))``; reference does
  the division in numpy.
* prefetch: a generator that waits 2 ms per batch (standing for reading it
  from disk), consumed by a loop doing a matmul per batch, with and without
  ``prefetch(2)`` (the producer thread overlaps the consumer); reference: the
  same generator and work in one plain loop.
"""
import time

import numpy as np

import tapeflow as tf
from common import emit
from tapeflow.data import batching

N, FEATURES, BATCH = 60_000, 784, 128


def best_of(fn, repeat=5):
    fn()   # warm-up (numba compiles the shuffle kernels on first use)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def consume(dataset):
    count = 0
    for _ in dataset:
        count += 1
    return count


def numpy_shuffled_batches(x, y, rng):
    perm = rng.permutation(len(x))
    count = 0
    for i in range(0, len(x), BATCH):
        index = perm[i:i + BATCH]
        _ = x[index], y[index]
        count += 1
    return count


def numpy_batches(x, y, scale=False):
    count = 0
    for i in range(0, len(x), BATCH):
        xb, _ = x[i:i + BATCH].copy(), y[i:i + BATCH].copy()
        if scale:
            xb = xb / 255
        count += 1
    return count


def main():
    rng = np.random.RandomState(0)
    x = rng.rand(N, FEATURES).astype(np.float32)
    y = rng.randint(0, 10, size=N).astype(np.int64)
    source = tf.data.Dataset.from_tensor_slices((x, y))
    rows = []

    full = source.shuffle(N, seed=1).batch(BATCH)
    partial = source.shuffle(1000, seed=1).batch(BATCH)
    reference = best_of(lambda: numpy_shuffled_batches(x, y, rng))
    fast_full = best_of(lambda: consume(full))
    fast_partial = best_of(lambda: consume(partial))
    batching.USE_INDEX_PLANS = False
    slow_full = best_of(lambda: consume(full), repeat=2)
    batching.USE_INDEX_PLANS = True
    rows.append(("shuffle(60000)+batch(128), 1 epoch", fast_full, reference, {"element-wise": slow_full}))
    rows.append(("shuffle(1000)+batch(128), 1 epoch", fast_partial, reference, {}))

    plain = source.batch(BATCH)
    rows.append(("batch(128), 1 epoch", best_of(lambda: consume(plain)), best_of(lambda: numpy_batches(x, y)), {}))
    mapped = source.batch(BATCH).map(lambda xb, yb: (xb / 255, yb))
    rows.append(("batch(128).map(x/255), 1 epoch", best_of(lambda: consume(mapped)),
                 best_of(lambda: numpy_batches(x, y, scale=True)), {}))

    w = rng.rand(FEATURES, FEATURES).astype(np.float32)
    steps = 60

    def read_batches():
        for i in range(steps):
            time.sleep(0.002)                      # stands for reading a batch from disk
            yield x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]

    def consumer_work(xb):
        return (np.asarray(xb) @ w).sum()          # the training step's work

    signature = (tf.TensorSpec((None, FEATURES), tf.float32), tf.TensorSpec((None,), tf.int64))
    no_prefetch = tf.data.Dataset.from_generator(read_batches, output_signature=signature)
    with_prefetch = no_prefetch.prefetch(2)

    def run(dataset):
        for xb, _ in dataset:
            consumer_work(xb)

    def reference_loop():
        for xb, _ in read_batches():
            consumer_work(xb)
    rows.append((f"generator(2ms I/O)+prefetch(2), {steps} batches", best_of(lambda: run(with_prefetch), 3),
                 best_of(reference_loop, 3), {"no prefetch": best_of(lambda: run(no_prefetch), 3)}))

    print(f"{'workload':58s} {'tapeflow ms':>12s} {'numpy ms':>10s} {'ratio':>7s}  others")
    for name, ours, ref, others in rows:
        extra = "  ".join(f"{k}: {v * 1e3:.1f} ms" for k, v in others.items())
        print(f"{name:58s} {ours * 1e3:12.1f} {ref * 1e3:10.1f} {ours / ref:6.2f}x  {extra}")
    for name, ours, ref, others in rows:
        emit("tf.data " + name, ours, ref, others=others)


if __name__ == "__main__":
    main()
