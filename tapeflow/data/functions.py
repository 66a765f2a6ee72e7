"""Transformations that run a user function: map, filter, flat_map, interleave.

The function runs eagerly, once per element, on Tensors (a plain tuple
element is unpacked into arguments, as in TensorFlow). TensorFlow instead
traces the function once into a graph, so its Python side effects (print,
appending to a list) happen once at trace time; here they happen per element.

The element spec of a function's output is found as TensorFlow's trace finds
it, by calling the function on placeholder values of the input spec: twice,
with unknown dimensions and values 1 and then 2, so that a dimension that
depends on the input becomes None. Only when the function fails on
placeholders is the spec observed from the first real element instead.
"""
import os
import warnings

import numpy as np

from ..framework import nest, recording
from . import structure
from .dataset import AUTOTUNE, UNKNOWN_CARDINALITY, Dataset


def _placeholders(spec, fill):
    def leaf(s):
        if isinstance(s, structure.DatasetSpec):
            from .batching import ListDataset
            return ListDataset([], s.element_spec)
        return structure.placeholder_leaf(s, fill)
    return nest.map_structure(leaf, spec)


def probe_spec(apply, input_dataset, spec_of=structure.spec_of):
    """The spec of ``apply(element)`` over the input's elements (see the module docstring). The probe runs
    eagerly and unrecorded, even when the dataset is made inside a tf.function being traced."""
    with recording.init_scope():
        return _probe_spec(apply, input_dataset, spec_of)


def _probe_spec(apply, input_dataset, spec_of):
    input_spec = input_dataset.element_spec
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            specs = [spec_of(apply(_placeholders(input_spec, fill))) for fill in (1, 2)]
        return structure.most_specific_compatible(*specs, what="function outputs")
    except Exception as probe_error:
        first = next(iter(input_dataset._iterate()), None)
        if first is None:
            raise ValueError("Cannot infer the element_spec of the function's outputs: the function fails on "
                             "placeholder values and the input dataset is empty.") from probe_error
        return spec_of(apply(first))


class MapDataset(Dataset):
    _runs_python = True

    def _spec_runs_user_code(self):
        return True

    def __init__(self, input_dataset, map_func, num_parallel_calls):
        if not callable(map_func):
            raise TypeError(f"`map_func` must be callable, got {map_func!r}")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._func = map_func
        self._parallel = num_parallel_calls
        self._tf_name = "_MapDataset" if num_parallel_calls is None else "_ParallelMapDataset"

    def _apply(self, element):
        return structure.normalize(structure.call_with_element(self._func, element), lists_are_tuples=True)

    def _compute_spec(self):
        return probe_spec(self._apply, self._input)

    def _compute_cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        workers = self._parallel
        if workers == AUTOTUNE:
            workers = os.cpu_count() or 1
        if workers is not None and workers > 1:
            from .threads import parallel_map
            return parallel_map(self._apply, self._input._iterate(), workers)
        return map(self._apply, self._input._iterate())


def _predicate_value(result):
    value = structure.normalize(result)
    if not isinstance(value, np.ndarray) or value.ndim != 0 or value.dtype != np.bool_:
        spec = structure.spec_of(value) if isinstance(value, np.ndarray) else type(result).__name__
        raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return "
                         f"type is {spec}.")
    return bool(value)


class FilterDataset(Dataset):
    _tf_name = "_FilterDataset"
    _runs_python = True

    def __init__(self, input_dataset, predicate):
        if not callable(predicate):
            raise TypeError(f"`predicate` must be callable, got {predicate!r}")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._predicate = predicate

    def _compute_spec(self):
        return self._input.element_spec

    def _iterate(self):
        predicate = self._predicate
        return (e for e in self._input._iterate()
                if _predicate_value(structure.call_with_element(predicate, e)))


def _dataset_result(func, element):
    result = structure.call_with_element(func, element)
    if not isinstance(result, Dataset):
        raise TypeError(f"The `map_func` argument must return a `Dataset` object. Got {type(result)!r}.")
    return result


def _dataset_spec(dataset):
    return dataset.element_spec


class FlatMapDataset(Dataset):
    """The elements of the datasets ``map_func`` returns, one dataset after the other."""
    _tf_name = "_FlatMapDataset"
    _runs_python = True

    def _spec_runs_user_code(self):
        return True

    def __init__(self, input_dataset, map_func):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._func = map_func

    def _compute_spec(self):
        return probe_spec(lambda e: _dataset_result(self._func, e), self._input, _dataset_spec)

    def _compute_cardinality(self):
        return 0 if self._input._cardinality() == 0 else UNKNOWN_CARDINALITY

    def _iterate(self):
        for element in self._input._iterate():
            yield from _dataset_result(self._func, element)._iterate()


class InterleaveDataset(Dataset):
    """``cycle_length`` of the returned datasets at a time, ``block_length`` elements from each in turn.

    A dataset that runs out ends its turn; at its next turn its slot takes the
    dataset of the next input element. ``cycle_length`` defaults (AUTOTUNE) to
    the number of CPU cores, as TensorFlow does, so the order then depends on
    the machine.
    """
    _runs_python = True

    def _spec_runs_user_code(self):
        return True

    def __init__(self, input_dataset, map_func, cycle_length, block_length, parallel):
        from ..framework.errors import InvalidArgumentError
        if cycle_length != AUTOTUNE and cycle_length <= 0:
            raise InvalidArgumentError("cycle_length must be greater than zero.")
        if block_length <= 0:
            raise InvalidArgumentError("block_length must be greater than zero.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._func = map_func
        self._cycle_length = (os.cpu_count() or 1) if cycle_length == AUTOTUNE else cycle_length
        self._block_length = block_length
        self._tf_name = "_ParallelInterleaveDataset" if parallel else "_InterleaveDataset"

    def _compute_spec(self):
        return probe_spec(lambda e: _dataset_result(self._func, e), self._input, _dataset_spec)

    def _compute_cardinality(self):
        return 0 if self._input._cardinality() == 0 else UNKNOWN_CARDINALITY

    def _iterate(self):
        inputs = self._input._iterate()
        slots = [None] * self._cycle_length
        input_done = False
        end = object()
        while True:
            active = False
            for i in range(self._cycle_length):
                if slots[i] is None and not input_done:
                    element = next(inputs, end)
                    if element is end:
                        input_done = True
                    else:
                        slots[i] = _dataset_result(self._func, element)._iterate()
                if slots[i] is None:
                    continue
                active = True
                for _ in range(self._block_length):
                    value = next(slots[i], end)
                    if value is end:
                        slots[i] = None
                        break
                    yield value
            if not active and input_done:
                return

