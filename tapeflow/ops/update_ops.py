"""Functional updates: a slice at a start position given as a tensor, a slice written into a tensor, and
elements written or combined at scattered indices (``tf.slice`` with a tensor start, ``dynamic_update_slice``,
``tf.tensor_scatter_nd_update`` / ``_add`` / ``_sub`` / ``_min`` / ``_max``).

The positions are tensor inputs, so a traced function reads them on every
call. The ops index the *trailing* dimensions: extra leading axes on the data
(stacked cotangents of a jacobian) are carried along, which is what lets
each op's gradient be written with these same ops.
"""
import numpy as np

from ..framework.batching import register_batching_rule
from ..framework.errors import InvalidArgumentError, dtype_word
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from . import array_ops, math_ops, reduction_ops
from .common import RegisterGradient, batch_ndim, execute, int_list, no_gradient, register_op, to_tensor

sum_to = reduction_ops.sum_to


def _region(start, sizes, shape, what):
    """The slices of the trailing dims ``shape`` starting at ``start`` with ``sizes``, checked."""
    start = [int(s) for s in np.asarray(start).reshape(-1)]
    for axis, (s, n, d) in enumerate(zip(start, sizes, shape)):
        if s < 0 or s + n > d:
            raise InvalidArgumentError(f"{what}: a slice of size {n} starting at {s} does not fit in axis {axis} "
                                       f"of size {d} (shape {TensorShape(shape)})")
    return tuple(slice(s, s + n) for s, n in zip(start, sizes))


# ------------------------------------------------------------------ slice ---
@register_op("DynamicSlice")
def _dynamic_slice_fwd(x, start, sizes):
    lead = x.ndim - len(sizes)
    key = (slice(None),) * lead + _region(start, sizes, x.shape[lead:], "slice")
    return np.array(x[key])


@RegisterGradient("DynamicSlice")
def _dynamic_slice_grad(op, grad):
    x, start = op.inputs
    nb = batch_ndim(op, grad)
    zeros = Tensor(np.zeros(grad._value.shape[:nb] + x._value.shape, grad._value.dtype))
    return execute("DynamicUpdateSlice", (zeros, grad, start)), None


def dynamic_slice(x, start, sizes, name=None):
    """``x[start[0]:start[0]+sizes[0], ...]`` with ``start`` a tensor (read when the op runs)."""
    x, start = to_tensor(x), to_tensor(start)
    sizes = int_list(sizes)
    _check_positions(x, start, "slice")
    if len(sizes) != x._value.ndim or min(sizes, default=0) < 0:
        raise InvalidArgumentError(f"slice: shape {list(sizes)} must give a non-negative size for each of the "
                                   f"{x._value.ndim} axes of a tensor of shape {x.shape}")
    return execute("DynamicSlice", (x, start), {"sizes": sizes})


def _check_positions(x, start, what):
    if start._value.dtype.kind not in "iu" or start._value.shape != (x._value.ndim,):
        raise InvalidArgumentError(f"{what}: start indices must be {x._value.ndim} integers (one per axis of a "
                                   f"tensor of shape {x.shape}), got shape {start.shape} of {start.dtype.name}")


# ----------------------------------------------------------- slice update ---
@register_op("DynamicUpdateSlice")
def _dynamic_update_slice_fwd(x, update, start):
    core = len(start)
    lead = np.broadcast_shapes(x.shape[:x.ndim - core], update.shape[:update.ndim - core])
    out = np.array(np.broadcast_to(x, lead + x.shape[x.ndim - core:]))
    key = (slice(None),) * len(lead) + _region(start, update.shape[update.ndim - core:], x.shape[x.ndim - core:],
                                                 "slice_update")
    out[key] = update
    return out


@RegisterGradient("DynamicUpdateSlice")
def _dynamic_update_slice_grad(op, grad):
    x, update, start = op.inputs
    nb = batch_ndim(op, grad)
    core = update._value.shape[update._value.ndim - start._value.shape[0]:]
    g_x = execute("DynamicUpdateSlice", (grad, Tensor(np.zeros(core, grad._value.dtype)), start))
    g_update = execute("DynamicSlice", (grad, start), {"sizes": core})
    return sum_to(g_x, x._value.shape, nb), sum_to(g_update, update._value.shape, nb), None


def dynamic_update_slice(x, update, start, name=None):
    """A copy of ``x`` with ``update`` written at ``start`` (a tensor, read when the op runs)."""
    x, start = to_tensor(x), to_tensor(start)
    update = to_tensor(update, dtype=x.dtype) if not isinstance(update, Tensor) else update
    _check_positions(x, start, "slice_update")
    if update._value.ndim != x._value.ndim or update._value.dtype != x._value.dtype:
        raise InvalidArgumentError(f"slice_update: updates of shape {update.shape} and dtype {update.dtype.name} "
                                   f"must have the rank and dtype of inputs ({x.shape}, {x.dtype.name})")
    return execute("DynamicUpdateSlice", (x, update, start))


@register_batching_rule("DynamicSlice", "DynamicUpdateSlice")
def _whole_axis0_rows(op, batched):
    """Rows stay independent when the slice keeps all of axis 0 and the start is not itself batched."""
    start = op.inputs[-1]
    if batched[-1] or not op.outputs[0]._value.ndim:
        return False
    batch = op.outputs[0]._value.shape[0]
    return int(start._value[0]) == 0 and all(t._value.shape[:1] == (batch,) for t, b in zip(op.inputs, batched)
                                             if b)


# --------------------------------------------------------- scatter update ---
def _index_key(indices, lead):
    k = indices.shape[-1]
    return (slice(None),) * lead + tuple(indices[..., i] for i in range(k))


@register_op("TensorScatterUpdate")
def _scatter_update_fwd(x, indices, updates, core_rank):
    lead = x.ndim - core_rank
    shape = x.shape[lead:]
    k = indices.shape[-1]
    bounds = np.array(shape[:k], dtype=np.int64)
    bad = np.argwhere((indices < 0) | (indices >= bounds))
    if bad.size:
        where_ = "".join(f"[{int(i)}]" for i in bad[0][:-1])
        raise InvalidArgumentError(f"scatter_update: indices{where_} = {indices[tuple(bad[0][:-1])].tolist()} does "
                                   f"not index into a tensor of shape {TensorShape(shape)}")
    out = np.array(x)
    out[_index_key(indices, lead)] = updates      # with repeated indices the last update is kept
    return out


@RegisterGradient("TensorScatterUpdate")
def _scatter_update_grad(op, grad):
    x, indices, updates = op.inputs
    nb = batch_ndim(op, grad)
    core_rank = op.attrs["core_rank"]
    k = indices._value.shape[-1]
    item_shape = x._value.shape[x._value.ndim - core_rank + k:]
    g_x = execute("TensorScatterUpdate", (grad, indices, Tensor(np.zeros(item_shape, grad._value.dtype))),
                  op.attrs)
    g_updates = None
    if 2 not in op.skip_input_indices:
        lead = grad._value.ndim - core_rank
        # Bring the indexed axes first for gather_nd, then the leading axes back in front.
        perm = list(range(lead, grad._value.ndim)) + list(range(lead))
        picked = array_ops.gather_nd(array_ops.transpose(grad, perm), indices)
        m = picked._value.ndim - lead
        picked = array_ops.transpose(picked, list(range(m, m + lead)) + list(range(m)))
        kept = execute("ScatterUpdateWinners", (indices,), {"shape": tuple(x._value.shape[-core_rank:][:k])})
        kept = array_ops.reshape(kept, indices._value.shape[:-1] + (1,) * len(item_shape))
        g_updates = sum_to(math_ops.multiply(picked, math_ops.cast(kept, picked.dtype)), updates._value.shape,
                           grad._value.ndim - op.outputs[0]._value.ndim)
    return sum_to(g_x, x._value.shape, nb), None, g_updates


@register_op("ScatterUpdateWinners")
def _winners_fwd(indices, shape):
    """True for the update that ends up in the result at each index (the last one of repeated indices)."""
    flat = np.ravel_multi_index(tuple(indices.reshape(-1, indices.shape[-1]).T), shape) if indices.size else \
        np.zeros(0, np.int64)
    last = {}
    for position, target in enumerate(flat.tolist()):
        last[target] = position
    kept = np.zeros(flat.shape, bool)
    kept[list(last.values())] = True
    return kept.reshape(indices.shape[:-1])


no_gradient("ScatterUpdateWinners")


def tensor_scatter_update(x, indices, updates, name=None):
    """A copy of ``x`` with ``x[indices[i]] = updates[i]`` (indices name the leading dims of x)."""
    x, indices = to_tensor(x), to_tensor(indices)
    updates = to_tensor(updates, dtype=x.dtype) if not isinstance(updates, Tensor) else updates
    ids = indices._value
    if ids.dtype.kind not in "iu" or ids.ndim < 1 or ids.shape[-1] > x._value.ndim:
        raise InvalidArgumentError(f"scatter_update: indices must be integers of shape [..., K] with K <= "
                                   f"{x._value.ndim} (the rank of inputs {x.shape}), got {indices.shape} of "
                                   f"{indices.dtype.name}")
    expected = ids.shape[:-1] + x._value.shape[ids.shape[-1]:]
    if updates._value.shape != expected or updates._value.dtype != x._value.dtype:
        raise InvalidArgumentError(f"scatter_update: updates must have shape {TensorShape(expected)} and dtype "
                                   f"{x.dtype.name} for indices {indices.shape} into inputs {x.shape}, got "
                                   f"{updates.shape} of {updates.dtype.name}")
    return execute("TensorScatterUpdate", (x, indices, updates), {"core_rank": x._value.ndim})


# ------------------------------------------------- scatter add / sub / min / max ---
def _scatter_parts(x, indices, updates, core_rank, what, op):
    """(leading shape, indices' point shape, item shape) of a tensor_scatter op, checked."""
    lead_x = x.ndim - core_rank
    core = x.shape[lead_x:]
    depth = indices.shape[-1] if indices.ndim else -1
    points = indices.shape[:-1]
    item = points + core[depth:]
    lead_u = updates.ndim - len(item)
    if lead_x < 0 or not 1 <= depth <= core_rank or lead_u < 0 or updates.shape[lead_u:] != item:
        raise InvalidArgumentError(f"{what}: updates of shape {list(updates.shape)} do not fit indices of shape "
                                   f"{list(indices.shape)} into a tensor of shape {list(core)} [Op:{op}]")
    array_ops._check_nd_indices(indices, core, 0, what, op)
    return np.broadcast_shapes(x.shape[:lead_x], updates.shape[:lead_u]), core, item


def _scatter_forward(ufunc, what, op):
    def forward(x, indices, updates, core_rank):
        lead, core, item = _scatter_parts(x, indices, updates, core_rank, what, op)
        out = np.array(np.broadcast_to(x, lead + core))
        # ufunc.at applies repeated indices one after the other, in order, as TensorFlow's CPU kernels do.
        ufunc.at(out, array_ops._nd_key(indices, len(lead), ()), np.broadcast_to(updates, lead + item))
        return out
    return forward


SCATTER_REDUCTIONS = {"TensorScatterAdd": np.add, "TensorScatterSub": np.subtract,
                      "TensorScatterMin": np.minimum, "TensorScatterMax": np.maximum}
for _op, _ufunc in SCATTER_REDUCTIONS.items():
    _name = "tensor_scatter_nd_" + _op[len("TensorScatter"):].lower()
    register_op(_op, pure=True)(_scatter_forward(_ufunc, _name, _op))


@register_batching_rule("TensorScatterUpdate", *SCATTER_REDUCTIONS)
def _scatter_rows(op, batched):
    """With no leading axes, rows of the tensor stay independent when the updates are constant (each
    output row is its input row with constants written in). With leading axes, rows are independent
    when every batched input carries them."""
    x, indices, updates = op.inputs
    core_rank = op.attrs["core_rank"]
    out = op.outputs[0]._value
    lead = out.ndim - core_rank
    if lead == 0:
        return batched[0] and not batched[2]
    item_rank = indices._value.ndim - 1 + core_rank - indices._value.shape[-1]
    own_lead = (x._value.ndim - core_rank, None, updates._value.ndim - item_rank)
    return all(own_lead[i] == lead and op.inputs[i]._value.shape[0] == out.shape[0]
               for i in (0, 2) if batched[i])


def _gather_items(grad, op):
    """The (stacked) gradient at the scattered positions, shaped as the updates (with grad's extra axes)."""
    return execute("GatherNd", (grad, op.inputs[1]), {"batch_dims": 0, "core_rank": op.attrs["core_rank"]})


@RegisterGradient("TensorScatterAdd")
def _scatter_add_grad(op, grad):
    x, _, updates = op.inputs
    nb = batch_ndim(op, grad)
    return sum_to(grad, x._value.shape, nb), None, sum_to(_gather_items(grad, op), updates._value.shape, nb)


@RegisterGradient("TensorScatterSub")
def _scatter_sub_grad(op, grad):
    x, _, updates = op.inputs
    nb = batch_ndim(op, grad)
    g_updates = math_ops.negative(_gather_items(grad, op))
    return sum_to(grad, x._value.shape, nb), None, sum_to(g_updates, updates._value.shape, nb)


def _scatter_min_max_grad(op, grad):
    """The gradient goes to the values equal to the result; ties share it evenly (as reduce_max's)."""
    x, indices, updates = op.inputs
    out = op.outputs[0]
    nb = batch_ndim(op, grad)
    core_rank = op.attrs["core_rank"]
    dtype = grad.dtype
    x_won = math_ops.cast(math_ops.equal(x, out), dtype)
    updates_won = math_ops.cast(math_ops.equal(updates, _gather_items(out, op)), dtype)
    core = out._value.shape[out._value.ndim - core_rank:]
    winners = math_ops.add(x_won, execute("ScatterNd", (indices, updates_won), {"shape": core}))
    share = math_ops.divide(grad, winners)
    g_x = math_ops.multiply(share, x_won)
    g_updates = math_ops.multiply(_gather_items(share, op), updates_won)
    return sum_to(g_x, x._value.shape, nb), None, sum_to(g_updates, updates._value.shape, nb)


RegisterGradient("TensorScatterMin")(_scatter_min_max_grad)
RegisterGradient("TensorScatterMax")(_scatter_min_max_grad)


def _scatter_args(tensor, indices, updates, what, op):
    x = to_tensor(tensor)
    indices = array_ops._index_tensor(indices, what)
    if isinstance(updates, Tensor) or x._value.dtype == object:     # strings convert by themselves, as bytes
        updates = to_tensor(updates)
    else:
        updates = to_tensor(updates, dtype=x.dtype)
    if updates._value.dtype != x._value.dtype:
        raise InvalidArgumentError(f"{what}: cannot compute {op} as input #2(zero-based) was expected to be a "
                                   f"{dtype_word(x.dtype)} tensor but is a {dtype_word(updates.dtype)} tensor "
                                   f"[Op:{op}]")
    ids = indices._value.shape
    if not 1 <= ids[-1] <= x._value.ndim:
        raise InvalidArgumentError(f"{what}: index depth {ids[-1]} must be between 1 and the rank "
                                   f"{x._value.ndim} of the tensor {x.shape}")
    expected = ids[:-1] + x._value.shape[ids[-1]:]
    if updates._value.shape != expected:
        raise InvalidArgumentError(f"{what}: updates must have shape {TensorShape(expected)} for indices "
                                   f"{indices.shape} into a tensor of shape {x.shape}, got {updates.shape} [Op:{op}]")
    return x, indices, updates


def _tensor_scatter(op, what):
    def scatter(tensor, indices, updates, name=None):
        x, indices, updates = _scatter_args(tensor, indices, updates, what, op)
        if x._value.dtype.kind not in "iuf":
            raise InvalidArgumentError(f"{what}: {x.dtype.name} tensors are not supported (numbers only)")
        return execute(op, (x, indices, updates), {"core_rank": x._value.ndim})
    scatter.__name__ = what
    scatter.__doc__ = (f"tf.{what}: a copy of ``tensor`` with ``updates[i]`` combined into ``tensor[indices[i]]`` "
                       f"({SCATTER_REDUCTIONS[op].__name__}; repeated indices combine in turn).")
    return scatter


tensor_scatter_nd_add = _tensor_scatter("TensorScatterAdd", "tensor_scatter_nd_add")
tensor_scatter_nd_sub = _tensor_scatter("TensorScatterSub", "tensor_scatter_nd_sub")
tensor_scatter_nd_min = _tensor_scatter("TensorScatterMin", "tensor_scatter_nd_min")
tensor_scatter_nd_max = _tensor_scatter("TensorScatterMax", "tensor_scatter_nd_max")


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """tf.tensor_scatter_nd_update: a copy of ``tensor`` with ``tensor[indices[i]] = updates[i]``; of repeated
    indices the last update is kept (and only it receives a gradient)."""
    x, indices, updates = _scatter_args(tensor, indices, updates, "tensor_scatter_nd_update", "TensorScatterUpdate")
    return execute("TensorScatterUpdate", (x, indices, updates), {"core_rank": x._value.ndim})
