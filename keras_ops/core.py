"""``keras.ops.core``: conversion, casts, control flow, loops over a leading axis, scatter and slice updates.

``cond``, ``switch``, ``while_loop`` and ``fori_loop`` are tf.cond, tf.switch_case and
tf.while_loop: Python when eager, If/While nodes that decide at each call inside a
traced function. ``scan``, ``map`` and ``vectorized_map`` loop in Python over a
leading axis, whose length is static, so a trace unrolls them exactly.
"""
import builtins

import numpy as np

from tapeflow import custom_gradient  # noqa: F401  (tf.custom_gradient: grad_fn(upstream) as Keras calls it)
from tapeflow.framework import nest
from tapeflow import control_flow, executing_eagerly
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R
from tapeflow.ops import update_ops as U
from tapeflow.ops.common import normalize_axis

from .dtypes import cast, convert, promote, standardize_dtype  # noqa: F401  (cast is keras.ops.cast)
from .dtypes import is_tensor as _is_tensor
from .keras_tensor import KerasTensor
from .symbolic import records_operations



def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    if sparse or ragged:
        raise ValueError("convert_to_tensor: sparse and ragged tensors are not supported by tapeflow")
    return convert(x, dtype)


def convert_to_numpy(x):
    return np.array(x.numpy()) if _is_tensor(x) else np.asarray(x)


def is_tensor(x):
    return _is_tensor(x)


def shape(x):
    """The shape as a tuple: ints where static; inside a traced step whose batch dimension is unknown, that
    dimension as a scalar tensor of the run's value (as Keras on TensorFlow gives ``tf.shape(x)[i]``), so
    ``ops.shape(x)[0]`` can size new tensors. A KerasTensor's unknown dimensions stay None."""
    if not hasattr(x, "shape"):
        return tuple(np.shape(x))
    static = tuple(x.shape)
    if None not in static or isinstance(x, KerasTensor):
        return static
    dynamic = A.shape(x)
    return tuple(dynamic[i] if d is None else d for i, d in enumerate(static))


def dtype(x):
    """The Keras dtype name of ``x`` (``"float32"``, ``"int32"``, ...)."""
    return standardize_dtype(x.dtype) if hasattr(x, "dtype") else convert(x).dtype.name


def saturate_cast(x, dtype):
    """A cast that clamps values to the target dtype's range first (no integer wrap-around)."""
    return M.saturate_cast(convert(x), standardize_dtype(dtype))


def stop_gradient(variable):
    return A.stop_gradient(convert(variable))


def unstack(x, num=None, axis=0):
    return A.unstack(convert(x), num=num, axis=axis)


# ------------------------------------------------------------ control flow ---
def cond(pred, true_fn, false_fn):
    return control_flow.cond(pred, true_fn, false_fn)


def switch(index, branches, *operands):
    """``branches[index](*operands)``, with the index clamped to the valid range."""
    if not branches:
        raise ValueError("switch: `branches` must not be empty")
    index = M.minimum(M.maximum(convert(index, "int32"), 0), len(branches) - 1)
    return control_flow.switch_case(index, [lambda b=b: b(*operands) for b in branches])


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Runs ``body`` while ``cond`` holds; a tuple or list of loop variables is unpacked into both."""
    is_sequence = isinstance(loop_vars, (tuple, list))
    state = tuple(loop_vars) if is_sequence else (loop_vars,)
    count = len(state)

    def step(*args):
        out = body(*args)
        out = tuple(out) if is_sequence else (out,)
        if len(out) != count:
            raise ValueError(f"while_loop: `body` returned {len(out)} values for {count} loop variables; "
                             f"it must return as many as it receives")
        return out
    state = control_flow.while_loop(cond, step, state, maximum_iterations=maximum_iterations)
    return tuple(state) if is_sequence else state[0]


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for i in [lower, upper) (i is an int32 scalar tensor)."""
    if executing_eagerly() or not any(_is_tensor(b) for b in (lower, upper)):
        value = init_val
        for i in range(int(convert(lower)), int(convert(upper))):
            value = body_fun(convert(i, "int32"), value)
        return value
    upper = convert(upper, "int32")
    _, value = control_flow.while_loop(lambda i, v: M.less(i, upper), lambda i, v: (M.add(i, 1), body_fun(i, v)),
                                       (convert(lower, "int32"), init_val))
    return value


def _leading_slices(xs, name):
    leaves = [convert(leaf) for leaf in nest.flatten(xs)]
    if not leaves:
        raise ValueError(f"{name}: no tensors to iterate over")
    lengths = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    if None in lengths or len(lengths) != 1:
        raise ValueError(f"{name}: every input must have the same leading dimension, received shapes "
                         f"{[tuple(leaf.shape) for leaf in leaves]}")
    return leaves, lengths.pop()


def _stack_outputs(outputs, name):
    if not outputs:
        raise ValueError(f"{name}: no iteration ran, so the shape of the stacked outputs is unknown")
    first = outputs[0]
    flat = [nest.flatten(o) for o in outputs]
    stacked = [None if column[0] is None else A.stack(promote(*column)) for column in zip(*flat)]
    return nest.pack_sequence_as(first, stacked)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs`` (or ``length`` times with x None);
    returns the final carry and the stacked ys."""
    if xs is None:
        if length is None:
            raise ValueError("scan: give `xs` or `length`")
        steps, pick = int(length), (lambda i: None)
    else:
        leaves, steps = _leading_slices(xs, "scan")
        if length is not None and int(length) != steps:
            raise ValueError(f"scan: `length` {length} does not match the leading dimension {steps} of `xs`")
        pick = lambda i: nest.pack_sequence_as(xs, [leaf[i] for leaf in leaves])  # noqa: E731
    carry, ys = init, []
    for i in (range(steps - 1, -1, -1) if reverse else range(steps)):
        carry, y = f(carry, pick(i))
        ys.append(y)
    if reverse:
        ys.reverse()
    if all(y is None for y in ys):
        return carry, None
    return carry, _stack_outputs(ys, "scan")


def associative_scan(f, elems, reverse=False, axis=0):
    """Running ``f``-reductions along ``axis``: out[i] = f(out[i-1], elems[i]) (from the end with
    ``reverse``). ``f`` is applied to slices that keep the axis (size 1), as Keras requires."""
    leaves = [convert(leaf) for leaf in nest.flatten(elems)]
    axis = normalize_axis(int(axis), leaves[0].ndim, op="associative_scan")
    n = leaves[0].shape[axis]
    if any(leaf.shape[axis] != n for leaf in leaves):
        raise ValueError("associative_scan: every element must have the same size along `axis`")

    def piece(i):
        key = (builtins.slice(None),) * axis + (builtins.slice(i, i + 1),)
        return nest.pack_sequence_as(elems, [leaf[key] for leaf in leaves])

    order = range(n - 1, -1, -1) if reverse else range(n)
    outputs, acc = [], None
    for i in order:
        acc = piece(i) if acc is None else f(acc, piece(i))
        outputs.append(acc)
    if reverse:
        outputs.reverse()
    columns = zip(*[nest.flatten(o) for o in outputs])
    return nest.pack_sequence_as(elems, [A.concat(list(c), axis) for c in columns])


def map(f, xs):  # noqa: A001 - Keras's public name
    """``f`` applied to each slice along the leading axis of ``xs`` (nested structures allowed)."""
    leaves, steps = _leading_slices(xs, "map")
    return _stack_outputs([f(nest.pack_sequence_as(xs, [leaf[i] for leaf in leaves])) for i in range(steps)], "map")


def vectorized_map(function, elements):
    """``map`` (a loop over the leading axis: exact, not vectorized)."""
    return map(function, elements)


# -------------------------------------------------------- scatter / slices ---
def scatter(indices, values, shape):
    """A zero tensor of ``shape`` with ``values`` added at ``indices`` (repeated indices accumulate)."""
    indices, values = convert(indices), convert(values)
    dims = tuple(int(d) for d in shape)
    if not indices.dtype.is_integer or indices.ndim < 1 or indices.shape[-1] > len(dims):
        raise ValueError(f"scatter: indices must be integers of shape [..., K] with K <= {len(dims)}, received "
                         f"{tuple(indices.shape)} of {indices.dtype.name}")
    k = indices.shape[-1]
    expected = tuple(indices.shape[:-1]) + dims[k:]
    if tuple(values.shape) != expected:
        raise ValueError(f"scatter: values must have shape {expected} for indices {tuple(indices.shape)} into "
                         f"shape {dims}, received {tuple(values.shape)}")
    if executing_eagerly():
        ids = indices.numpy()
        bad = np.argwhere((ids < 0) | (ids >= np.array(dims[:k], dtype=np.int64)))
        if bad.size:
            raise ValueError(f"scatter: indices{''.join(f'[{int(i)}]' for i in bad[0][:-1])} = "
                             f"{ids[tuple(bad[0][:-1])].tolist()} is outside a tensor of shape {dims}")
    strides = np.array([int(np.prod(dims[i + 1:k], dtype=np.int64)) for i in range(k)], dtype=np.int64)
    linear = R.reduce_sum(M.multiply(M.cast(indices, "int64"), convert(strides)), -1)
    count = int(np.prod(dims[:k], dtype=np.int64))
    flat_values = A.reshape(values, (-1,) + dims[k:])
    summed = A.unsorted_segment_sum(flat_values, A.reshape(linear, [-1]), count)
    return A.reshape(summed, dims)


def scatter_update(inputs, indices, updates):
    """A copy of ``inputs`` with ``inputs[indices[i]] = updates[i]``."""
    inputs = convert(inputs)
    return U.tensor_scatter_update(inputs, convert(indices), convert(updates, inputs.dtype.name))


def slice(inputs, start_indices, shape):  # noqa: A001 - Keras's public name
    """``inputs[start:start + shape]`` on every axis; a size of -1 takes the rest of the axis."""
    inputs = convert(inputs)
    start = convert(start_indices)
    sizes = [int(s) for s in shape]
    if -1 in sizes:
        begin = start.numpy().reshape(-1).tolist()
        sizes = [d - b if s == -1 else s for s, b, d in zip(sizes, begin, inputs.shape)]
    return U.dynamic_slice(inputs, start, sizes)


def slice_update(inputs, start_indices, updates):
    inputs = convert(inputs)
    return U.dynamic_update_slice(inputs, convert(updates, inputs.dtype.name), convert(start_indices))


__all__ = ["associative_scan", "cast", "cond", "convert_to_numpy", "convert_to_tensor", "custom_gradient", "dtype",
           "fori_loop", "is_tensor", "map", "saturate_cast", "scan", "scatter", "scatter_update", "shape", "slice",
           "slice_update", "stop_gradient", "switch", "unstack", "vectorized_map", "while_loop"]


# called on KerasTensors: graph operations
records_operations(globals(), "keras.src.ops.core", only=("cast", "slice", "slice_update", "stop_gradient", "unstack"))
