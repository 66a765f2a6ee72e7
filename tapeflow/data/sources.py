"""Source datasets: from_tensor_slices, from_tensors, range, from_generator."""
import numpy as np

from ..framework import dtypes, nest
from ..framework.errors import InvalidArgumentError
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_spec import TensorSpec
from . import structure
from .dataset import Dataset, as_int
from .index_plan import IndexPlan, arange_chunks
from .sparse_leaves import is_sparse, rows as sparse_rows


def _owned(element):
    """The element's arrays, copied: later changes to the caller's arrays do not reach the dataset."""
    return structure.map_leaves(lambda a: np.array(a) if isinstance(a, np.ndarray) else a, element)


class TensorSliceDataset(Dataset):
    """The slices of the tensors along their first dimension."""
    _tf_name = "_TensorSliceDataset"

    def __init__(self, tensors):
        element = _owned(structure.normalize(tensors))
        flat = structure.leaves(element)
        for leaf in flat:
            if isinstance(leaf, Dataset):
                raise TypeError("from_tensor_slices does not slice datasets.")
            if not is_sparse(leaf) and np.ndim(leaf) == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got a scalar: {leaf!r}")
        sizes = {int(leaf.dense_shape.numpy()[0]) if is_sparse(leaf) else np.shape(leaf)[0] for leaf in flat}
        if len(sizes) > 1:
            shapes = ", ".join(str(leaf.shape if is_sparse(leaf) else TensorShape(np.shape(leaf))) for leaf in flat)
            raise ValueError(f"Dimension 0 in all tensors must be equal, got shapes: {shapes}")
        self._structure = element
        self._pack = structure.packer(element)
        self._specs = [structure.unbatched_spec(structure.leaf_spec(leaf)) for leaf in flat]
        self._arrays = [sparse_rows(leaf) if is_sparse(leaf) else leaf for leaf in flat]   # a SparseTensor: its rows
        self._size = sizes.pop() if sizes else 0

    def _compute_spec(self):
        return structure.pack(self._structure, self._specs)

    def _compute_cardinality(self):
        return self._size

    def _gather(self, index):
        return self._pack([a[index] for a in self._arrays])

    def _iterate(self):
        arrays, skeleton = self._arrays, self._structure
        if len(arrays) == 1 and not nest.is_nested(skeleton):
            return _rows(arrays[0])
        columns = [_rows(a) for a in arrays]
        pack = self._pack
        return (pack(list(row)) for row in zip(*columns))

    def _index_plan(self):
        if any(isinstance(a, list) for a in self._arrays):    # SparseTensor rows are gathered one by one
            return None
        return IndexPlan(self._gather, lambda: arange_chunks(self._size))


class TensorDataset(Dataset):
    """One element: the tensors as given."""
    _tf_name = "_TensorDataset"

    def __init__(self, tensors):
        self._element = _owned(structure.normalize(tensors))

    def _compute_spec(self):
        return structure.spec_of(self._element)

    def _compute_cardinality(self):
        return 1

    def _iterate(self):
        return iter((self._element,))


class RangeDataset(Dataset):
    """``range([start,] stop[, step])`` as int64 (or ``output_type``) scalars."""
    _tf_name = "_RangeDataset"

    def __init__(self, args, output_type):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to range: {args}. Expected 1 to 3 arguments: "
                             "[start,] stop[, step].")
        values = [as_int(a, "range argument") for a in args]
        start, stop, step = (0, values[0], 1) if len(values) == 1 else (values + [1])[:3]
        if step == 0:
            raise InvalidArgumentError("step must be a non-zero integer.")
        self._start, self._stop, self._step = start, stop, step
        self._dtype = dtypes.as_dtype(output_type)
        self._size = len(range(start, stop, step))

    def _compute_spec(self):
        return TensorSpec((), self._dtype)

    def _compute_cardinality(self):
        return self._size

    def _iterate(self):
        dtype = self._dtype._np
        return (np.array(v, dtype=dtype) for v in range(self._start, self._stop, self._step))

    def _gather(self, index):
        return (self._start + index * self._step).astype(self._dtype._np)

    def _index_plan(self):
        return IndexPlan(self._gather, lambda: arange_chunks(self._size))


class GeneratorDataset(Dataset):
    """The elements a Python generator yields, checked against the declared signature."""
    _tf_name = "_FlatMapDataset"   # TensorFlow builds from_generator as a flat_map
    _runs_python = True

    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None:
                raise TypeError("The `output_types` argument can not be used together with the "
                                "`output_signature` argument.")
            if output_shapes is not None:
                raise TypeError("The `output_shapes` argument can not be used together with the "
                                "`output_signature` argument.")
            for spec in nest.flatten(output_signature):
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"`output_signature` must contain objects that are subtype of "
                                    f"`tf.TypeSpec` but found {type(spec)} which is not.")
            self._spec = output_signature
        else:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the "
                                "`output_signature` argument or the `output_types` argument.")
            self._spec = _signature_from_types(output_types, output_shapes)
        self._generator = generator
        self._args = () if args is None else tuple(structure.to_user(structure.normalize(a)) for a in args)

    def _compute_spec(self):
        return self._spec

    def _iterate(self):
        arguments = [structure.numpy_leaf(a._value) for a in self._args]
        specs = nest.flatten(self._spec)
        for value in self._generator(*arguments):
            yield nest.pack_sequence_as(self._spec, _check_yielded(value, self._spec, specs))


def _rows(array):
    """The rows of an array, each an ndarray (0-d for the items of a 1-D array); a list's items."""
    if isinstance(array, list):
        return iter(array)
    if array.ndim > 1:
        return iter(array)
    dtype = array.dtype
    return (np.asarray(v, dtype=dtype) for v in array)


def _signature_from_types(output_types, output_shapes):
    if output_shapes is None:
        return nest.map_structure(lambda t: TensorSpec(None, t), output_types)
    flat_types = nest.flatten(output_types)
    if not nest.is_nested(output_types):
        shapes = [output_shapes]
    elif isinstance(output_shapes, list) and not any(nest.is_nested(s) for s in output_shapes) \
            and len(flat_types) == 1:
        shapes = [output_shapes]
    else:
        shapes = _flatten_shapes_up_to(output_types, output_shapes)
    specs = [TensorSpec(s, t) for s, t in zip(shapes, flat_types)]
    return nest.pack_sequence_as(output_types, specs)


def _flatten_shapes_up_to(types, shapes):
    """Shapes given as lists sit at the leaves of the types' structure."""
    if not nest.is_nested(types):
        return [shapes]
    if isinstance(types, dict):
        return [s for k in sorted(types) for s in _flatten_shapes_up_to(types[k], shapes[k])]
    if len(types) != len(shapes):
        raise ValueError(f"`output_shapes` {shapes} does not match the structure of `output_types` {types}.")
    return [s for t, sh in zip(types, shapes) for s in _flatten_shapes_up_to(t, sh)]


def _check_yielded(value, signature, specs):
    """The yielded value's leaves, converted to the signature's dtypes, with TensorFlow's errors."""
    try:
        flat = _flatten_like(value, signature)
    except (ValueError, TypeError):
        raise InvalidArgumentError(f"TypeError: `generator` yielded an element that did not match the expected "
                                   f"structure. The expected structure was {signature}, but the yielded element "
                                   f"was {value}.") from None
    out = []
    for leaf, spec in zip(flat, specs):
        try:
            array = _convert_leaf(leaf, spec.dtype)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"TypeError: `generator` yielded an element that could not be converted to "
                                       f"the expected type. The expected type was {spec.dtype.name}, but the "
                                       f"yielded element was {leaf}.") from None
        if not spec.shape.is_compatible_with(array.shape):
            raise InvalidArgumentError(f"`generator` yielded an element of shape {TensorShape(array.shape)} where "
                                       f"an element of shape {spec.shape} was expected.")
        out.append(array)
    return out


def _flatten_like(value, signature):
    if not nest.is_nested(signature):
        return [value]
    if isinstance(signature, dict):
        if not isinstance(value, dict) or set(value) != set(signature):
            raise ValueError("structure mismatch")
        return [leaf for k in sorted(signature) for leaf in _flatten_like(value[k], signature[k])]
    if not isinstance(value, (tuple, list)) or len(value) != len(signature):
        raise ValueError("structure mismatch")
    return [leaf for v, s in zip(value, signature) for leaf in _flatten_like(v, s)]


def _convert_leaf(leaf, dtype):
    if hasattr(leaf, "_value") or hasattr(leaf, "_as_tensor"):
        leaf = structure.normalize(leaf)
    if dtype == dtypes.string:
        array = np.asarray(leaf)
        if array.dtype.kind == "U":
            return np.char.encode(array, "utf-8").astype(object)
        if array.dtype.kind in "SO":
            return array.astype(object)
        raise TypeError("not a string")
    array = np.asarray(leaf)
    if array.dtype.kind in "USO":
        raise TypeError("a string where a number was expected")
    return np.asarray(array, dtype=dtype._np)

