"""tf.TensorArray: a list of same-shaped tensors that loops write one element at a time.

It is carried by one tensor, its buffer ``[size, *element_shape]``, so it passes
through ``while_loop`` (and AutoGraph loops) as a loop variable, and every
method is an op: ``write`` is ``TensorListWrite`` (a new buffer with one row
replaced, grown first when ``dynamic_size``), ``read`` and ``gather`` are
gathers. Until the first write the element shape may be unknown: the buffer
then has no elements (``[size, 0]``) and the first write gives it its shape.
"""
import numpy as np

from .framework import dtypes
from .framework.conversion import convert_to_tensor
from .framework.errors import InvalidArgumentError
from .framework.recording import execute, register_op
from .framework.registry import RegisterGradient, no_gradient
from .framework.tensor_shape import TensorShape
from .ops import array_ops


def _write_index(buffer, index, value, dynamic_size):
    i = int(index)
    n = buffer.shape[0]
    if value.dtype != buffer.dtype:
        raise InvalidArgumentError(f"TensorArray dtype is {buffer.dtype.name} but Op is trying to write dtype "
                                   f"{value.dtype.name}")
    if i < 0:
        raise InvalidArgumentError(f"Tried to write to index {i} but the index is negative")
    if i >= n and not dynamic_size:
        raise InvalidArgumentError(f"Tried to write to index {i} but array is not resizeable and size is: {n}")
    if buffer.shape[1:] != value.shape and buffer.size:
        raise InvalidArgumentError(f"Could not write to TensorArray index {i} because the value shape is "
                                   f"{list(value.shape)} which is incompatible with the TensorArray's inferred "
                                   f"element shape: {list(buffer.shape[1:])}")
    return i


@register_op("TensorListReserve")
def _reserve_fwd(size, dtype, element_shape):
    rows = int(size)
    if rows < 0:
        raise InvalidArgumentError(f"TensorArray size must be non-negative, got {rows}")
    return np.zeros((rows,) + tuple(element_shape), dtypes.as_dtype(dtype)._np)


no_gradient("TensorListReserve")


@register_op("TensorListReserveLike")
def _reserve_like_fwd(size, like):
    """Zeros ``[size, *like.shape]``: room for ``size`` values shaped as ``like`` when the graph runs."""
    return np.zeros((int(size),) + like.shape, like.dtype)


no_gradient("TensorListReserveLike")


def reserve_like(size, like):
    return execute("TensorListReserveLike", (convert_to_tensor(size, dtype="int32"), like))


def write_row(buffer, index, value):
    return execute("TensorListWrite", (buffer, convert_to_tensor(index, dtype="int32"), value))


def _write_at_trace(buffer, index, value, dynamic_size=False):
    """While tracing the index is a placeholder: the buffer keeps its rows and takes the value's shape."""
    if buffer.shape[1:] != value.shape and buffer.size:
        _write_index(buffer, 0, value, True)   # the element shapes disagree: TensorFlow's error
    return np.zeros(buffer.shape[:1] + value.shape, buffer.dtype)


@register_op("TensorListWrite", at_trace=_write_at_trace)
def _write_fwd(buffer, index, value, dynamic_size=False):
    i = _write_index(buffer, index, value, dynamic_size)
    rows = max(buffer.shape[0], i + 1)
    if buffer.shape[1:] == value.shape:
        out = np.zeros((rows,) + value.shape, buffer.dtype)
        out[:buffer.shape[0]] = buffer
    else:   # the first write gives the (empty) buffer its element shape
        out = np.zeros((rows,) + value.shape, buffer.dtype)
    out[i] = value
    return out


@register_op("TensorListWriteGrad")
def _write_grad_fwd(grad, buffer, index):
    """The cotangent of the written-to buffer: ``grad`` without the written row, cut to the buffer."""
    out = np.zeros(buffer.shape, grad.dtype)
    if buffer.shape[1:] == grad.shape[1:]:
        out[:] = grad[:buffer.shape[0]]
        if int(index) < buffer.shape[0]:
            out[int(index)] = 0
    return out


@register_op("TensorListWriteGradAdjoint")
def _write_grad_adjoint_fwd(u, grad, index):
    """The adjoint of TensorListWriteGrad in its first argument: ``u`` padded to ``grad``'s shape."""
    out = np.zeros(grad.shape, u.dtype)
    if u.shape[1:] == grad.shape[1:]:
        out[:u.shape[0]] = u
        if int(index) < u.shape[0]:
            out[int(index)] = 0
    return out


@RegisterGradient("TensorListWrite")
def _write_grad(op, grad):
    buffer, index, value = op.inputs
    return execute("TensorListWriteGrad", (grad, buffer, index)), None, execute("TensorListGetItem", (grad, index))


@RegisterGradient("TensorListWriteGrad")
def _write_grad_grad(op, g):
    return execute("TensorListWriteGradAdjoint", (g, op.inputs[0], op.inputs[2])), None, None


@RegisterGradient("TensorListWriteGradAdjoint")
def _write_grad_adjoint_grad(op, g):
    return execute("TensorListWriteGrad", (g, op.inputs[0], op.inputs[2])), None, None


# Rows of a buffer whose number of rows is only known when the graph runs (a loop's history, a
# TensorArray): these ops, and their gradients, take every shape from their inputs at run time.
def _row(index, rows):
    i = int(index)
    if not -rows <= i < rows:
        raise InvalidArgumentError(f"Tried to read from index {i} but array size is: {rows}")
    return i


@register_op("TensorListGetItem", at_trace=lambda buffer, index: np.zeros(buffer.shape[1:], buffer.dtype))
def _get_item_fwd(buffer, index):
    return buffer[_row(index, buffer.shape[0])]


@register_op("TensorListSetItemGrad", at_trace=lambda value, like, index: np.zeros(like.shape, value.dtype))
def _set_item_grad_fwd(value, like, index):
    """Zeros shaped as ``like`` with row ``index`` set to ``value`` (TensorListGetItem's gradient)."""
    out = np.zeros(like.shape, value.dtype)
    out[_row(index, like.shape[0])] = value
    return out


@RegisterGradient("TensorListGetItem")
def _get_item_grad(op, grad):
    buffer, index = op.inputs
    return execute("TensorListSetItemGrad", (grad, buffer, index)), None


@RegisterGradient("TensorListSetItemGrad")
def _set_item_grad_grad(op, grad):
    return execute("TensorListGetItem", (grad, op.inputs[2])), None, None


def get_item(buffer, index):
    return execute("TensorListGetItem", (buffer, convert_to_tensor(index, dtype="int32")))


class TensorArray:
    """``tf.TensorArray``; methods return new TensorArrays (``ta = ta.write(i, x)``)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = TensorShape(element_shape) if element_shape is not None else TensorShape(None)
        if flow is not None:
            self._buffer = convert_to_tensor(flow)
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        known = self._element_shape.rank is not None and None not in self._element_shape.dims
        tail = list(self._element_shape.as_list()) if known else [0]
        self._buffer = execute("TensorListReserve", (convert_to_tensor(size, dtype="int32"),),
                               {"dtype": self._dtype.name, "element_shape": tail})

    def _flow(self):
        return [self._buffer]

    def _rebuilt(self, flat):
        return self._with(next(flat))

    def _with(self, buffer):
        out = TensorArray.__new__(TensorArray)
        out._dtype, out._dynamic_size, out._infer_shape = self._dtype, self._dynamic_size, self._infer_shape
        out._element_shape = self._element_shape
        out._buffer = buffer
        return out

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def flow(self):
        return self._buffer

    @property
    def element_shape(self):
        shape = self._buffer.shape
        if shape.rank is not None and self._buffer._value.size:
            return TensorShape(shape.as_list()[1:])
        return self._element_shape

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        index = convert_to_tensor(index, dtype="int32")
        return self._with(execute("TensorListWrite", (self._buffer, index, value),
                                  {"dynamic_size": True} if self._dynamic_size else None))

    def read(self, index, name=None):
        return get_item(self._buffer, index)

    def gather(self, indices, name=None):
        return array_ops.gather(self._buffer, convert_to_tensor(indices, dtype="int32"))

    def stack(self, name=None):
        return array_ops.identity(self._buffer)

    def concat(self, name=None):
        shape = self._buffer.shape.as_list()
        return array_ops.reshape(self._buffer, [-1] + shape[2:])

    def unstack(self, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        return self._with(value)

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        out = self
        for k, i in enumerate(convert_to_tensor(indices)._value.tolist()):
            out = out.write(i, value[k])
        return out

    def size(self, name=None):
        return array_ops.shape(self._buffer)[0]

    def identity(self):
        return self._with(self._buffer)

    def mark_used(self):
        pass

    def close(self, name=None):
        pass

    def __repr__(self):
        return f"<tf.TensorArray dtype={self._dtype.name} size={self._buffer.shape[0]}>"

