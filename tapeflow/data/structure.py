"""Elements and their specs.

Inside a pipeline an element is a nested structure (tuples, namedtuples,
dicts) whose leaves are numpy values (arrays or numpy scalars; strings are
object arrays of bytes) or datasets (the windows of ``window``). Users see
the same structure with tapeflow Tensors as leaves.
"""
import numpy as np

from ..framework import dtypes, nest
from ..framework.conversion import _wrap, convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_spec import TensorSpec
from . import sparse_leaves


def _is_dataset(value):
    from .dataset import Dataset
    return isinstance(value, Dataset)


def normalize(value, lists_are_tuples=False):
    """A user value as an element: leaves converted as ``tf.convert_to_tensor`` does.

    In ``from_tensors``/``from_tensor_slices`` a list is one tensor (as in
    TensorFlow); what a ``map`` function returns as a list becomes a tuple.
    """
    if isinstance(value, dict):
        return type(value)((k, normalize(v, lists_are_tuples)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [normalize(v, lists_are_tuples) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list) and lists_are_tuples:
        return tuple(normalize(v, lists_are_tuples) for v in value)
    if _is_dataset(value) or sparse_leaves.is_sparse(value):
        return value
    if value is None:
        raise TypeError("Unsupported element: None. A dataset element is a (nested) structure of tensors.")
    return np.asarray(convert_to_tensor(value)._value)


def row(array, index):
    """``array[index]`` as an ndarray (0-d for an item of a 1-D array, which numpy gives as a scalar)."""
    value = array[index]
    return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=array.dtype)


def leaves(element):
    return nest.flatten(element)


def pack(structure, flat):
    return nest.pack_sequence_as(structure, flat)


def packer(skeleton):
    """A function building ``skeleton``'s structure from a flat list of leaves (fast for flat tuples)."""
    if not nest.is_nested(skeleton):
        return lambda flat: flat[0]
    if type(skeleton) is tuple and not any(nest.is_nested(s) for s in skeleton):
        return tuple
    return lambda flat: nest.pack_sequence_as(skeleton, flat)


def map_leaves(fn, element):
    return nest.map_structure(fn, element)


def user_leaf(leaf):
    """The Tensor a user sees for an element leaf (an ndarray); datasets are passed as they are."""
    if isinstance(leaf, np.ndarray):
        return _wrap(leaf)
    return leaf


def to_user(element):
    kind = type(element)
    if kind is np.ndarray:
        return _wrap(element)
    if kind is tuple and all(type(e) is np.ndarray for e in element):
        return tuple([_wrap(e) for e in element])
    return nest.map_structure(user_leaf, element)


def numpy_leaf(leaf):
    """What ``as_numpy_iterator`` gives: a fresh array, or a numpy scalar (bytes for strings) when 0-d."""
    if isinstance(leaf, np.ndarray):
        return leaf[()] if leaf.ndim == 0 else leaf.copy()
    if sparse_leaves.is_sparse(leaf):
        return sparse_leaves.dense(leaf)
    raise TypeError(f"Dataset.as_numpy_iterator() is not supported for datasets that produce values of type "
                    f"{type(leaf).__name__}")


def to_numpy(element):
    return nest.map_structure(numpy_leaf, element)


def call_with_element(fn, element):
    """Calls a user function as tf.data does: a plain tuple element is unpacked into arguments."""
    if type(element) is tuple:
        return fn(*[to_user(e) for e in element])
    return fn(to_user(element))


# -- specs ---------------------------------------------------------------
class DatasetSpec:
    """The spec of an element that is itself a dataset (a window)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.shape = TensorShape(dataset_shape)

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and self.element_spec == other.element_spec and self.shape == other.shape

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, {self.shape!r})"


def leaf_spec(leaf):
    if _is_dataset(leaf):
        return DatasetSpec(leaf.element_spec)
    if sparse_leaves.is_sparse(leaf):
        return sparse_leaves.spec(leaf)
    return TensorSpec(np.shape(leaf), dtypes.as_dtype(leaf.dtype))


def spec_of(element):
    return nest.map_structure(leaf_spec, element)


def _relaxed_shape(a, b):
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def most_specific_compatible(spec_a, spec_b, what="dataset elements"):
    """The spec both elements conform to (differing dimensions become None); dtypes must agree."""
    try:
        nest.assert_same_structure(spec_a, spec_b)
    except ValueError:
        raise TypeError(f"Incompatible {what}:\n  {spec_a} vs.\n  {spec_b}") from None
    flat_a, flat_b = nest.flatten(spec_a), nest.flatten(spec_b)
    merged = []
    for a, b in zip(flat_a, flat_b):
        if type(a) is not type(b) or (isinstance(a, TensorSpec) and a.dtype != b.dtype):
            raise TypeError(f"Incompatible {what}:\n  {spec_a} vs.\n  {spec_b}")
        if isinstance(a, TensorSpec):
            merged.append(TensorSpec(_relaxed_shape(a.shape, b.shape), a.dtype))
        elif isinstance(a, sparse_leaves.SparseTensorSpec):
            if a.dtype != b.dtype:
                raise TypeError(f"Incompatible {what}:\n  {spec_a} vs.\n  {spec_b}")
            merged.append(sparse_leaves.relaxed_spec(a, b, _relaxed_shape))
        else:
            merged.append(DatasetSpec(most_specific_compatible(a.element_spec, b.element_spec, what)))
    return nest.pack_sequence_as(spec_a, merged)


def map_specs(fn, spec):
    """Applies ``fn`` to every TensorSpec of a spec structure."""
    return nest.map_structure(fn, spec)


def batched_spec(spec, batch_dim):
    def batch(s):
        if isinstance(s, sparse_leaves.SparseTensorSpec):
            return sparse_leaves.batched_spec(s, batch_dim)
        return TensorSpec(TensorShape([batch_dim]).concatenate(s.shape), s.dtype)
    return map_specs(batch, spec)


def unbatched_spec(spec):
    def unbatch(s):
        if isinstance(s, sparse_leaves.SparseTensorSpec):
            return sparse_leaves.unbatched_spec(s)
        if s.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")
        return TensorSpec(TensorShape(None) if s.shape.rank is None else s.shape[1:], s.dtype)
    return map_specs(unbatch, spec)


def placeholder_leaf(spec, fill):
    """A value of ``spec`` (unknown dimensions of size ``fill``, values ``fill``) for probing a function."""
    if isinstance(spec, DatasetSpec):
        raise TypeError("datasets inside elements cannot be probed")
    if isinstance(spec, sparse_leaves.SparseTensorSpec):
        return sparse_leaves.placeholder(spec, fill)
    shape = () if spec.shape.rank is None else tuple(fill if d is None else d for d in spec.shape.dims)
    if spec.dtype == dtypes.string:
        return np.full(shape, b"", dtype=object)
    return np.full(shape, fill, dtype=spec.dtype._np)
