"""SparseTensors as leaves of dataset elements, as TensorFlow allows them.

Inside a pipeline a sparse leaf is a SparseTensor whose indices, values and dense shape hold numpy arrays.
Slicing gives its rows (one rank less), batching stacks rows into one SparseTensor whose dense shape is the
batch size followed by the largest of each dimension, unbatching undoes it; ``as_numpy_iterator`` gives the
dense array (TensorFlow 2.21 does the same).
"""
import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.tensor_shape import TensorShape
from ..sparse.sparse_tensor import SparseTensor, SparseTensorSpec


def is_sparse(value):
    return isinstance(value, SparseTensor)


def _parts(st):
    return st.indices.numpy(), st.values.numpy(), st.dense_shape.numpy()


def _sparse(indices, values, dense_shape):
    return SparseTensor(np.asarray(indices, np.int64).reshape(-1, len(dense_shape)), values,
                        np.asarray(dense_shape, np.int64))


def spec(st):
    return SparseTensorSpec(st.shape, st.dtype)


def rows(st):
    """The SparseTensors of ``st[i]`` for every i along the first dimension."""
    indices, values, shape = _parts(st)
    if len(shape) == 0:
        raise ValueError("Unbatching a tensor is only supported for rank >= 1, got a scalar SparseTensor")
    order = np.argsort(indices[:, 0], kind="stable")
    indices, values = indices[order], values[order]
    starts = np.searchsorted(indices[:, 0], np.arange(shape[0] + 1))
    return [_sparse(indices[a:b, 1:], values[a:b], shape[1:]) for a, b in zip(starts[:-1], starts[1:])]


def stack(leaves, component):
    """One SparseTensor of the leaves as rows: dense shape [n] + the largest of each dimension."""
    ranks = {len(leaf.dense_shape.numpy()) for leaf in leaves}
    if len(ranks) > 1:
        raise InvalidArgumentError(f"Cannot batch SparseTensors of different ranks in component {component}: "
                                   f"{sorted(ranks)}")
    parts = [_parts(leaf) for leaf in leaves]
    shape = [len(leaves)] + np.max([p[2] for p in parts], axis=0).tolist()
    indices = np.concatenate([np.concatenate([np.full((len(p[0]), 1), i, np.int64), p[0]], axis=1)
                              for i, p in enumerate(parts)])
    return _sparse(indices, np.concatenate([p[1] for p in parts]), shape)


def dense(st):
    indices, values, shape = _parts(st)
    out = np.zeros(tuple(shape), values.dtype)
    out[tuple(indices.T)] = values
    return out


def batched_spec(s, batch_dim):
    return SparseTensorSpec(TensorShape([batch_dim]).concatenate(s.shape), s.dtype)


def unbatched_spec(s):
    if s.shape.rank == 0:
        raise ValueError("Cannot unbatch an input with scalar components.")
    return SparseTensorSpec(TensorShape(None) if s.shape.rank is None else s.shape[1:], s.dtype)


def relaxed_spec(a, b, relaxed_shape):
    return SparseTensorSpec(relaxed_shape(a.shape, b.shape), a.dtype)


def placeholder(s, fill):
    """An empty SparseTensor of ``s`` (unknown dimensions of size ``fill``), for probing a function."""
    shape = [fill] if s.shape.rank is None else [fill if d is None else d for d in s.shape.dims]
    return _sparse(np.zeros((0, len(shape)), np.int64), np.zeros(0, s.dtype._np), shape)
