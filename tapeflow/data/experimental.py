"""tf.data.experimental"""
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401
from .text_files import CsvDataset, make_csv_dataset  # noqa: F401
from .options import AutotuneOptions, DistributeOptions, OptimizationOptions, ThreadingOptions  # noqa: F401


def cardinality(dataset):
    """The dataset's cardinality as a scalar int64 Tensor (-1: infinite, -2: unknown)."""
    return dataset.cardinality()


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    from .dataset import Dataset
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    from .dataset import Dataset
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """A transformation for ``dataset.apply``: ``dataset.rejection_resample(...)``."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist, seed)


def Counter(start=0, step=1, dtype=None):
    from ..framework import dtypes
    from .dataset import Dataset
    return Dataset.counter(start, step, dtypes.int64 if dtype is None else dtype)
