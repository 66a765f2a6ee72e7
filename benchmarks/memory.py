"""Peak memory of one training step of the 784-256-256-10 MLP at batch 1024.

Measured with tracemalloc (numpy reports its array allocations to it) as the
peak above the memory held before the step, for the tape-based step and for
the hand-written numpy forward/backward/Adam step of the same network.
Target: tapeflow within 1.3x of numpy.
"""
import os
import sys
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tapeflow as tf  # noqa: E402
from common import emit  # noqa: E402
from mlp_train import NumpyMLP, TapeLoop, initial_weights, synthetic_data  # noqa: E402

BATCH = 1024


def peak_of(step, *batch):
    step(*batch)  # warm up: optimizer slots and kernels exist before we measure
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step(*batch)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def main():
    x, y = synthetic_data(BATCH)
    weights = initial_weights()
    numpy_peak = peak_of(NumpyMLP(weights).step, x, y)
    tape_peak = peak_of(TapeLoop(weights).step, tf.constant(x), tf.constant(y))
    mb = 1 / 2 ** 20
    print(f"peak memory above the resting state, one Adam step, MLP 784-256-256-10, batch {BATCH}")
    print(f"{'implementation':28s} {'MB':>8s}")
    print(f"{'hand-written numpy':28s} {numpy_peak * mb:8.2f}")
    print(f"{'tapeflow tape loop':28s} {tape_peak * mb:8.2f}")
    print(f"ratio tapeflow / numpy: {tape_peak / numpy_peak:.2f} (target <= 1.3)")
    emit(f"peak memory of an MLP step, batch {BATCH}", tape_peak * mb, numpy_peak * mb, "numpy", unit="MB")


if __name__ == "__main__":
    main()
