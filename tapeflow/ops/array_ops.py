"""Array ops: shapes, joining and splitting, indexing, creation."""
import numpy as np

from ..framework import dtypes
from ..framework.conversion import convert_to_tensor
from ..framework.batching import axis_attr_not_0, declare, elementwise, register_batching_rule
from ..framework.errors import InvalidArgumentError
from ..framework.recording import tracing_graph
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.variables import Variable
from . import math_ops
from .core_ops import (broadcast_to, reduce_sum, reshape, same_dtype_tensors, stack, sum_to, unstack,  # noqa: F401
                       where)  # re-exported: array_ops.reshape, .where, .stack etc. stay where they were
from .common import (RegisterGradient, axes_tuple, batch_ndim, execute, int_list, is_tensor_like,
                     no_gradient, normalize_axis, register_op, to_tensor)


def _zeros_for(t):
    return Tensor(np.zeros(t._value.shape, t._value.dtype))


# ---------------------------------------------------------------- identity ---
@register_op("Identity")
def _identity_fwd(x):
    return x


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


def identity(input, name=None):
    if isinstance(input, Tensor):
        return execute("Identity", (input,))
    if is_tensor_like(input):
        return read_variable(input)
    return execute("Identity", (to_tensor(input),))


@register_op("ReadVariableOp")
def _read_variable_fwd(x):
    return np.array(x, copy=True)


@RegisterGradient("ReadVariableOp")
def _read_variable_grad(op, grad):
    return grad


def read_variable(var):
    """A snapshot of a variable's value, connected to it for gradients."""
    return execute("ReadVariableOp", (var._as_tensor(),))


@register_op("IdentityN", num_outputs=-1)
def _identity_n_fwd(*xs, **private_attrs):
    # private_attrs: _gradient_op_type names the gradient of a traced custom_gradient (tapeflow.function).
    return xs


@RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return grads


def identity_n(inputs, name=None):
    return list(execute("IdentityN", tuple(to_tensor(x) for x in inputs)))


@register_op("StopGradient")
def _stop_gradient_fwd(x):
    return x


no_gradient("StopGradient")


def stop_gradient(input, name=None):
    """The value of ``input``, treated as a constant by every tape."""
    return execute("StopGradient", (to_tensor(input),))


# ------------------------------------------------------------------ shapes ---
def shape(input, out_type=dtypes.int32, name=None):
    x = to_tensor(input)
    if tracing_graph() is not None:   # a Shape node: the shape of each call's input
        return execute("Shape", (x,), {"out_type": dtypes.as_dtype(out_type).name})
    return Tensor(np.array(x._value.shape, dtype=dtypes.as_dtype(out_type)._np))


def shape_n(input, out_type=dtypes.int32, name=None):
    return [shape(x, out_type) for x in input]


def rank(input, name=None):
    return Tensor(np.array(to_tensor(input)._value.ndim, dtype=np.int32))


def size(input, out_type=dtypes.int32, name=None):
    return Tensor(np.array(to_tensor(input)._value.size, dtype=dtypes.as_dtype(out_type)._np))


declare(elementwise, "Identity", "ReadVariableOp", "StopGradient")
declare(axis_attr_not_0("axis"), "ConcatV2", "SplitV", "GatherV2")


@register_batching_rule("IdentityN")
def _identity_n_rows(op, batched):
    return all(batched)


@register_op("Transpose")
def _transpose_fwd(x, perm):
    return np.transpose(x, perm)


@register_batching_rule("Transpose")
def _transpose_rows(op, batched):
    return tuple(op.attrs["perm"])[:1] == (0,)


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    nb = batch_ndim(op, grad)
    inverse = np.argsort(op.attrs["perm"])
    return transpose(grad, list(range(nb)) + [nb + int(p) for p in inverse])


def transpose(a, perm=None, conjugate=False, name=None):
    a = to_tensor(a)
    nd = a._value.ndim
    perm = tuple(range(nd - 1, -1, -1)) if perm is None else tuple(normalize_axis(p, nd, "perm entry") for p in int_list(perm))
    if sorted(perm) != list(range(nd)):
        raise InvalidArgumentError(f"transpose: perm {list(perm)} is not a permutation of the axes of a rank-{nd} tensor")
    out = execute("Transpose", (a,), {"perm": perm})
    return math_ops.conj(out) if conjugate else out


def matrix_transpose(a, name=None, conjugate=False):
    a = to_tensor(a)
    nd = a._value.ndim
    if nd < 2:
        raise InvalidArgumentError(f"matrix_transpose needs a tensor of rank >= 2, got shape {a.shape}")
    return transpose(a, list(range(nd - 2)) + [nd - 1, nd - 2], conjugate=conjugate)


def expand_dims(input, axis, name=None):
    x = to_tensor(input)
    nd = x._value.ndim
    axis = int(axis)
    if axis < -nd - 1 or axis > nd:
        raise InvalidArgumentError(f"expand_dims: axis {axis} is out of bounds for a tensor of rank {nd}")
    axis = axis + nd + 1 if axis < 0 else axis
    s = x._value.shape
    return reshape(x, s[:axis] + (1,) + s[axis:])


def squeeze(input, axis=None, name=None):
    x = to_tensor(input)
    s = x._value.shape
    if axis is None:
        keep = [d for d in s if d != 1]
    else:
        axes = axes_tuple(axis, len(s), op="squeeze")
        for a in axes:
            if s[a] != 1:
                raise InvalidArgumentError(f"squeeze: cannot squeeze axis {a} of size {s[a]} (shape {TensorShape(s)})")
        keep = [d for i, d in enumerate(s) if i not in axes]
    return reshape(x, keep)


def broadcast_static_shape(shape_x, shape_y):
    return TensorShape(np.broadcast_shapes(tuple(shape_x), tuple(shape_y)))


# ----------------------------------------------------------- join / split ---
@register_op("ConcatV2")
def _concat_fwd(*xs, axis):
    return np.concatenate(xs, axis=axis)


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    nb = batch_ndim(op, grad)
    axis = op.attrs["axis"]
    sizes = [t._value.shape[axis] for t in op.inputs]
    return split(grad, sizes, axis=axis + nb)


def concat(values, axis, name=None):
    values = same_dtype_tensors(values)
    if not values:
        raise ValueError("concat: values must be a non-empty list of tensors")
    if len(values) == 1:
        return identity(values[0])
    nd = values[0]._value.ndim
    axis = normalize_axis(int(axis), nd, op="concat")
    first = values[0]._value.shape
    for i, v in enumerate(values[1:], 1):
        s = v._value.shape
        if len(s) != nd or s[:axis] != first[:axis] or s[axis + 1:] != first[axis + 1:]:
            raise InvalidArgumentError(
                f"concat: input {i} has shape {TensorShape(s)}, incompatible with input 0 of shape "
                f"{TensorShape(first)} along axis {axis}")
        if v._value.dtype != values[0]._value.dtype:
            raise InvalidArgumentError(f"concat: input {i} has dtype {v.dtype.name}, input 0 has {values[0].dtype.name}")
    return execute("ConcatV2", tuple(values), {"axis": axis})


@register_op("SplitV", num_outputs=-1)
def _split_fwd(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


@RegisterGradient("SplitV")
def _split_grad(op, *grads):
    return concat(list(grads), axis=op.attrs["axis"] + batch_ndim(op, grads[0]))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    x = to_tensor(value)
    axis = normalize_axis(int(axis), x._value.ndim, op="split")
    dim = x._value.shape[axis]
    if isinstance(num_or_size_splits, int) or (is_tensor_like(num_or_size_splits) and np.ndim(num_or_size_splits) == 0):
        n = int(num_or_size_splits)
        if n <= 0 or dim % n:
            raise InvalidArgumentError(f"split: dimension {axis} of size {dim} is not divisible into {n} equal parts")
        sizes = (dim // n,) * n
    else:
        sizes = list(int_list(num_or_size_splits))
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if sum(sizes) != dim or min(sizes) < 0:
            raise InvalidArgumentError(f"split: sizes {sizes} do not add up to dimension {axis} of size {dim}")
        sizes = tuple(sizes)
    return list(execute("SplitV", (x,), {"sizes": sizes, "axis": axis}))


# ----------------------------------------------------------------- padding ---
def _pad_index(size, before, after, mode):
    """For one axis: which source index each padded position reads (-1 = constant)."""
    src = np.arange(size)
    if mode == "constant":
        return np.concatenate([np.full(before, -1), src, np.full(after, -1)])
    return np.pad(src, (before, after), mode=mode)


@register_op("PadV2")
def _pad_fwd(x, constant_values, paddings, mode):
    if mode == "constant":
        return np.pad(x, paddings, mode="constant", constant_values=constant_values)
    return np.pad(x, paddings, mode=mode)


@register_batching_rule("PadV2")
def _pad_rows(op, batched):
    return not batched[1] and tuple(op.attrs["paddings"][0]) == (0, 0)


@RegisterGradient("PadV2")
def _pad_grad(op, grad):
    nb = batch_ndim(op, grad)
    paddings, mode = op.attrs["paddings"], op.attrs["mode"]
    x_shape = op.inputs[0]._value.shape
    if mode == "constant":
        key = (slice(None),) * nb + tuple(slice(b, b + d) for (b, _), d in zip(paddings, x_shape))
        g = _getitem_raw(grad, key)
        cv_grad = None
        if 1 not in op.skip_input_indices and op.inputs[1]._value.dtype.kind in "fc":
            # The constant fills every padded position: the sum of the gradient outside the input.
            core = list(range(nb, grad._value.ndim))
            cv_grad = math_ops.subtract(reduce_sum(grad, core), reduce_sum(g, core))
        return g, cv_grad
    for axis, ((b, a), d) in enumerate(zip(paddings, x_shape)):
        if b or a:
            grad = unsorted_segment_sum(grad, Tensor(_pad_index(d, b, a, mode)), d, axis=axis + nb)
    return grad, None


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    x = to_tensor(tensor)
    pads = np.asarray(to_tensor(paddings)._value if is_tensor_like(paddings) else paddings, dtype=np.int64)
    if pads.shape != (x._value.ndim, 2):
        raise InvalidArgumentError(f"pad: paddings must have shape [{x._value.ndim}, 2] for a tensor of shape "
                                   f"{x.shape}, got {list(pads.shape)}")
    mode = mode.lower()
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"pad: unknown mode {mode.upper()!r}; use 'CONSTANT', 'REFLECT' or 'SYMMETRIC'")
    if (pads < 0).any():
        raise InvalidArgumentError(f"pad: paddings must be non-negative, got {pads.tolist()}")
    if mode != "constant":
        # REFLECT leaves out the edge value, SYMMETRIC repeats it: at most size-1 / size values per side.
        limit = 1 if mode == "reflect" else 0
        for axis, ((before, after), size) in enumerate(zip(pads.tolist(), x._value.shape)):
            if max(before, after) > size - limit:
                raise InvalidArgumentError(
                    f"pad: {mode.upper()} paddings of axis {axis} must be {'less than' if limit else 'at most'} "
                    f"the dimension size {size}, got [{before}, {after}]")
    if x.dtype == dtypes.string and isinstance(constant_values, int) and constant_values == 0:
        constant_values = b""   # the default pads strings with empty ones
    cv = convert_to_tensor(constant_values, dtype=x.dtype)
    return execute("PadV2", (x, cv), {"paddings": tuple(tuple(int(v) for v in p) for p in pads), "mode": mode})


# ------------------------------------------------------------ gather/scatter ---
def _gather_at_trace(params, indices, axis):
    """While tracing, indices may be placeholder values outside the traced params (a loop counter
    stands for any iteration): only the output's shape and dtype matter there."""
    shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
    return np.zeros(shape, params.dtype)


@register_op("GatherV2", at_trace=_gather_at_trace)
def _gather_fwd(params, indices, axis):
    n = params.shape[axis]
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        position = np.argwhere((indices < 0) | (indices >= n))[0]
        where_ = "".join(f"[{int(i)}]" for i in position)
        raise InvalidArgumentError(
            f"gather: indices{where_} = {int(indices[tuple(position)])} is not in [0, {n}) "
            f"(axis {axis} of params with shape {TensorShape(params.shape)}) [Op:GatherV2]")
    return np.take(params, indices, axis=axis)


@RegisterGradient("GatherV2")
def _gather_grad(op, grad):
    nb = batch_ndim(op, grad)
    params, indices = op.inputs
    axis = op.attrs["axis"]
    return unsorted_segment_sum(grad, indices, params._value.shape[axis], axis=axis + nb), None


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    params = to_tensor(params)
    indices = to_tensor(indices)
    if indices._value.dtype.kind not in "iu":
        raise InvalidArgumentError(f"gather: indices must be integers, got {indices.dtype.name}")
    batch_dims = int(batch_dims)
    if batch_dims < 0:
        batch_dims += indices._value.ndim
    axis = normalize_axis(int(batch_dims if axis is None else axis), params._value.ndim, op="gather")
    if batch_dims:
        return _batched_gather(params, indices, axis, batch_dims)
    return execute("GatherV2", (params, indices), {"axis": axis})


def _batched_gather(params, indices, axis, b):
    """gather with ``batch_dims=b``: one gather on the flattened batch with per-example offsets.

    The result has shape params.shape[:axis] + indices.shape[b:] + params.shape[axis + 1:].
    """
    ps, ids = params._value.shape, indices._value
    if b > indices._value.ndim or b > axis:
        raise InvalidArgumentError(f"gather: batch_dims={b} must be <= rank(indices)={ids.ndim} and <= axis={axis}")
    if ps[:b] != ids.shape[:b]:
        raise InvalidArgumentError(f"gather: the first batch_dims={b} dimensions of params {TensorShape(ps)} and "
                                   f"indices {TensorShape(ids.shape)} must be equal")
    n = ps[axis]
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        position = np.argwhere((ids < 0) | (ids >= n))[0]
        raise InvalidArgumentError(f"gather: indices{''.join(f'[{int(i)}]' for i in position)} = "
                                   f"{int(ids[tuple(position)])} is not in [0, {n}) [Op:GatherV2]")
    batch = ps[:b]
    n_batch = int(np.prod(batch, dtype=np.int64))
    middle = ps[b:axis]
    # params -> [batch..., n, middle..., tail...] -> [n_batch * n, middle..., tail...]
    perm = list(range(b)) + [axis] + list(range(b, axis)) + list(range(axis + 1, len(ps)))
    moved = transpose(params, perm) if perm != list(range(len(ps))) else params
    flat = reshape(moved, (n_batch * n,) + middle + ps[axis + 1:])
    # The offsets depend on shapes only; adding them is an op, so a traced tf.function stays correct.
    offsets = Tensor((np.arange(n_batch, dtype=ids.dtype) * n).reshape(batch + (1,) * (ids.ndim - b)))
    gathered = execute("GatherV2", (flat, math_ops.add(indices, offsets)), {"axis": 0})
    # [batch..., idx..., middle..., tail...] -> [batch..., middle..., idx..., tail...]
    k, m = ids.ndim - b, len(middle)
    if m:
        order = (list(range(b)) + list(range(b + k, b + k + m)) + list(range(b, b + k))
                 + list(range(b + k + m, gathered._value.ndim)))
        gathered = transpose(gathered, order)
    return gathered


@register_op("UnsortedSegmentSum")
def _segment_sum_fwd(data, segment_ids, num_segments, axis):
    ids = segment_ids.reshape(-1)
    lead = data.shape[:axis]
    tail = data.shape[axis + segment_ids.ndim:]
    flat = data.reshape(lead + (ids.size,) + tail)
    out = np.zeros(lead + (num_segments,) + tail, dtype=data.dtype)
    valid = ids >= 0
    index = (slice(None),) * axis + (ids[valid],)
    np.add.at(out, index, flat[(slice(None),) * axis + (valid,)])
    return out


@RegisterGradient("UnsortedSegmentSum")
def _segment_sum_grad(op, grad):
    nb = batch_ndim(op, grad)
    ids = op.inputs[1]
    axis = op.attrs["axis"] + nb
    if tracing_graph() is None and not (ids._value < 0).any():
        return gather(grad, ids, axis=axis), None
    # Dropped (negative) ids get a zero gradient. Written with ops so that a traced
    # tf.function does not bake in the placeholder's values.
    zero = Tensor(np.zeros((), ids._value.dtype))
    g = gather(grad, math_ops.maximum(ids, zero), axis=axis)
    kept = math_ops.cast(math_ops.greater_equal(ids, zero), g.dtype)
    kept = reshape(kept, (1,) * axis + ids._value.shape + (1,) * (g._value.ndim - axis - ids._value.ndim))
    return math_ops.multiply(g, kept), None


def unsorted_segment_sum(data, segment_ids, num_segments, axis=0, name=None):
    """Sums slices of ``data`` into ``num_segments`` rows along ``axis``; ids < 0 are dropped."""
    data, ids = to_tensor(data), to_tensor(segment_ids)
    num_segments = int(num_segments)
    v = ids._value
    if v.dtype.kind not in "iu":
        raise InvalidArgumentError(f"unsorted_segment_sum: segment_ids must be integers, got {ids.dtype.name}")
    if data._value.shape[axis:axis + v.ndim] != v.shape:
        raise InvalidArgumentError(f"unsorted_segment_sum: segment_ids shape {ids.shape} must be a prefix of the data "
                                   f"shape {data.shape}")
    if v.size and v.max() >= num_segments:
        raise InvalidArgumentError(f"unsorted_segment_sum: segment id {int(v.max())} is out of range "
                                   f"[0, {num_segments})")
    return execute("UnsortedSegmentSum", (data, ids), {"num_segments": num_segments, "axis": int(axis)})


@register_batching_rule("Tile")
def _tile_rows(op, batched):
    return tuple(op.attrs["multiples"])[:1] == (1,)


@register_op("Tile")
def _tile_fwd(x, multiples):
    return np.tile(x, multiples)


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    nb = batch_ndim(op, grad)
    x_shape = op.inputs[0]._value.shape
    lead = grad._value.shape[:nb]
    split_shape = lead
    for m, d in zip(op.attrs["multiples"], x_shape):
        split_shape += (m, d)
    axes = [nb + 2 * i for i in range(len(x_shape))]
    return reshape(reduce_sum(reshape(grad, split_shape), axes), lead + x_shape)


def tile(input, multiples, name=None):
    x = to_tensor(input)
    multiples = int_list(multiples)
    if len(multiples) != x._value.ndim:
        raise InvalidArgumentError(f"tile: multiples has length {len(multiples)} but the input has rank {x._value.ndim}")
    return execute("Tile", (x,), {"multiples": multiples})


def repeat(input, repeats, axis=None, name=None):
    x = to_tensor(input)
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    axis = normalize_axis(int(axis), x._value.ndim)
    idx = np.repeat(np.arange(x._value.shape[axis]), np.asarray(repeats))
    return gather(x, Tensor(idx), axis=axis)


def reverse(tensor, axis, name=None):
    x = to_tensor(tensor)
    key = [slice(None)] * x._value.ndim
    for a in axes_tuple(axis, x._value.ndim):
        key[a] = slice(None, None, -1)
    return x[tuple(key)]


# ------------------------------------------------------------------ select ---


# ---------------------------------------------------------------- indexing ---
def _encode_index(item):
    if item is None:
        return ("newaxis",)
    if item is Ellipsis:
        return ("ellipsis",)
    if isinstance(item, slice):
        return ("slice",) + tuple(None if v is None else int(v) for v in (item.start, item.stop, item.step))
    if is_tensor_like(item) or isinstance(item, (np.ndarray, np.generic)):
        value = to_tensor(item)._value if is_tensor_like(item) else np.asarray(item)
        if value.ndim == 0 and value.dtype.kind in "iu":
            return ("int", int(value))
        raise TypeError(
            f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
            f"tensors are valid indices, got a tensor of shape {TensorShape(value.shape)} and dtype "
            f"{dtypes.from_numpy(value.dtype).name}. Use tf.gather or tf.boolean_mask instead.")
    if isinstance(item, (bool, np.bool_)) or not hasattr(item, "__index__"):
        raise TypeError(
            f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
            f"tensors are valid indices, got {item!r}")
    return ("int", int(item))


def _decode_index(code):
    kind = code[0]
    if kind == "int":
        return code[1]
    if kind == "slice":
        return slice(*code[1:])
    return None if kind == "newaxis" else Ellipsis


def _decode_key(key):
    return tuple(_decode_index(c) for c in key)


@register_op("StridedSlice")
def _strided_slice_fwd(x, key):
    try:
        return x[_decode_key(key)]
    except IndexError as err:
        raise InvalidArgumentError(f"slice index out of bounds for a tensor of shape {TensorShape(x.shape)}: {err}") from None
    except ValueError as err:   # e.g. a zero step
        raise InvalidArgumentError(f"invalid slice of a tensor of shape {TensorShape(x.shape)}: {err}") from None


def _key_keeps_axis0(key, ndim, batch):
    """Whether an encoded index leaves axis 0 whole and in front."""
    for k in key:
        if k[0] == "ellipsis":
            return ndim - sum(1 for c in key if c[0] in ("int", "slice")) >= 1
        if k[0] == "slice":
            start, stop, step = k[1:]
            return start in (None, 0) and step in (None, 1) and (stop is None or stop >= batch)
        return False     # an int drops axis 0, a newaxis moves it
    return True


@register_batching_rule("StridedSlice")
def _slice_rows(op, batched):
    shape = op.inputs[0]._value.shape
    return _key_keeps_axis0(op.attrs["key"], len(shape), shape[0])


@register_batching_rule("StridedSliceGrad")
def _slice_grad_rows(op, batched):
    shape = tuple(op.attrs["shape"])
    return op.inputs[0]._value.shape[:1] == shape[:1] and _key_keeps_axis0(op.attrs["key"], len(shape), shape[0])


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    return execute("StridedSliceGrad", (grad,), {"shape": op.inputs[0]._value.shape, "key": op.attrs["key"]})


@register_op("StridedSliceGrad")
def _strided_slice_grad_fwd(grad, shape, key):
    key = _decode_key(key)
    nb = grad.ndim - np.broadcast_to(np.zeros((), np.int8), shape)[key].ndim
    out = np.zeros(grad.shape[:nb] + tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * nb + key] = grad
    return out


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    # Every leading axis beyond the sliced shape (stacked axes of this op's input
    # and of ``grad``) is kept whole.
    lead = grad._value.ndim - len(op.attrs["shape"])
    return _getitem_raw(grad, (slice(None),) * lead + _decode_key(op.attrs["key"]))


def _getitem_raw(x, key):
    return execute("StridedSlice", (x,), {"key": tuple(_encode_index(k) for k in key)})


def getitem(tensor, key):
    x = to_tensor(tensor)
    if type(key) is int:  # the common x[i], encoded directly
        return execute("StridedSlice", (x,), {"key": (("int", key),)})
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) == 1 and (isinstance(key[0], list) or (is_tensor_like(key[0]) and np.ndim(key[0]) > 0)
                          or (isinstance(key[0], np.ndarray) and key[0].ndim > 0)):
        idx = to_tensor(key[0])
        if idx._value.dtype == np.bool_:
            return boolean_mask(x, idx)
        return gather(x, idx)
    if tracing_graph() is not None and any(is_tensor_like(k) for k in key):
        return _getitem_by_tensors(x, key)
    return _getitem_raw(x, key)


# x[key] (math_ops installs the arithmetic operators, which need no indexing).
Tensor.__getitem__ = Variable.__getitem__ = getitem


def _getitem_by_tensors(x, key):
    """``x[key]`` inside a trace where some indices are scalar tensors: their values are only known when
    the graph runs, so those axes are gathered (a negative index counts from the end, as in slicing)."""
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    static, gathers, axis = [], [], 0
    for k in key:
        if is_tensor_like(k):
            k = to_tensor(k)
            if k._value.ndim != 0 or k._value.dtype.kind not in "iu":
                _encode_index(k)   # raises TensorFlow's error for a non-scalar or non-integer index
            static.append(slice(None))
            gathers.append((axis, k))
            axis += 1
        else:
            static.append(k)
            if k is Ellipsis:
                axis += x._value.ndim - consumed
            elif k is None or isinstance(k, slice):
                axis += 1
    y = _getitem_raw(x, tuple(static))
    for axis, k in reversed(gathers):
        size = math_ops.cast(getitem(shape(y), axis), k.dtype)   # the size of each call
        k = math_ops.add(k, math_ops.multiply(math_ops.cast(math_ops.less(k, 0), k.dtype), size))
        y = gather(y, k, axis=axis)
    return y


def slice_(input_, begin, size, name=None):
    """tf.slice."""
    x = to_tensor(input_)
    begin, size = int_list(begin), int_list(size)
    key = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
    return _getitem_raw(x, key)


def strided_slice(input_, begin, end, strides=None, name=None):
    strides = strides or [1] * len(int_list(begin))
    key = tuple(slice(b, e, s) for b, e, s in zip(int_list(begin), int_list(end), int_list(strides)))
    return _getitem_raw(to_tensor(input_), key)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    x = to_tensor(tensor)
    m = np.asarray(to_tensor(mask)._value, dtype=bool)
    axis = 0 if axis is None else normalize_axis(int(axis), x._value.ndim)
    if x._value.shape[axis:axis + m.ndim] != m.shape:
        raise InvalidArgumentError(f"boolean_mask: mask shape {TensorShape(m.shape)} does not match the tensor's "
                                   f"shape {x.shape} at axis {axis}")
    lead = x._value.shape[:axis]
    flat = reshape(x, lead + (-1,) + x._value.shape[axis + m.ndim:])
    if tracing_graph() is not None:   # a Where node: the true positions of each call's mask, not the trace's
        positions = reshape(execute("Where", (reshape(to_tensor(mask), (-1,)),)), (-1,))
        return gather(flat, positions, axis=axis)
    return gather(flat, Tensor(np.flatnonzero(m)), axis=axis)


# ---------------------------------------------------------------- creation ---
def _zeros_array(shape, np_dtype):
    """numpy zeros; a string's zero is the empty string, as in TensorFlow."""
    return np.full(shape, b"", dtype=object) if np_dtype.kind == "O" else np.zeros(shape, dtype=np_dtype)


def zeros(shape, dtype=dtypes.float32, name=None):
    return Tensor(_zeros_array(int_list(shape), dtypes.as_dtype(dtype)._np))


def ones(shape, dtype=dtypes.float32, name=None):
    return Tensor(np.ones(int_list(shape), dtype=dtypes.as_dtype(dtype)._np))


def zeros_like(input, dtype=None, name=None):
    x = to_tensor(input)
    if tracing_graph() is not None:   # shaped as the input is at each call (ops/control_flow_ops.py)
        return execute("ZerosLike", (x,), None if dtype is None else {"dtype": dtypes.as_dtype(dtype).name})
    return Tensor(_zeros_array(x._value.shape, x._value.dtype if dtype is None else dtypes.as_dtype(dtype)._np))


def ones_like(input, dtype=None, name=None):
    x = to_tensor(input)
    if tracing_graph() is not None:
        return execute("OnesLike", (x,), None if dtype is None else {"dtype": dtypes.as_dtype(dtype).name})
    return Tensor(np.ones(x._value.shape, dtype=x._value.dtype if dtype is None else dtypes.as_dtype(dtype)._np))


@register_op("Fill")
def _fill_fwd(value, dims):
    return np.full(dims, value, dtype=value.dtype)


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    nb = batch_ndim(op, grad)
    return reduce_sum(grad, list(range(nb, grad._value.ndim)))


def fill(dims, value, name=None):
    v = to_tensor(value)
    if v._value.ndim != 0:
        raise InvalidArgumentError(f"fill: value must be a scalar, got shape {v.shape}")
    return execute("Fill", (v,), {"dims": int_list(dims)})


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=dtypes.as_dtype(dtype)._np)
    if batch_shape is not None:
        m = np.broadcast_to(m, int_list(batch_shape) + m.shape).copy()
    return Tensor(m)


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """tf.range."""
    if limit is None:
        start, limit = 0, start
    values = [to_tensor(v)._value.item() if is_tensor_like(v) else v for v in (start, limit, delta)]
    if dtype is None:
        is_float = any(isinstance(v, float) for v in values)
        dtype = dtypes.float32 if is_float else dtypes.int32
    if tracing_graph() is not None and any(is_tensor_like(v) for v in (start, limit, delta)):
        # a Range node: the bounds of each call, not the trace's placeholder values
        return execute("Range", tuple(to_tensor(v) for v in (start, limit, delta)),
                       {"dtype": dtypes.as_dtype(dtype).name})
    return Tensor(np.arange(*values, dtype=dtypes.as_dtype(dtype)._np))


def linspace(start, stop, num, name=None, axis=0):
    s, e = to_tensor(start), to_tensor(stop)
    if s._value.dtype.kind != "f":
        s = math_ops.cast(s, dtypes.float32)
    if e._value.dtype != s._value.dtype:
        e = math_ops.cast(e, s.dtype)
    num = int(num)
    # start + (stop - start) * k / (num - 1), written with ops so traced functions stay correct.
    fractions = np.arange(num, dtype=np.float64) / max(num - 1, 1)
    frac = Tensor(fractions.astype(s._value.dtype))
    lead = np.broadcast_shapes(s._value.shape, e._value.shape)
    s, e = broadcast_to(s, lead), broadcast_to(e, lead)
    out = math_ops.add(expand_dims(s, -1), math_ops.multiply(expand_dims(math_ops.subtract(e, s), -1), frac))
    if num:
        out = concat([out[..., :-1], expand_dims(e, -1)], -1) if num > 1 else out   # exact end point
    nd = len(lead) + 1
    axis = normalize_axis(int(axis), nd, op="linspace")
    if axis != nd - 1:
        out = transpose(out, list(range(axis)) + [nd - 1] + list(range(axis, nd - 1)))
    return out


@register_op("OneHot")
def _one_hot_fwd(indices, depth, on_value, off_value, axis, dtype):
    eye_ = np.arange(depth) == indices[..., None]
    out = np.where(eye_, np.asarray(on_value, dtype), np.asarray(off_value, dtype))
    if axis != -1 and axis != out.ndim - 1:
        out = np.moveaxis(out, -1, axis)
    return out


no_gradient("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    idx = to_tensor(indices)
    dt = dtypes.as_dtype(dtype) if dtype is not None else (
        to_tensor(on_value).dtype if on_value is not None else dtypes.float32)
    on = 1 if on_value is None else to_tensor(on_value)._value.item()
    off = 0 if off_value is None else to_tensor(off_value)._value.item()
    return execute("OneHot", (idx,), {"depth": int(depth), "on_value": on, "off_value": off,
                                      "axis": -1 if axis is None else int(axis), "dtype": dt.name})


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids built with reshape and broadcast_to (differentiable, traceable)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [reshape(to_tensor(a), [-1]) for a in args]
    n = len(xs)
    shape = [x._value.shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and n >= 2 and i < 2:
            axis = 1 - i
        view = [1] * n
        view[axis] = x._value.shape[0]
        grids.append(broadcast_to(reshape(x, view), shape))
    return grids


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    lengths = to_tensor(lengths)
    if maxlen is None:
        maxlen = int(lengths._value.max()) if lengths._value.size else 0
    positions = Tensor(np.arange(int(maxlen), dtype=lengths._value.dtype))
    mask = math_ops.less(positions, expand_dims(lengths, -1))
    dtype = dtypes.as_dtype(dtype)
    return mask if dtype.is_bool else math_ops.cast(mask, dtype)


# ---------------------------------------------------- gather_nd / scatter_nd ---
# Both ops index the *trailing* ``core_rank`` / ``shape`` dimensions: extra leading axes on the data
# (stacked cotangents of a jacobian) are carried along, so each op's gradient is the other op.
def _nd_key(indices, lead, batch):
    """The numpy index of ``data[lead..., batch coordinates..., indices[..., 0], indices[..., 1], ...]``."""
    points = indices.shape[:-1]
    coords = [np.broadcast_to(np.arange(n).reshape((1,) * j + (n,) + (1,) * (len(points) - j - 1)), points)
              for j, n in enumerate(batch)]
    coords += [indices[..., i] for i in range(indices.shape[-1])]
    return (slice(None),) * lead + tuple(coords)


def _check_nd_indices(indices, core, skip, what, op):
    """Each index vector must lie inside ``core[skip:skip + depth]``."""
    depth = indices.shape[-1]
    bounds = np.array(core[skip:skip + depth], dtype=np.int64)
    bad = np.argwhere(((indices < 0) | (indices >= bounds)).any(axis=-1)) if indices.size else []
    if len(bad):
        where_ = "".join(f"[{int(i)}]" for i in bad[0])
        raise InvalidArgumentError(f"{what}: indices{where_} = {indices[tuple(bad[0])].tolist()} does not index into "
                                   f"{'param ' if op == 'GatherNd' else ''}shape {list(core)} [Op:{op}]")


@register_op("GatherNd", pure=True)
def _gather_nd_fwd(params, indices, batch_dims, core_rank):
    lead = params.ndim - core_rank
    core = params.shape[lead:]
    if lead < 0 or indices.ndim <= batch_dims or indices.shape[-1] > core_rank - batch_dims \
            or indices.shape[:batch_dims] != core[:batch_dims]:
        raise InvalidArgumentError(f"gather_nd: indices of shape {list(indices.shape)} with batch_dims={batch_dims} "
                                   f"do not fit params of shape {list(core)} [Op:GatherNd]")
    _check_nd_indices(indices, core, batch_dims, "gather_nd", "GatherNd")
    points = indices.shape[:-1]
    if batch_dims + indices.shape[-1] == 0:     # depth 0: every index picks the whole of params
        out = params.reshape(params.shape[:lead] + (1,) * len(points) + core)
        return np.array(np.broadcast_to(out, params.shape[:lead] + points + core))
    out = params[_nd_key(indices, lead, core[:batch_dims])]
    return out if points else np.array(out)     # a single index vector is basic indexing: a view


@register_batching_rule("GatherNd")
def _gather_nd_rows(op, batched):
    """Rows stay independent when axis 0 of params is a carried leading axis or a batch dimension."""
    params = op.inputs[0]
    lead = params._value.ndim - op.attrs["core_rank"]
    return (batched[0] and not batched[1] and (lead > 0 or op.attrs["batch_dims"] > 0)
            and op.outputs[0]._value.shape[:1] == params._value.shape[:1])


def _batch_coordinates(indices, batch):
    """``indices`` with the coordinates of its batch dimensions prepended to each index vector."""
    points = indices._value.shape[:-1]
    grids = np.meshgrid(*[np.arange(n) for n in batch], indexing="ij")
    coords = np.stack([np.broadcast_to(g.reshape(batch + (1,) * (len(points) - len(batch))), points)
                       for g in grids], -1).astype(indices._value.dtype)
    return concat([Tensor(coords), indices], -1)


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    nb = batch_ndim(op, grad)
    core = params._value.shape[params._value.ndim - op.attrs["core_rank"]:]
    b = op.attrs["batch_dims"]
    full = _batch_coordinates(indices, core[:b]) if b else indices
    if full._value.shape[-1] == 0:              # depth 0: each index point took all of params
        points = indices._value.ndim - 1
        g = reduce_sum(grad, list(range(grad._value.ndim - len(core) - points, grad._value.ndim - len(core))))
    else:
        g = execute("ScatterNd", (full, grad), {"shape": tuple(core)})
    return sum_to(g, params._value.shape, nb), None


def _index_tensor(indices, what):
    indices = to_tensor(indices)
    if indices._value.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{what}: indices must be integers, got {indices.dtype.name}")
    if indices._value.ndim == 0:
        raise InvalidArgumentError(f"{what}: indices must be at least a vector, got a scalar")
    return indices


def gather_nd(params, indices, batch_dims=0, name=None):
    """tf.gather_nd: ``indices[..., :K]`` index the K dimensions of ``params`` after its first ``batch_dims``
    (which ``indices`` shares); the result has shape ``indices.shape[:-1] + params.shape[batch_dims + K:]``."""
    params, indices = to_tensor(params), _index_tensor(indices, "gather_nd")
    if is_tensor_like(batch_dims):
        batch_dims = to_tensor(batch_dims)._value.item()
    b = int(batch_dims)
    ps, ids = params._value.shape, indices._value.shape
    if b < 0:
        raise ValueError("gather_nd: negative batch_dims is not allowed")
    if b >= len(ids) or b >= len(ps):
        raise ValueError(f"gather_nd: batch_dims={b} must be less than rank(indices)={len(ids)} and "
                         f"rank(params)={len(ps)}")
    if ids[:b] != ps[:b]:
        raise InvalidArgumentError(f"gather_nd: the first batch_dims={b} dimensions of params {params.shape} and "
                                   f"indices {indices.shape} must be equal")
    if ids[-1] > len(ps) - b:
        raise InvalidArgumentError(f"gather_nd: index depth {ids[-1]} is larger than the rank {len(ps) - b} of params "
                                   f"{params.shape} after its {b} batch dimensions" if b else
                                   f"gather_nd: index depth {ids[-1]} is larger than the rank {len(ps)} of params "
                                   f"{params.shape}")
    return execute("GatherNd", (params, indices), {"batch_dims": b, "core_rank": len(ps)})


@register_op("ScatterNd", pure=True)
def _scatter_nd_fwd(indices, updates, shape):
    shape = tuple(shape)
    depth = indices.shape[-1]
    item = indices.shape[:-1] + shape[depth:]
    lead = updates.ndim - len(item)
    if depth == 0 or depth > len(shape) or lead < 0 or updates.shape[lead:] != item:
        raise InvalidArgumentError(f"scatter_nd: updates of shape {list(updates.shape)} do not fit indices of shape "
                                   f"{list(indices.shape)} into shape {list(shape)} [Op:ScatterNd]")
    _check_nd_indices(indices, shape, 0, "scatter_nd", "ScatterNd")
    out_shape = updates.shape[:lead] + shape
    out = np.full(out_shape, b"", object) if updates.dtype == object else np.zeros(out_shape, updates.dtype)
    np.add.at(out, _nd_key(indices, lead, ()), updates)   # in order: repeated indices add up as TensorFlow's CPU kernel
    return out


@register_batching_rule("ScatterNd")
def _scatter_nd_rows(op, batched):
    """Rows stay independent when axis 0 of updates is a carried leading axis."""
    indices, updates = op.inputs
    lead = updates._value.ndim - (indices._value.ndim - 1 + len(op.attrs["shape"]) - indices._value.shape[-1])
    return batched[1] and lead > 0


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return None, execute("GatherNd", (grad, op.inputs[0]), {"batch_dims": 0, "core_rank": len(op.attrs["shape"])})


def scatter_nd(indices, updates, shape, name=None):
    """tf.scatter_nd: a tensor of ``shape`` holding zeros, with ``updates[i]`` added at ``indices[i]``
    (repeated indices add up)."""
    indices = _index_tensor(indices, "scatter_nd")
    updates = to_tensor(updates)
    dims = int_list(shape)
    ids = indices._value.shape
    if min(dims, default=0) < 0:
        raise InvalidArgumentError(f"scatter_nd: shape must be non-negative, got {list(dims)}")
    if not 1 <= ids[-1] <= len(dims):
        raise InvalidArgumentError(f"scatter_nd: index depth {ids[-1]} must be between 1 and the rank {len(dims)} "
                                   f"of shape {list(dims)}")
    expected = ids[:-1] + dims[ids[-1]:]
    if updates._value.shape != expected:
        raise InvalidArgumentError(f"scatter_nd: updates must have shape {TensorShape(expected)} for indices "
                                   f"{indices.shape} into shape {list(dims)}, got {updates.shape} [Op:ScatterNd]")
    return execute("ScatterNd", (indices, updates), {"shape": dims})


@register_op("ArgSort")
def _argsort_fwd(x, axis, descending):
    # Stable: equal values keep their order (TensorFlow's top_k also prefers the lower index).
    if descending:
        return (x.shape[axis] - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)).astype(np.int32)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int32)


no_gradient("ArgSort")


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    x = to_tensor(values)
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"argsort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    axis = normalize_axis(int(axis), x._value.ndim, op="argsort")
    return execute("ArgSort", (x,), {"axis": axis, "descending": direction == "DESCENDING"})


def take_along_axis(x, indices, axis):
    """x values at ``indices`` along ``axis`` (same rank), differentiable in x."""
    x, indices = to_tensor(x), to_tensor(indices)
    nd = x._value.ndim
    axis = normalize_axis(int(axis), nd, op="take_along_axis")
    last = nd - 1
    if axis != last:
        perm = list(range(nd))
        perm[axis], perm[last] = perm[last], perm[axis]
        x, indices = transpose(x, perm), transpose(indices, perm)
    out = gather(x, indices, axis=last, batch_dims=last) if last else gather(x, indices)
    return transpose(out, perm) if axis != last else out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """tf.sort: values sorted along ``axis``; the gradient flows back to the original positions."""
    return take_along_axis(values, argsort(values, axis, direction), axis)
