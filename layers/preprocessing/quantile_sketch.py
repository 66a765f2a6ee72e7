"""The approximate-quantile summary behind ``Discretization.adapt``, as Keras 3 computes it (observed).

A summary is a (2, k) float32 array: sorted values and the weight (number of samples) each stands for.
``summarize`` keeps every ``step``-th sorted value of a batch, ``step = int(n * epsilon)`` (at least 1),
starting at the ``step``-th, each weighing ``max(n * epsilon, 1)``: the tail past the last kept value is
dropped. ``compress`` resamples a summary at the cumulative-weight fractions ``epsilon, 2 epsilon, ... (< 1 +
epsilon)`` by linear interpolation (values and cumulative weights), unless it has fewer than ``1 / epsilon``
entries. Batches are merged by concatenating, sorting by value and compressing. The boundaries for ``num_bins``
are the summary compressed at ``1 / num_bins`` without its last value -- fewer than ``num_bins - 1`` when the
summary is too small to compress, as in Keras.

The rounding is Keras's too: cumulative weights and their fractions in float32, the resampling fractions in
float64, interpolation in float64, summaries stored as float32 (so arange(300) gives 73.99996, not 74, as in
Keras 3.15).
"""
import numpy as np


def empty_summary():
    return np.zeros((2, 0), dtype=np.float32)


def summarize(values, epsilon):
    values = np.sort(np.asarray(values, dtype=np.float32).reshape(-1))
    increment = values.size * epsilon
    step = max(int(increment), 1)
    kept = values[step - 1::step]
    return np.stack([kept, np.full(kept.shape, max(increment, 1.0), dtype=np.float32)]).astype(np.float32)


def compress(summary, epsilon):
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = np.arange(0.0, 1.0, epsilon) + epsilon
    cumulative = np.cumsum(summary[1], dtype=np.float32)
    positions = cumulative / cumulative[-1]
    values = np.interp(fractions, positions, summary[0])
    weights = np.diff(np.interp(fractions, positions, cumulative), prepend=0.0)
    return np.stack([values, weights]).astype(np.float32)


def merge(summary, other, epsilon):
    merged = np.concatenate([summary, other], axis=1)
    return compress(merged[:, np.argsort(merged[0], kind="stable")], epsilon)


def bin_boundaries(summary, num_bins):
    return [float(v) for v in compress(summary, 1.0 / num_bins)[0, :-1]]
