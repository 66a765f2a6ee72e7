"""Reductions (mean, max, min, prod, logsumexp, norm, argmax, ...); reduce_sum and sum_to, which every op family's
gradients need, live in core_ops and are re-exported here."""
import numpy as np

from ..framework import dtypes
from ..framework.batching import axis_attr_not_0, declare, reduction
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from . import array_ops, math_ops
from .core_ops import (broadcast_back, kept_shape, reduce_along, reduce_sum,  # noqa: F401  (sum_to re-exported)
                       same_int_dtype, sum_to)
from .common import RegisterGradient, axes_tuple, batch_ndim, execute, no_gradient, register_op, to_tensor


declare(reduction, "Mean", "Max", "Min", "Prod")
declare(axis_attr_not_0("axis"), "Cumsum")


_NATIVE_MEAN = (np.dtype(np.float32), np.dtype(np.float64))


@register_op("Mean")
def _mean_fwd(x, axes, keepdims):
    if x.dtype.kind in "iu":
        # Integer mean: the sum divided by the count, truncated toward zero (C integer division).
        total = np.sum(x, axis=axes, keepdims=keepdims)
        count = max(1, int(np.prod([x.shape[a] for a in axes])))
        quotient = np.abs(total) // count
        return np.where(total < 0, -quotient, quotient).astype(x.dtype)
    if x.dtype in _NATIVE_MEAN and axes:
        # np.mean's own arithmetic without its Python wrappers: a sum in the input's dtype,
        # divided by the integer count in float64 and rounded back. float16 and other
        # dtypes keep np.mean's wider accumulator.
        count = np.intp(1)
        for a in axes:
            count *= x.shape[a]
        total = np.add.reduce(x, axis=axes, keepdims=keepdims)
        if type(total) is np.ndarray:
            return np.true_divide(total, count, out=total, casting="unsafe")
        return x.dtype.type(total / count)
    return np.mean(x, axis=axes, keepdims=keepdims)


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    g, _ = broadcast_back(op, grad)
    x_shape = op.inputs[0]._value.shape
    count = int(np.prod([x_shape[a] for a in op.attrs["axes"]]))
    return math_ops.divide(g, Tensor(np.array(max(count, 1), g._value.dtype)))


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_along("Mean", input_tensor, axis, keepdims)


def _min_or_max_grad(op, grad):
    """Gradient flows to every element equal to the extremum, split evenly among ties."""
    g, nb = broadcast_back(op, grad)
    x = op.inputs[0]
    y = op.outputs[0]
    y_b = array_ops.reshape(y, kept_shape(x._value.shape, op.attrs["axes"]))
    hits = math_ops.cast(math_ops.equal(x, y_b), g.dtype)
    count = reduce_sum(hits, op.attrs["axes"], keepdims=True)
    return math_ops.multiply(math_ops.divide(hits, count), g)


@register_op("Max")
def _max_fwd(x, axes, keepdims):
    if x.size == 0:
        raise InvalidArgumentError("reduce_max of an empty tensor is undefined")
    return np.max(x, axis=axes, keepdims=keepdims)


RegisterGradient("Max")(_min_or_max_grad)


@register_op("Min")
def _min_fwd(x, axes, keepdims):
    if x.size == 0:
        raise InvalidArgumentError("reduce_min of an empty tensor is undefined")
    return np.min(x, axis=axes, keepdims=keepdims)


RegisterGradient("Min")(_min_or_max_grad)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_along("Max", input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_along("Min", input_tensor, axis, keepdims)


@register_op("Prod")
def _prod_fwd(x, axes, keepdims):
    return np.prod(x, axis=axes, keepdims=keepdims, dtype=same_int_dtype(x))


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    g, _ = broadcast_back(op, grad)
    x = op.inputs[0]
    axes = op.attrs["axes"]
    if np.all(x._value != 0):
        y = array_ops.reshape(op.outputs[0], kept_shape(x._value.shape, axes))
        return math_ops.multiply(g, math_ops.divide(y, x))
    return math_ops.multiply(g, _prod_of_others(x, axes))


def _prod_of_others(x, axes):
    """For each element, the product of the other elements of its reduction group (exact with zeros)."""
    nd = x._value.ndim
    kept = [a for a in range(nd) if a not in axes]
    perm = kept + list(axes)
    xt = array_ops.transpose(x, perm)
    kept_shape = tuple(x._value.shape[a] for a in kept)
    n = int(np.prod([x._value.shape[a] for a in axes]))
    flat = array_ops.reshape(xt, kept_shape + (n,))
    expanded = array_ops.broadcast_to(array_ops.expand_dims(flat, -2), kept_shape + (n, n))
    eye = Tensor(np.eye(n, dtype=bool))
    others = reduce_prod(array_ops.where(eye, Tensor(np.ones((), x._value.dtype)), expanded), -1)
    back = array_ops.reshape(others, tuple(xt._value.shape))
    return array_ops.transpose(back, np.argsort(perm).tolist())


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    return reduce_along("Prod", input_tensor, axis, keepdims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    x = to_tensor(input_tensor)
    axes = axes_tuple(axis, x._value.ndim, op="reduce_logsumexp")
    m = array_ops.stop_gradient(reduce_max(x, axes, keepdims=True))
    m = array_ops.where(math_ops.is_finite(m), m, math_ops.zeros_like_(m))
    out = math_ops.add(math_ops.log(reduce_sum(math_ops.exp(math_ops.subtract(x, m)), axes, keepdims=True)), m)
    return out if keepdims else array_ops.reshape(out, tuple(d for i, d in enumerate(x._value.shape) if i not in axes))


@register_op("Any")
def _any_fwd(x, axes, keepdims):
    return np.any(x, axis=axes, keepdims=keepdims)


@register_op("All")
def _all_fwd(x, axes, keepdims):
    return np.all(x, axis=axes, keepdims=keepdims)


no_gradient("Any")
no_gradient("All")


def _boolreduce_along(op_type, name, x, axis, keepdims):
    x = to_tensor(x)
    if x._value.dtype != np.bool_:
        raise InvalidArgumentError(f"{name}: expected a bool tensor, got {x.dtype.name}")
    return execute(op_type, (x,), {"axes": axes_tuple(axis, x._value.ndim, op=name), "keepdims": bool(keepdims)})


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    return _boolreduce_along("Any", "reduce_any", input_tensor, axis, keepdims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    return _boolreduce_along("All", "reduce_all", input_tensor, axis, keepdims)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    x = to_tensor(input_tensor)
    mean = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(math_ops.squared_difference(x, mean), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return math_ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def count_nonzero(input, axis=None, keepdims=False, dtype=dtypes.int64, name=None):
    x = to_tensor(input)
    nonzero = math_ops.not_equal(x, Tensor(np.zeros((), x._value.dtype))) if x._value.dtype != np.bool_ else x
    return reduce_sum(math_ops.cast(nonzero, dtype), axis, keepdims=keepdims)


@register_op("ArgMax")
def _argmax_fwd(x, axis, output_type):
    return np.argmax(x, axis=axis).astype(dtypes.as_dtype(output_type)._np)


@register_op("ArgMin")
def _argmin_fwd(x, axis, output_type):
    return np.argmin(x, axis=axis).astype(dtypes.as_dtype(output_type)._np)


no_gradient("ArgMax")
no_gradient("ArgMin")


def _single_axis(axis, ndim, op):
    axes = axes_tuple(axis, ndim, op=op)
    if len(axes) != 1:
        raise InvalidArgumentError(f"{op}: axis must be a single integer, got {axis!r}")
    return axes[0]


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    x = to_tensor(input)
    axis = _single_axis(0 if axis is None else axis, x._value.ndim, "argmax")
    return execute("ArgMax", (x,), {"axis": axis, "output_type": dtypes.as_dtype(output_type).name})


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    x = to_tensor(input)
    axis = _single_axis(0 if axis is None else axis, x._value.ndim, "argmin")
    return execute("ArgMin", (x,), {"axis": axis, "output_type": dtypes.as_dtype(output_type).name})


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """tf.norm: vector norms ('euclidean', 1, 2, np.inf, any p > 0) over one axis or all of them, and
    matrix norms ('euclidean'/'fro', 1, 2, np.inf) over a pair of axes.

    As in TensorFlow the euclidean norm has an infinite/NaN gradient at zero.
    """
    x = to_tensor(tensor)
    keepdims = bool(keepdims)
    nd = x._value.ndim
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise ValueError(f"norm: 'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis!r}")
    if ord == "fro" and not (is_matrix or axis is None):
        raise ValueError(f"norm: ord='fro' needs a matrix: pass axis as a pair of axes, got {axis!r}")
    if ord in ("euclidean", "fro") or (ord == 2 and not is_matrix):
        sq = math_ops.real(math_ops.multiply(x, math_ops.conj(x))) if x._value.dtype.kind == "c" else math_ops.square(x)
        return math_ops.sqrt(reduce_sum(sq, axis, keepdims=keepdims))
    if is_matrix:
        rows, cols = (axes_tuple(a, nd, op="norm")[0] for a in axis)
        if rows == cols:
            raise ValueError(f"norm: the two axes of a matrix norm must differ, got {axis!r}")
        if ord == 1:       # largest column sum
            out = reduce_max(reduce_sum(math_ops.abs(x), rows, keepdims=True), cols, keepdims=True)
        elif ord in (np.inf, "inf"):   # largest row sum
            out = reduce_max(reduce_sum(math_ops.abs(x), cols, keepdims=True), rows, keepdims=True)
        elif ord == 2:     # largest singular value
            out = _spectral_norm(x, rows, cols)
        else:
            raise ValueError(f"norm: unsupported matrix norm ord {ord!r}; use 'euclidean', 'fro', 1, 2 or np.inf")
        if keepdims:
            return out
        return array_ops.reshape(out, tuple(d for i, d in enumerate(x._value.shape) if i not in (rows, cols)))
    if ord == 1:
        return reduce_sum(math_ops.abs(x), axis, keepdims=keepdims)
    if ord in (np.inf, "inf"):
        return reduce_max(math_ops.abs(x), axis, keepdims=keepdims)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 0:
        p = Tensor(np.array(ord, x._value.dtype))
        return math_ops.pow(reduce_sum(math_ops.pow(math_ops.abs(x), p), axis, keepdims=keepdims),
                            math_ops.reciprocal(p))
    raise ValueError(f"norm: unsupported ord {ord!r}; use 'euclidean', 'fro', 1, 2, np.inf or a positive number")


@register_op("SpectralNorm")
def _spectral_norm_fwd(x):
    """Largest singular value of each innermost matrix, shape [..., 1, 1]."""
    return np.linalg.svd(x, compute_uv=False)[..., :1, None].astype(x.dtype)


@RegisterGradient("SpectralNorm")
def _spectral_norm_grad(op, grad):
    return execute("SpectralNormGrad", (grad, op.inputs[0]))


@register_op("SpectralNormGrad")
def _spectral_norm_grad_fwd(grad, x):
    """grad * u1 v1^T: d sigma_max / dX is the outer product of the top singular vectors.

    No gradient is registered for this op: a second derivative through a matrix
    2-norm raises LookupError rather than silently giving a wrong value.
    """
    u, _, vh = np.linalg.svd(x)
    return grad * (u[..., :, :1] * vh[..., :1, :]).astype(x.dtype)


def _spectral_norm(x, rows, cols):
    """Largest singular value over axes (rows, cols), with both axes kept (size 1)."""
    nd = x._value.ndim
    others = [a for a in range(nd) if a not in (rows, cols)]
    perm = others + [rows, cols]
    s = execute("SpectralNorm", (array_ops.transpose(x, perm),))
    return array_ops.transpose(s, np.argsort(perm).tolist())


@register_op("Cumsum")
def _cumsum_fwd(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=same_int_dtype(x))
    if exclusive:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis=axis)), np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    nb = batch_ndim(op, grad)
    return execute("Cumsum", (grad,), {"axis": op.attrs["axis"] + nb, "exclusive": op.attrs["exclusive"],
                                       "reverse": not op.attrs["reverse"]})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    x = to_tensor(x)
    axis = _single_axis(axis, x._value.ndim, "cumsum")
    return execute("Cumsum", (x,), {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = to_tensor(input_tensor)
    return math_ops.sqrt(reduce_sum(math_ops.square(x), axis, keepdims=keepdims))
