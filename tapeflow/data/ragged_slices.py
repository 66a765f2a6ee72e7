"""Datasets whose elements involve RaggedTensors: the rows of a RaggedTensor (``from_tensor_slices``), their
batches, and ``ragged_batch`` of dense elements of different lengths."""
import numpy as np

from ..framework import dtypes, nest
from ..framework.tensor_spec import TensorSpec
from .dataset import Dataset


def _is_ragged(value):
    return hasattr(value, "nested_row_splits")


def holds_ragged(tensors):
    """Whether a RaggedTensor is among the tensors (a list is one tensor, as in from_tensor_slices)."""
    if isinstance(tensors, dict):
        return any(holds_ragged(v) for v in tensors.values())
    if isinstance(tensors, tuple):
        return any(holds_ragged(v) for v in tensors)
    return _is_ragged(tensors)


class RaggedSliceDataset(Dataset):
    """The rows of a structure of tensors of which some are RaggedTensors. A row of a ragged leaf is an
    ndarray when it is dense (ragged rank 1), else a RaggedTensor; dense leaves give ndarray rows.

    A batch of such rows is again a ragged structure (``batch``), so each leaf is stored with its kind:
    'ragged' (rows are ragged rows), 'dense' (rows of a dense tensor) or 'dense batches' (a RaggedTensor
    whose rows are batches of a dense leaf)."""
    _tf_name = "_TensorSliceDataset"

    def __init__(self, tensors, kinds=None):
        from ..ops.common import to_tensor
        leaves = nest.flatten(tensors)
        if kinds is None:
            kinds = ["ragged" if _is_ragged(leaf) else "dense" for leaf in leaves]
            leaves = [leaf if _is_ragged(leaf) else to_tensor(leaf) for leaf in leaves]
        sizes = {_nrows(leaf) for leaf in leaves}
        if len(sizes) > 1:
            raise ValueError(f"Dimension 0 in all tensors must be equal, got sizes {sorted(sizes)}")
        self._skeleton = tensors
        self._leaves = leaves
        self._kinds = kinds
        self._size = sizes.pop()

    def _compute_spec(self):
        from ..ragged.ragged_tensor_spec import RaggedTensorSpec
        specs = []
        for leaf, kind in zip(self._leaves, self._kinds):
            if kind == "dense":
                specs.append(TensorSpec(leaf.shape[1:], leaf.dtype))
            elif kind == "dense batches":
                specs.append(TensorSpec([None] + list(leaf.shape[2:]), leaf.dtype))
            else:
                specs.append(RaggedTensorSpec(leaf.shape[1:], leaf.dtype, leaf.ragged_rank - 1))
        return nest.pack_sequence_as(self._skeleton, specs)

    def _compute_cardinality(self):
        return self._size

    def _iterate(self):
        for i in range(self._size):
            yield nest.pack_sequence_as(self._skeleton, [_row(leaf, kind, i)
                                                         for leaf, kind in zip(self._leaves, self._kinds)])

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Batches of rows are RaggedTensors: the same rows under one more row partition."""
        from ..ragged.ragged_tensor import RaggedTensor
        from .dataset import as_int
        size = as_int(batch_size, "batch_size")
        if size <= 0:
            raise ValueError(f"batch_size must be positive, got {size}")
        kept = self._size - self._size % size if drop_remainder else self._size
        splits = np.unique(np.concatenate([np.arange(0, kept, size), [kept]])).astype(np.int64)
        leaves = [RaggedTensor.from_row_splits(leaf[:kept], splits) for leaf in self._leaves]
        kinds = ["dense batches" if kind == "dense" else "ragged" for kind in self._kinds]
        batched = RaggedSliceDataset(self._skeleton, kinds)
        batched._leaves = leaves
        batched._size = len(splits) - 1
        batched._unbatched = self
        return batched

    def unbatch(self, name=None):
        original = self.__dict__.get("_unbatched")
        return original if original is not None else super().unbatch(name)


def _nrows(leaf):
    return leaf.nrows_static() if _is_ragged(leaf) else leaf._value.shape[0]


def _row(leaf, kind, i):
    if kind == "dense":
        return np.asarray(leaf._value[i])
    row = leaf[i]
    return row if _is_ragged(row) else np.asarray(row._value)


class RaggedBatchDataset(Dataset):
    """``ragged_batch``: batches of dense elements; elements of rank >= 1 may differ in length and batch
    into a RaggedTensor, scalars into a dense vector."""
    _tf_name = "_RaggedBatchDataset"

    def __init__(self, dataset, batch_size, drop_remainder):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec):
            raise NotImplementedError("tapeflow: ragged_batch batches datasets whose elements are single tensors")
        if spec.shape.rank is None or spec.shape.rank > 1:
            raise NotImplementedError(f"tapeflow: ragged_batch batches scalars and vectors, got elements of shape "
                                      f"{spec.shape}")
        self._inputs = (dataset,)
        self._size = batch_size
        self._drop = drop_remainder

    def _compute_spec(self):
        spec = self._inputs[0].element_spec
        outer = self._size if self._drop else None
        if spec.shape.rank == 0:
            return TensorSpec([outer], spec.dtype)
        from ..ragged.ragged_tensor_spec import RaggedTensorSpec
        return RaggedTensorSpec([outer, None], spec.dtype, 1)

    def _compute_cardinality(self):
        n = self._inputs[0]._cardinality()
        if n < 0:       # infinite or unknown stays so
            return n
        return n // self._size if self._drop else -(-n // self._size)

    def _iterate(self):
        group = []
        for element in self._inputs[0]._iterate():
            group.append(element)
            if len(group) == self._size:
                yield self._batch(group)
                group = []
        if group and not self._drop:
            yield self._batch(group)

    def _batch(self, group):
        if group[0].ndim == 0:
            return np.stack(group)
        from ..framework.conversion import constant
        from ..ragged.ragged_tensor import RaggedTensor
        dtype = dtypes.as_dtype(group[0].dtype)
        return RaggedTensor.from_row_lengths(constant(np.concatenate(group), dtype=dtype), [len(g) for g in group])



