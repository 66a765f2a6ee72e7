"""tf.data.experimental"""
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401
from .options import AutotuneOptions, DistributeOptions, OptimizationOptions, ThreadingOptions  # noqa: F401


def cardinality(dataset):
    """The dataset's cardinality as a scalar int64 Tensor (-1: infinite, -2: unknown)."""
    return dataset.cardinality()
