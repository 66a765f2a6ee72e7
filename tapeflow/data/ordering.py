"""Transformations of order and length: zip, concatenate, repeat, take, skip."""
import itertools

from ..framework import nest
from . import structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .index_plan import IndexPlan, skip_chunks, take_chunks


class ZipDataset(Dataset):
    """Elements of several datasets side by side, in their (nested) structure; ends with the shortest."""
    _tf_name = "_ZipDataset"

    def __init__(self, datasets):
        flat = nest.flatten(datasets)
        for d in flat + ([datasets] if _contains_list(datasets) else []):
            if not isinstance(d, Dataset):
                raise TypeError(f"Invalid input to `zip`. Inputs are expected to be (nested) structures of "
                                f"`tf.data.Dataset` objects. Python `list` is not supported and you should use "
                                f"`tuple` instead. Got {type(d).__name__}.")
        self._structure = datasets
        self._inputs = tuple(flat)

    def _compute_spec(self):
        return nest.map_structure(lambda d: d.element_spec, self._structure)

    def _compute_cardinality(self):
        result = INFINITE_CARDINALITY
        for d in self._inputs:
            n = d._cardinality()
            if n == UNKNOWN_CARDINALITY:
                return UNKNOWN_CARDINALITY
            if n != INFINITE_CARDINALITY:
                result = n if result == INFINITE_CARDINALITY else min(result, n)
        return result

    def _iterate(self):
        iterators = [d._iterate() for d in self._inputs]
        for elements in zip(*iterators):
            yield nest.pack_sequence_as(self._structure, list(elements))


def _contains_list(structure):
    if isinstance(structure, list):
        return True
    if isinstance(structure, dict):
        return any(_contains_list(v) for v in structure.values())
    return isinstance(structure, tuple) and any(_contains_list(v) for v in structure)


class ConcatenateDataset(Dataset):
    _tf_name = "_ConcatenateDataset"

    def __init__(self, first, second):
        if not isinstance(second, Dataset):
            raise TypeError(f"`dataset` must be a `tf.data.Dataset`, got {type(second).__name__}.")
        self._inputs = (first, second)
        self._spec = structure.most_specific_compatible(first.element_spec, second.element_spec)

    def _compute_spec(self):
        return self._spec

    def _compute_cardinality(self):
        a, b = (d._cardinality() for d in self._inputs)
        if UNKNOWN_CARDINALITY in (a, b):
            return UNKNOWN_CARDINALITY
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        return a + b

    def _iterate(self):
        first, second = self._inputs
        yield from first._iterate()
        yield from second._iterate()


class RepeatDataset(Dataset):
    """``count`` passes over the input (forever when count is -1); each pass is a new iteration of it."""
    _tf_name = "_RepeatDataset"

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._count = count

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        n = self._input._cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count < 0 or n == INFINITE_CARDINALITY:
            return INFINITE_CARDINALITY
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return n * self._count

    def _passes(self):
        return itertools.count() if self._count < 0 else range(self._count)

    def _iterate(self):
        for _ in self._passes():
            empty = True
            for element in self._input._iterate():
                empty = False
                yield element
            if empty:      # an empty input repeated forever is still empty
                return

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None

        def chunks():
            for _ in self._passes():
                empty = True
                for chunk in plan.chunks():
                    empty = empty and not len(chunk)
                    yield chunk
                if empty:
                    return
        return IndexPlan(plan.gather, chunks)


class TakeDataset(Dataset):
    _tf_name = "_TakeDataset"

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._count = count

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return min(n, self._count)

    def _iterate(self):
        if self._count < 0:
            return self._input._iterate()
        if self._count == 0:
            return iter(())
        return itertools.islice(self._input._iterate(), self._count)

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        return IndexPlan(plan.gather, lambda: take_chunks(plan.chunks(), self._count))


class SkipDataset(Dataset):
    _tf_name = "_SkipDataset"

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._count = count

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        if self._count < 0:
            return 0
        return max(0, n - self._count)

    def _iterate(self):
        elements = self._input._iterate()
        if self._count < 0:
            for _ in elements:
                pass
            return
        for _ in range(self._count):
            if next(elements, _END) is _END:
                return
        yield from elements

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        return IndexPlan(plan.gather, lambda: skip_chunks(plan.chunks(), self._count))


_END = object()
