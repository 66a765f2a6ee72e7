"""Sources and mixtures drawn by number or at random: counter, sample_from_datasets,
choose_from_datasets, rejection_resample.

The random draws come from a PCG64 generator seeded as ``shuffle`` seeds its
own (shuffle.seed_material): the same seed gives the same sequence, though not
TensorFlow's sequence.
"""
import itertools

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.tensor_spec import TensorSpec
from . import structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, as_int
from .shuffle import IterationSeeds

_END = object()


class CounterDataset(Dataset):
    """``start, start + step, ...`` forever."""
    _tf_name = "_ScanDataset"   # TensorFlow builds counter as a scan

    def __init__(self, start, step, dtype):
        self._start, self._step = as_int(start, "start"), as_int(step, "step")
        self._dtype = dtypes.as_dtype(dtype)

    def _compute_spec(self):
        return TensorSpec((), self._dtype)

    def _compute_cardinality(self):
        return INFINITE_CARDINALITY

    def _iterate(self):
        dtype = self._dtype._np
        return (np.array(v, dtype=dtype) for v in itertools.count(self._start, self._step))


def _datasets_list(datasets):
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"Invalid `datasets`. `datasets` should be a list of `tf.data.Dataset` objects, "
                            f"got {type(d).__name__}.")
    return datasets


def _common_spec(datasets):
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        try:
            spec = structure.most_specific_compatible(spec, d.element_spec)
        except (TypeError, ValueError):
            raise TypeError(f"Invalid `datasets`. The elements of `datasets` should have compatible structure, "
                            f"got {datasets[0].element_spec} and {d.element_spec}.") from None
    return spec


class SampleFromDatasets(Dataset):
    """Each element from input ``i`` with probability ``weights[i]`` (over the inputs not yet exhausted)."""
    _tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration):
        self._inputs = tuple(_datasets_list(datasets))
        n = len(self._inputs)
        if weights is None:
            weights = np.full(n, 1.0 / n)
        else:
            if isinstance(weights, Dataset):
                raise NotImplementedError("`weights` given as a dataset is not supported; pass a list or tensor")
            weights = np.asarray(structure.normalize(weights), dtype=np.float64)
            if weights.shape != (n,):
                raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with "
                                 f"`[len(datasets)]` = [{n}], got {list(weights.shape)}.")
            if np.any(weights < 0) or not np.all(np.isfinite(weights)) or weights.sum() <= 0:
                raise InvalidArgumentError(f"`weights` must be finite, non-negative and not all zero, got "
                                           f"{weights.tolist()}")
        self._weights = weights
        self._stop_on_empty = bool(stop_on_empty_dataset)
        self._seeds = IterationSeeds(seed, rerandomize_each_iteration)
        self._spec = _common_spec(list(self._inputs))

    def _compute_spec(self):
        return self._spec

    def _compute_cardinality(self):
        cards = [d._cardinality() for d in self._inputs]
        if len(cards) == 1:
            return cards[0]
        live = [c for c, w in zip(cards, self._weights) if w > 0]
        if all(c == INFINITE_CARDINALITY for c in live):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY

    def _iterate(self):
        iterators = [d._iterate() for d in self._inputs]
        weights = self._weights.copy()
        generator = self._seeds.generator()
        while True:
            total = weights.sum()
            if total <= 0:
                return
            draw = generator.random() * total
            i = min(int(np.searchsorted(np.cumsum(weights), draw, side="right")), len(weights) - 1)
            while weights[i] == 0:    # rounding at the top edge: the last input with weight
                i -= 1
            element = next(iterators[i], _END)
            if element is _END:
                if self._stop_on_empty:
                    return
                weights[i] = 0.0
                continue
            yield element


class ChooseFromDatasets(Dataset):
    """Element ``k`` from ``datasets[choice_k]``, ``choice_k`` the k-th element of the choice dataset."""
    _tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset):
        datasets = _datasets_list(datasets)
        if not isinstance(choice_dataset, Dataset):
            raise TypeError(f"Invalid `choice_dataset`. `choice_dataset` should be a `tf.data.Dataset`, got "
                            f"{type(choice_dataset).__name__}.")
        spec = choice_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.int64 or spec.shape.rank not in (0, None):
            raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` "
                            f"tensors, got {spec}.")
        self._datasets = datasets
        self._choices = choice_dataset
        self._inputs = (choice_dataset, *datasets)
        self._stop_on_empty = bool(stop_on_empty_dataset)
        self._spec = _common_spec(datasets)

    def _compute_spec(self):
        return self._spec

    def _compute_cardinality(self):
        return UNKNOWN_CARDINALITY

    def _iterate(self):
        iterators = [d._iterate() for d in self._datasets]
        exhausted = [False] * len(iterators)
        for choice in self._choices._iterate():
            i = int(choice)
            if not 0 <= i < len(iterators):
                raise InvalidArgumentError(f"Selector index out of range: {i} >= {len(iterators)}")
            if exhausted[i]:
                continue
            element = next(iterators[i], _END)
            if element is _END:
                if self._stop_on_empty:
                    return
                exhausted[i] = True
                if all(exhausted):
                    return
                continue
            yield element


class RejectionResample(Dataset):
    """``(class, element)`` pairs with the classes resampled toward ``target_dist`` by rejection.

    An element of class ``c`` is kept with probability ``r_c / max(r)``, ``r = target / initial``; without
    ``initial_dist`` the class frequencies seen so far (counting the current element) stand for it.
    """
    _tf_name = "_MapDataset"
    _runs_python = True

    def __init__(self, input_dataset, class_func, target_dist, initial_dist, seed):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._class_func = class_func
        self._target = _distribution(target_dist, "target_dist")
        self._initial = None if initial_dist is None else _distribution(initial_dist, "initial_dist")
        if self._initial is not None and self._initial.shape != self._target.shape:
            raise ValueError("`initial_dist` and `target_dist` must have the same number of classes.")
        self._seeds = IterationSeeds(seed, True)

    def _spec_runs_user_code(self):
        return True

    def _class_of(self, element):
        value = structure.normalize(structure.call_with_element(self._class_func, element))
        if not isinstance(value, np.ndarray) or value.ndim != 0 or value.dtype.kind not in "iu":
            raise InvalidArgumentError(f"class_func must return a scalar integer tensor, got {value!r}")
        return value

    def _compute_spec(self):
        from .functions import probe_spec
        return (probe_spec(self._class_of, self._input), self._input.element_spec)

    def _iterate(self):
        generator = self._seeds.generator()
        counts = np.zeros(len(self._target))
        for element in self._input._iterate():
            class_value = self._class_of(element)
            label = int(class_value)
            if not 0 <= label < len(self._target):
                raise InvalidArgumentError(f"class_func returned {label}, outside [0, {len(self._target)})")
            counts[label] += 1
            initial = self._initial if self._initial is not None else counts / counts.sum()
            ratios = np.divide(self._target, initial, out=np.zeros_like(self._target), where=initial > 0)
            accept = ratios[label] / ratios.max()
            if generator.random() < accept:
                yield (class_value, element)


def _distribution(values, name):
    array = np.asarray(structure.normalize(values), dtype=np.float64)
    if array.ndim != 1 or np.any(array < 0) or not np.isclose(array.sum(), 1.0):
        raise ValueError(f"`{name}` must be a 1-D probability distribution, got {array.tolist()}")
    return array
