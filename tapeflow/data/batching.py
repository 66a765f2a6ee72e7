"""Batching: batch, padded_batch, unbatch, rebatch, window."""
import itertools

import numpy as np

from ..framework import dtypes, nest
from ..framework.errors import InvalidArgumentError
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_spec import TensorSpec
from . import sparse_leaves, structure
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .index_plan import batch_indices

USE_INDEX_PLANS = True   # tests switch it off to compare the fast path with the element-wise semantics


def _check_batch_size(batch_size):
    if batch_size <= 0:
        raise InvalidArgumentError("Batch size must be greater than zero.")


def _batched_cardinality(n, batch_size, drop_remainder):
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


def _stack_component(values, index):
    first = values[0]
    if sparse_leaves.is_sparse(first):
        return sparse_leaves.stack(values, index)
    for i, v in enumerate(values):
        if v.shape != first.shape:
            raise InvalidArgumentError(f"Cannot batch tensors with different shapes in component {index}. First "
                                       f"element had shape {_shape_text(first.shape)} and element {i} had shape "
                                       f"{_shape_text(v.shape)}.")
    return np.stack(values)


def _shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def stack_elements(elements):
    skeleton = elements[0]
    columns = zip(*[structure.leaves(e) for e in elements])
    return structure.pack(skeleton, [_stack_component(list(c), i) for i, c in enumerate(columns)])


def _groups(elements, batch_size, drop_remainder):
    while True:
        group = list(itertools.islice(elements, batch_size))
        if not group or (drop_remainder and len(group) < batch_size):
            return
        yield group


class BatchDataset(Dataset):
    _tf_name = "_BatchDataset"

    def __init__(self, input_dataset, batch_size, drop_remainder):
        _check_batch_size(batch_size)
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder

    def _compute_spec(self):
        return structure.batched_spec(self._input.element_spec, self._batch_size if self._drop_remainder else None)

    def _compute_cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._batch_size, self._drop_remainder)

    def _iterate(self):
        plan = self._input._index_plan() if USE_INDEX_PLANS else None
        if plan is not None:
            return map(plan.gather, batch_indices(plan.chunks(), self._batch_size, self._drop_remainder))
        return map(stack_elements, _groups(self._input._iterate(), self._batch_size, self._drop_remainder))


class PaddedBatchDataset(Dataset):
    """Batches whose components are padded to ``padded_shapes`` (None dimensions: the batch's largest)."""
    _tf_name = "_PaddedBatchDataset"

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        _check_batch_size(batch_size)
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder
        spec = input_dataset.element_spec
        flat_specs = nest.flatten(spec)
        if padded_shapes is None:
            for s in flat_specs:
                if s.shape.rank is None:
                    raise ValueError("You must provide `padded_shapes` argument because component has unknown "
                                     "rank.")
            shapes = [s.shape for s in flat_specs]
        else:
            shapes = _broadcast_up_to(spec, padded_shapes, "padded_shapes")
            shapes = [_as_shape(s) for s in shapes]
            for s, padded in zip(flat_specs, shapes):
                if not _padded_shape_fits(padded, s.shape):
                    raise ValueError(f"The padded shape {padded} is not compatible with the shape {s.shape} of the "
                                     f"corresponding input component.")
        if padding_values is None:
            values = [None] * len(flat_specs)
        else:
            values = _broadcast_up_to(spec, padding_values, "padding_values")
        self._padded_shapes = shapes
        self._padding_values = [_padding_value(v, s.dtype) for v, s in zip(values, flat_specs)]

    def _compute_spec(self):
        batch = self._batch_size if self._drop_remainder else None
        flat = [TensorSpec(TensorShape([batch]).concatenate(shape), s.dtype)
                for shape, s in zip(self._padded_shapes, nest.flatten(self._input.element_spec))]
        return nest.pack_sequence_as(self._input.element_spec, flat)

    def _compute_cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._batch_size, self._drop_remainder)

    def _iterate(self):
        for group in _groups(self._input._iterate(), self._batch_size, self._drop_remainder):
            columns = zip(*[structure.leaves(e) for e in group])
            padded = [self._pad_component(list(c), shape, value, i)
                      for i, (c, shape, value) in enumerate(zip(columns, self._padded_shapes, self._padding_values))]
            yield structure.pack(group[0], padded)

    def _pad_component(self, values, padded_shape, padding_value, index):
        rank = values[0].ndim
        for v in values:
            if v.ndim != rank:
                raise InvalidArgumentError(f"All elements in a batch must have the same rank as the padded shape "
                                           f"for component{index}: expected rank {rank} but got element with rank "
                                           f"{v.ndim}")
        if padded_shape.rank is not None and padded_shape.rank != rank:
            raise InvalidArgumentError(f"All elements in a batch must have the same rank as the padded shape for "
                                       f"component{index}: expected rank {padded_shape.rank} but got element with "
                                       f"rank {rank}")
        largest = [max(v.shape[d] for v in values) for d in range(rank)]
        target = largest if padded_shape.rank is None else [
            largest[d] if padded_shape[d] is None else padded_shape[d] for d in range(rank)]
        for v in values:
            for d in range(rank):
                if v.shape[d] > target[d]:
                    raise InvalidArgumentError(f"Attempted to pad to a smaller size than the input element. Component "
                                               f"{index}: padded shape {_shape_text(target)}, element shape "
                                               f"{_shape_text(v.shape)}.")
        out = np.full([len(values)] + target, padding_value, dtype=values[0].dtype)
        for i, v in enumerate(values):
            out[(i,) + tuple(slice(0, n) for n in v.shape)] = v
        return out


def _padded_shape_fits(padded, shape):
    """Same rank, and no known padded dimension smaller than the component's."""
    if padded.rank is None or shape.rank is None:
        return True
    return padded.rank == shape.rank and all(p is None or d is None or p >= d for p, d in zip(padded, shape))


def _as_shape(value):
    """A padded shape: a TensorShape, an int (rank 1), or a list of dimensions (None or -1: the batch's largest)."""
    if isinstance(value, TensorShape):
        return value
    if hasattr(value, "_value"):
        value = value._value.tolist()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    if value is None:
        return TensorShape(None)
    if isinstance(value, (int, np.integer)):
        value = [value]
    return TensorShape([None if d is None or int(d) == -1 else int(d) for d in value])


def _is_shape_leaf(value):
    """In padded_shapes a list/tuple of dimensions is one shape, not a structure."""
    return not isinstance(value, dict) and (not isinstance(value, (list, tuple)) or all(
        d is None or isinstance(d, (int, np.integer)) for d in value))


def _broadcast_up_to(spec, value, name):
    """``value`` given per component of ``spec`` (or one value for all components): one entry per leaf."""
    flat_specs = nest.flatten(spec)
    if name == "padded_shapes":
        if not nest.is_nested(spec):
            return [value]
        flat = _flatten_up_to(spec, value, _is_shape_leaf, name)
    else:
        if not nest.is_nested(value):
            return [value] * len(flat_specs)
        flat = _flatten_up_to(spec, value, lambda v: not nest.is_nested(v), name)
    return flat


def _flatten_up_to(spec, value, is_leaf, name):
    if not nest.is_nested(spec):
        return [value]
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise ValueError(f"`{name}` {value} does not match the structure of the dataset elements {spec}.")
        return [v for k in sorted(spec, key=str) for v in _flatten_up_to(spec[k], value[k], is_leaf, name)]
    if is_leaf(value) and name != "padded_shapes" or not isinstance(value, (list, tuple)) or len(value) != len(spec):
        raise ValueError(f"`{name}` {value} does not match the structure of the dataset elements {spec}.")
    return [v for s, x in zip(spec, value) for v in _flatten_up_to(s, x, is_leaf, name)]


def _padding_value(value, dtype):
    if value is None:
        return b"" if dtype == dtypes.string else dtype._np.type(0)
    array = structure.normalize(value)
    if array.ndim != 0:
        raise ValueError(f"Padding value must be a scalar, got shape {array.shape}.")
    if dtype == dtypes.string:
        if array.dtype.kind != "O":
            raise TypeError(f"Padding value {value!r} does not match the string component.")
        return array[()]
    if array.dtype.kind in "O":
        raise TypeError(f"Padding value {value!r} has the wrong dtype for a {dtype.name} component.")
    return array.astype(dtype._np)[()]


class UnbatchDataset(Dataset):
    """The rows of each element's components, one element per row."""
    _tf_name = "_UnbatchDataset"

    def __init__(self, input_dataset):
        self._input = input_dataset
        self._inputs = (input_dataset,)
        if not input_dataset._spec_runs_user_code():   # else checked per element, no function runs here
            structure.unbatched_spec(input_dataset.element_spec)

    def _compute_spec(self):
        return structure.unbatched_spec(self._input.element_spec)

    def _compute_cardinality(self):
        """Known when the batch dimension is static in every component; unknown when only a
        function's output would tell (TensorFlow knows it from the trace)."""
        n = self._input._cardinality()
        if n == INFINITE_CARDINALITY or n == UNKNOWN_CARDINALITY or self._input._spec_runs_user_code():
            return n if n < 0 else UNKNOWN_CARDINALITY
        sizes = {s.shape[0] if s.shape.rank else None for s in nest.flatten(self._input.element_spec)}
        if len(sizes) == 1 and None not in sizes:
            return n * sizes.pop()
        return UNKNOWN_CARDINALITY

    def _iterate(self):
        for element in self._input._iterate():
            flat = [sparse_leaves.rows(a) if sparse_leaves.is_sparse(a) else a for a in structure.leaves(element)]
            if any(not isinstance(a, list) and a.ndim == 0 for a in flat):
                raise ValueError("Cannot unbatch an input with scalar components.")
            sizes = [len(a) for a in flat]
            for i, size in enumerate(sizes):
                if size != sizes[0]:
                    raise InvalidArgumentError(f"Input element must have the same batch size in each component. "
                                               f"Component 0 had size {sizes[0]} but component {i} had size {size}.")
            for i in range(sizes[0] if sizes else 0):
                yield structure.pack(element, [a[i] if isinstance(a, list) else structure.row(a, i) for a in flat])


class RebatchDataset(Dataset):
    """The rows of the input's batches, regrouped into batches of ``batch_size`` (a list: sizes in turn)."""
    _tf_name = "_RebatchDataset"

    def __init__(self, input_dataset, batch_size, drop_remainder):
        if hasattr(batch_size, "_value"):
            batch_size = batch_size._value
        values = np.ravel(np.asarray(batch_size))
        if values.dtype.kind not in "iu":
            raise TypeError(f"`batch_size` must be an integer or a list of integers, got {batch_size!r}")
        sizes = [int(s) for s in values]
        if not sizes or any(s <= 0 for s in sizes):
            raise InvalidArgumentError(f"batch_size must be positive, got {batch_size}.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._sizes = sizes
        self._drop_remainder = drop_remainder
        self._rows = UnbatchDataset(input_dataset)

    def _compute_spec(self):
        fixed = self._sizes[0] if self._drop_remainder and len(set(self._sizes)) == 1 else None
        return structure.batched_spec(self._rows.element_spec, fixed)

    def _iterate(self):
        rows = self._rows._iterate()
        for size in itertools.cycle(self._sizes):
            group = list(itertools.islice(rows, size))
            if not group or (self._drop_remainder and len(group) < size):
                return
            yield stack_elements(group)


class WindowDataset(Dataset):
    """Windows of ``size`` elements every ``shift`` elements, ``stride`` apart; each window is a
    structure of datasets, one per component."""
    _tf_name = "_WindowDataset"

    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        for name, value in (("size", size), ("shift", shift), ("stride", stride)):
            if value <= 0:
                raise InvalidArgumentError(f"Window {name} must be greater than zero, but got {value}.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._size, self._shift, self._stride = size, shift, stride
        self._drop_remainder = drop_remainder

    def _compute_spec(self):
        return structure.map_specs(lambda s: structure.DatasetSpec(s), self._input.element_spec)

    def _compute_cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        span = self._stride * (self._size - 1) + 1
        if self._drop_remainder:
            return 0 if n < span else (n - span) // self._shift + 1
        return -(-n // self._shift)

    def _window(self, elements, skeleton):
        columns = list(zip(*[structure.leaves(e) for e in elements]))
        return structure.pack(skeleton, [ListDataset(list(c), self._component_spec(i)) for i, c in enumerate(columns)])

    def _component_spec(self, index):
        return lambda: nest.flatten(self._input.element_spec)[index]

    def _iterate(self):
        span = self._stride * (self._size - 1) + 1
        buffer, base, start, skeleton = [], 0, 0, None   # buffer[i] is input element base + i
        for index, element in enumerate(self._input._iterate()):
            skeleton = element
            buffer.append(element)
            while start + span - 1 <= index:
                yield self._window(buffer[start - base:start - base + span:self._stride], skeleton)
                start += self._shift
                drop = min(start - base, len(buffer))
                del buffer[:drop]
                base += drop
        if not self._drop_remainder:
            while start - base < len(buffer):
                yield self._window(buffer[start - base::self._stride][:self._size], skeleton)
                start += self._shift


class ListDataset(Dataset):
    """The elements of one window component."""
    _tf_name = "_VariantDataset"

    def __init__(self, elements, spec):
        self._elements = elements
        self._spec = spec   # a spec, or a function giving it (a window's spec is found only when asked for)

    def _compute_spec(self):
        return self._spec() if callable(self._spec) else self._spec

    def _compute_cardinality(self):
        return len(self._elements)

    def _iterate(self):
        return iter(self._elements)
