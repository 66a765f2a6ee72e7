"""tf.data.Dataset: a lazy pipeline of elements, built from sources and transformations.

Every dataset is a node that knows how to iterate its elements (``_iterate``,
a fresh Python iterator per iteration), its element spec and its cardinality.
Transformations return new nodes; nothing runs until the dataset is iterated.
Each module of this package holds one family of nodes (sources, ordering,
shuffle, batching, functions, cache, threads); this module holds the public
API that creates them.
"""
import numpy as np

from ..framework import dtypes
from ..framework.tensor import Tensor
from . import structure

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
AUTOTUNE = -1


def as_int(value, name):
    """A Python int from an int, numpy integer or scalar integer Tensor."""
    if isinstance(value, Tensor):
        value = value._value
    if isinstance(value, (np.ndarray, np.generic)):
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must be a scalar integer, got {value!r}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"`{name}` must be an integer, got {value!r} of type {type(value).__name__}")
    return value


class Dataset:
    """A potentially large set of elements: ``tf.data.Dataset``.

    Subclasses define ``_iterate`` (an iterator of elements), ``_compute_spec``
    and ``_compute_cardinality``; ``_inputs`` lists the datasets they read.
    """
    _tf_name = "Dataset"
    _inputs = ()
    _runs_python = False   # iterating runs user Python code or file I/O (a prefetch thread pays off)

    # -- what a node defines -------------------------------------------------
    def _iterate(self):
        raise NotImplementedError

    def _compute_spec(self):
        raise NotImplementedError

    def _compute_cardinality(self):
        return UNKNOWN_CARDINALITY

    def _index_plan(self):
        """An IndexPlan when the elements are rows gathered by index (see index_plan.py), else None."""
        return None

    # -- introspection -------------------------------------------------------
    @property
    def element_spec(self):
        spec = self.__dict__.get("_element_spec")
        if spec is None:
            spec = self._compute_spec()
            self.__dict__["_element_spec"] = spec
        return spec

    def _cardinality(self):
        return self._compute_cardinality()

    def cardinality(self):
        """The number of elements as a scalar int64 Tensor: INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return Tensor(np.array(self._cardinality(), dtype=np.int64))

    def _runs_python_code(self):
        return self._runs_python or any(d._runs_python_code() for d in self._inputs)

    def _spec_runs_user_code(self):
        """Whether finding the element spec calls a user function (see functions.probe_spec)."""
        return any(d._spec_runs_user_code() for d in self._inputs)

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True  # __len__ is defined, but a dataset is never falsy

    def __repr__(self):
        return f"<{self._tf_name} element_spec={self.element_spec!r}>"

    # -- iteration -------------------------------------------------------------
    def __iter__(self):
        from . import graph_iteration
        if graph_iteration.tracing():   # inside a tf.function: pulls at each call (graph_iteration.py)
            graph_iteration.refuse_python_loop("dataset", 1)
            return graph_iteration.dataset_iterator(self)
        from .iterator import OwnedIterator
        return OwnedIterator(self)

    def as_numpy_iterator(self):
        """An iterator of the elements as numpy values (0-d values as numpy scalars, strings as bytes)."""
        from . import graph_iteration
        if graph_iteration.tracing():
            raise RuntimeError("as_numpy_iterator() is only supported in eager mode.")
        from .iterator import NumpyIterator
        return NumpyIterator(self)

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements into a state: ``state = reduce_func(state, element)``."""
        from . import graph_iteration
        if graph_iteration.tracing():   # inside a tf.function: a graph loop over the elements at each call
            return graph_iteration.reduce_in_graph(self, initial_state, reduce_func)
        state = structure.normalize(initial_state, lists_are_tuples=True)
        for element in self._iterate():
            new_state = reduce_func(structure.to_user(state), structure.to_user(element))
            new_state = structure.normalize(new_state, lists_are_tuples=True)
            _check_same_state(state, new_state)
            state = new_state
        return structure.to_user(state)

    def apply(self, transformation_func):
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(dataset)}.")
        return dataset

    # -- options ---------------------------------------------------------------
    def options(self):
        from .options import Options, merge
        merged = Options()
        for source in self._inputs:
            merged = merge(merged, source.options())
        return merged

    def with_options(self, options, name=None):
        from .options import OptionsDataset
        return OptionsDataset(self, options)

    # -- sources ---------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        from .ragged_slices import RaggedSliceDataset, holds_ragged
        if holds_ragged(tensors):       # RaggedTensors among the tensors: their rows
            return RaggedSliceDataset(tensors)
        from .sources import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        from .sources import TensorDataset
        return TensorDataset(tensors)

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        from .sources import RangeDataset
        return RangeDataset(args, output_type)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        from .sources import GeneratorDataset
        return GeneratorDataset(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def counter(start=0, step=1, dtype=dtypes.int64, name=None):
        from .sampling import CounterDataset
        return CounterDataset(start, step, dtype)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        from .sampling import SampleFromDatasets
        return SampleFromDatasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        from .sampling import ChooseFromDatasets
        return ChooseFromDatasets(datasets, choice_dataset, stop_on_empty_dataset)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):
        from .sampling import RejectionResample
        return RejectionResample(self, class_func, target_dist, initial_dist, seed)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        from .ordering import ZipDataset
        if datasets is not None and args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if datasets is None:
            if not args:
                raise TypeError("Must pass at least one dataset to `zip`.")
            datasets = args[0] if len(args) == 1 else args
        return ZipDataset(datasets)

    # -- ordering ----------------------------------------------------------------
    def concatenate(self, dataset, name=None):
        from .ordering import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    def enumerate(self, start=0, name=None):
        from .ordering import ZipDataset
        from .sources import RangeDataset
        start = as_int(start, "start")
        return ZipDataset((RangeDataset((start, np.iinfo(np.int64).max), dtypes.int64), self))

    def repeat(self, count=None, name=None):
        from .ordering import RepeatDataset
        return RepeatDataset(self, -1 if count is None else as_int(count, "count"))

    def take(self, count, name=None):
        from .ordering import TakeDataset
        return TakeDataset(self, as_int(count, "count"))

    def skip(self, count, name=None):
        from .ordering import SkipDataset
        return SkipDataset(self, as_int(count, "count"))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        from .shuffle import ShuffleDataset
        return ShuffleDataset(self, as_int(buffer_size, "buffer_size"), seed, reshuffle_each_iteration)

    # -- batching ----------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        from .batching import BatchDataset
        return BatchDataset(self, as_int(batch_size, "batch_size"), bool(drop_remainder))

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64, name=None):
        from .ragged_slices import RaggedBatchDataset
        return RaggedBatchDataset(self, as_int(batch_size, "batch_size"), bool(drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        from .batching import PaddedBatchDataset
        return PaddedBatchDataset(self, as_int(batch_size, "batch_size"), padded_shapes, padding_values,
                                  bool(drop_remainder))

    def unbatch(self, name=None):
        from .batching import UnbatchDataset
        return UnbatchDataset(self)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        from .batching import RebatchDataset
        return RebatchDataset(self, batch_size, bool(drop_remainder))

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        from .batching import WindowDataset
        size = as_int(size, "size")
        shift = size if shift is None else as_int(shift, "shift")
        return WindowDataset(self, size, shift, as_int(stride, "stride"), bool(drop_remainder))

    # -- user functions --------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, synchronous=None,
            use_unbounded_threadpool=False, name=None):
        from .functions import MapDataset
        if num_parallel_calls is not None:
            num_parallel_calls = as_int(num_parallel_calls, "num_parallel_calls")
        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate, name=None):
        from .functions import FilterDataset
        return FilterDataset(self, predicate)

    def flat_map(self, map_func, name=None):
        from .functions import FlatMapDataset
        return FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        from .functions import InterleaveDataset
        cycle_length = AUTOTUNE if cycle_length is None else as_int(cycle_length, "cycle_length")
        block_length = 1 if block_length is None else as_int(block_length, "block_length")
        return InterleaveDataset(self, map_func, cycle_length, block_length, num_parallel_calls is not None)

    # -- performance ---------------------------------------------------------------------
    def prefetch(self, buffer_size, name=None):
        from .threads import PrefetchDataset
        return PrefetchDataset(self, as_int(buffer_size, "buffer_size"))

    def cache(self, filename="", name=None):
        from .cache import FileCacheDataset, MemoryCacheDataset
        if isinstance(filename, Tensor):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode("utf-8")
        return MemoryCacheDataset(self) if not filename else FileCacheDataset(self, str(filename))


def _check_same_state(old, new):
    old_spec, new_spec = structure.spec_of(old), structure.spec_of(new)
    try:
        structure.most_specific_compatible(old_spec, new_spec, "reduce states")
    except TypeError:
        raise TypeError(f"The element types for the new state must match the initial state. Expected "
                        f"{old_spec}; got {new_spec}.") from None
