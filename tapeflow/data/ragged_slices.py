"""Datasets whose elements involve RaggedTensors: the rows of a RaggedTensor (``from_tensor_slices``), their
batches, and ``ragged_batch`` of dense elements of different lengths."""
import numpy as np

from ..framework import dtypes
from ..framework.tensor_spec import TensorSpec
from .dataset import Dataset


def _row_spec(rt):
    from ..ragged.ragged_tensor_spec import RaggedTensorSpec
    return RaggedTensorSpec(rt.shape[1:], rt.dtype, rt.ragged_rank - 1)


class RaggedSliceDataset(Dataset):
    """The rows of a RaggedTensor: ndarrays when a row is dense (ragged rank 1), else RaggedTensors."""
    _tf_name = "_TensorSliceDataset"

    def __init__(self, rt):
        self._rt = rt

    def _compute_spec(self):
        return _row_spec(self._rt)

    def _compute_cardinality(self):
        return self._rt.nrows_static()

    def _iterate(self):
        rt = self._rt
        for i in range(rt.nrows_static()):
            row = rt[i]
            yield np.asarray(row._value) if rt.ragged_rank == 1 else row

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Batches of rows are RaggedTensors: the same rows under one more row partition."""
        from ..ragged.ragged_tensor import RaggedTensor
        from .dataset import as_int
        size = as_int(batch_size, "batch_size")
        if size <= 0:
            raise ValueError(f"batch_size must be positive, got {size}")
        n = self._rt.nrows_static()
        kept = n - n % size if drop_remainder else n
        splits = np.unique(np.concatenate([np.arange(0, kept, size), [kept]])).astype(np.int64)
        return RaggedSliceDataset(RaggedTensor.from_row_splits(self._rt[:kept], splits))


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



