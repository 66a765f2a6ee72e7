"""Public tf ops that accept RaggedTensors, as TensorFlow's ragged dispatch does.

Importing tapeflow.ragged (which any RaggedTensor needs) wraps the public functions listed here in the
``tapeflow`` and ``tapeflow.math`` namespaces: a call whose arguments hold a RaggedTensor goes to the ragged
version, every other call to the original function unchanged. The ops modules themselves are untouched, so
internal code pays nothing.
"""
import functools

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from ..ops import array_ops
from ..ops.common import is_tensor_like, to_tensor
from . import ragged_math
from .ragged_tensor import RaggedTensor

UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "exp", "expm1", "floor", "is_finite",
         "is_inf", "is_nan", "log", "log1p", "logical_not", "negative", "reciprocal", "rint", "round", "rsqrt",
         "sign", "sin", "sinh", "sqrt", "square", "tan", "cast", "saturate_cast", "clip_by_value", "identity",
         "stop_gradient", "zeros_like", "ones_like")
# Not wrapped: functions Keras recognises by identity as activations (tf.nn.relu, tf.tanh, tf.sigmoid, ...);
# a wrapper would change how a layer using them serializes. Ragged callers use tf.ragged.map_flat_values.
ELEMENTWISE = ("add", "subtract", "multiply", "divide", "truediv", "realdiv", "div_no_nan", "divide_no_nan",
               "floordiv", "floormod", "mod", "pow", "maximum", "minimum", "squared_difference", "equal",
               "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
               "logical_xor")


def _flat_partition(rt):
    return [s._value for s in rt.nested_row_splits]


def _same_partition(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def as_flat(value, template):
    """``value`` (ragged, scalar or dense broadcastable to ``template``) as something that combines with
    ``template.flat_values`` elementwise."""
    if isinstance(value, RaggedTensor):
        if not _same_partition(_flat_partition(value), _flat_partition(template)):
            raise InvalidArgumentError("Ragged tensors in an elementwise operation must have the same row "
                                       "partitions")
        return value.flat_values
    if not is_tensor_like(value) and not isinstance(value, (list, tuple, np.ndarray)):
        return value
    t = to_tensor(value, dtype=template.dtype) if not is_tensor_like(value) else to_tensor(value)
    ndim = t._value.ndim
    inner_rank = template.flat_values._value.ndim - 1      # uniform dimensions below the ragged ones
    if ndim <= inner_rank:
        return t        # broadcasts against the flat values as it is
    if template.ragged_rank == 1 and ndim == template.shape.rank and t._value.shape[1] == 1:
        # one value per row (shape [nrows, 1, ...]): repeated along each row
        return array_ops.gather(array_ops.squeeze(t, axis=1), Tensor(template._rowids()))
    raise NotImplementedError(f"tapeflow: a RaggedTensor of shape {template.shape} combines elementwise with "
                              f"a scalar, a RaggedTensor of the same row partitions, or a tensor of shape "
                              f"[nrows, 1]; got shape {list(t._value.shape)}")


def _elementwise(fn, n_tensor_args):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tensors = args[:n_tensor_args]
        template = next((a for a in tensors if isinstance(a, RaggedTensor)), None)
        if template is None:
            return fn(*args, **kwargs)
        flat = [as_flat(a, template) for a in tensors]
        return template.with_flat_values(fn(*flat, *args[n_tensor_args:], **kwargs))
    wrapper._ragged_dispatch = fn
    return wrapper


def _holds_ragged(values):
    return isinstance(values, (list, tuple)) and any(isinstance(v, RaggedTensor) for v in values)


def _as_ragged(value, ragged_rank):
    if isinstance(value, RaggedTensor):
        return value
    return RaggedTensor.from_tensor(to_tensor(value), ragged_rank=ragged_rank)


def _concat_rows(rts):
    """The rows of every RaggedTensor, one after another (concat along axis 0)."""
    values = [rt.values for rt in rts]
    if isinstance(values[0], RaggedTensor):
        merged = _concat_rows(values)
    else:
        merged = array_ops.concat(values, axis=0)
    splits, offset = [np.zeros(1, np.int64)], 0
    for rt in rts:
        splits.append(rt._splits[1:] + offset)
        offset += int(rt._splits[-1])
    return RaggedTensor.from_row_splits(merged, np.concatenate(splits))


def _interleave(rts):
    """Row i holds row i of every input, in order (stack along axis 1)."""
    n = rts[0].nrows_static()
    if any(rt.nrows_static() != n for rt in rts):
        raise InvalidArgumentError("Input tensors have incompatible shapes: "
                                   f"{[rt.nrows_static() for rt in rts]} rows")
    together = _concat_rows(rts)
    order = np.arange(len(rts) * n).reshape(len(rts), n).T.ravel()
    return RaggedTensor.from_uniform_row_length(together._gather_rows(order), len(rts), nrows=n)


def _ragged_inputs(values, axis, what):
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    rank = max(v.shape.rank for v in ragged) if ragged else to_tensor(values[0])._value.ndim
    ragged_rank = max(v.ragged_rank for v in ragged) if ragged else 1
    rts = [_as_ragged(v, ragged_rank) for v in values]
    if any(rt.ragged_rank != ragged_rank or rt.shape.rank != rank for rt in rts):
        raise ValueError(f"{what}: the inputs must have the same rank and ragged rank")
    axis = int(axis)
    return rts, axis + rank if axis < 0 else axis, rank


def concat(values, axis, name=None):
    rts, axis, rank = _ragged_inputs(values, axis, "concat")
    if axis == 0:
        return _concat_rows(rts)
    if axis == 1:
        return _interleave(rts).merge_dims(1, 2)
    raise NotImplementedError(f"tapeflow concatenates RaggedTensors along axis 0 or 1, got axis {axis}")


def stack(values, axis=0, name=None):
    rts, axis, rank = _ragged_inputs(values, axis, "stack")
    if axis == 0:
        return RaggedTensor.from_row_lengths(_concat_rows(rts), [rt.nrows_static() for rt in rts])
    if axis == 1:
        return _interleave(rts)
    raise NotImplementedError(f"tapeflow stacks RaggedTensors along axis 0 or 1, got axis {axis}")


def ragged_stack(values, axis=0, name=None):
    """tf.ragged.stack: like tf.stack, but the inputs may differ in length and the result is ragged."""
    if not any(isinstance(v, RaggedTensor) for v in values):
        tensors = [to_tensor(v) for v in values]
        if int(axis) != 0 or any(t._value.ndim == 0 for t in tensors):
            raise NotImplementedError("tapeflow: tf.ragged.stack of dense tensors stacks vectors (or higher) "
                                      "along axis 0")
        return RaggedTensor.from_row_lengths(array_ops.concat(tensors, axis=0),
                                             [t._value.shape[0] for t in tensors])
    return stack(values, axis)


def tile(rt, multiples, name=None):
    multiples = [int(m) for m in np.asarray(to_tensor(multiples)._value if is_tensor_like(multiples)
                                            else multiples).ravel()]
    if len(multiples) != rt.shape.rank:
        raise ValueError(f"tile: multiples has {len(multiples)} entries for a tensor of rank {rt.shape.rank}")
    if any(m != 1 for m in multiples[2:]) or rt.ragged_rank != 1:
        raise NotImplementedError("tapeflow tiles RaggedTensors of ragged rank 1 along axes 0 and 1")
    result = rt
    if multiples[1] != 1:
        result = _interleave([result] * multiples[1]).merge_dims(1, 2)
    if multiples[0] != 1:
        result = _concat_rows([result] * multiples[0])
    return result


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        raise NotImplementedError("tapeflow: tf.where with a RaggedTensor needs x and y")
    template = next(a for a in (condition, x, y) if isinstance(a, RaggedTensor))
    flat = [as_flat(a, template) for a in (condition, x, y)]
    return template.with_flat_values(array_ops.where(*flat))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``fn`` on every row (eager). As in TensorFlow the result is ragged unless ``fn_output_signature`` (or
    ``dtype``) names a dense result."""
    signature = fn_output_signature if fn_output_signature is not None else dtype
    rows = [fn(elems[i]) for i in range(elems.nrows_static())]
    if signature is not None and type(signature).__name__ != "RaggedTensorSpec":
        return array_ops.stack([to_tensor(r) for r in rows])
    if all(isinstance(r, RaggedTensor) for r in rows) and rows:
        return stack(rows, axis=0)
    rows = [to_tensor(r) for r in rows]
    if any(r._value.ndim == 0 for r in rows):
        raise ValueError("map_fn over a RaggedTensor: fn returned a scalar; pass fn_output_signature=tf.TensorSpec"
                         "(...) for a dense result")
    if not rows:
        return RaggedTensor.from_row_lengths(elems.flat_values[:0], [])
    return RaggedTensor.from_row_lengths(array_ops.concat(rows, axis=0), [r._value.shape[0] for r in rows])


def _reduction(name):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        return ragged_math.reduce(input_tensor, ragged_math.OP_TYPES[reduce_name], axis, keepdims)
    reduce_name = name
    return reduce


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Dense params gathered at ragged indices: the result has the indices' row partitions."""
    from ..ops.array_ops import gather as dense_gather
    if isinstance(params, RaggedTensor) or (axis not in (None, 0)) or batch_dims:
        raise NotImplementedError("tapeflow gathers dense params along axis 0 at RaggedTensor indices")
    return indices.with_flat_values(dense_gather(params, indices.flat_values))


def size(input, out_type=None, name=None):  # noqa: A002 - TensorFlow's argument name
    """The number of items (of the flat values)."""
    from ..framework import dtypes
    return Tensor(np.asarray(input.flat_values._value.size, dtypes.as_dtype(out_type or dtypes.int32)._np))


def expand_dims(input, axis, name=None):  # noqa: A002 - TensorFlow's argument name
    """A new outer dimension (axis 0) or a new innermost one (the last axis)."""
    rank = input.shape.rank
    axis = int(axis)
    if axis == 0:
        return RaggedTensor.from_uniform_row_length(input, input.nrows_static(), nrows=1)
    if axis == -1 or axis == rank:
        return input.with_flat_values(array_ops.expand_dims(input.flat_values, -1))
    raise NotImplementedError(f"tapeflow expands a RaggedTensor at axis 0 or its last axis, got axis {axis}")


STRUCTURAL = {"size": size, "expand_dims": expand_dims, "concat": concat, "stack": stack, "tile": tile, "where": where, "map_fn": map_fn, "gather": gather}
STRUCTURAL.update({name: _reduction(name) for name in ragged_math.OP_TYPES})


def _structural(fn, ragged_fn, finds_ragged):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if finds_ragged(args, kwargs):
            return ragged_fn(*args, **kwargs)
        return fn(*args, **kwargs)
    wrapper._ragged_dispatch = fn
    return wrapper


def _first_is_ragged(args, kwargs):
    first = args[0] if args else next(iter(kwargs.values()), None)
    return isinstance(first, RaggedTensor) or _holds_ragged(first)


def _any_ragged(args, kwargs):
    return any(isinstance(a, RaggedTensor) for a in list(args) + list(kwargs.values()))


def install(namespaces):
    """Wraps the listed functions in each namespace (a module) once; idempotent."""
    wrapped = {}
    for module in namespaces:
        for name in UNARY + ELEMENTWISE + tuple(STRUCTURAL):
            fn = getattr(module, name, None)
            if fn is None or hasattr(fn, "_ragged_dispatch"):
                continue
            if id(fn) not in wrapped:
                if name in STRUCTURAL:
                    finds = _any_ragged if name == "where" else _first_is_ragged
                    if name in ("map_fn", "gather"):
                        finds = _second_is_ragged
                    wrapped[id(fn)] = _structural(fn, STRUCTURAL[name], finds)
                else:
                    wrapped[id(fn)] = _elementwise(fn, 2 if name in ELEMENTWISE else 1)
            setattr(module, name, wrapped[id(fn)])


def _second_is_ragged(args, kwargs):
    elems = args[1] if len(args) > 1 else kwargs.get("elems", kwargs.get("indices"))
    return isinstance(elems, RaggedTensor)
