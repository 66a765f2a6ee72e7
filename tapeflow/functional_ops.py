"""tf.map_fn, tf.scan, tf.foldl, tf.foldr and tf.vectorized_map, on top of while_loop and TensorArray.

Eagerly they loop in Python over the leading axis and stack; inside a trace
they are one ``while_loop`` writing TensorArrays, so the number of elements is
read when the graph runs.

``vectorized_map`` runs ``map_fn``: calling ``fn`` once on the whole batch is
only right when every op of ``fn`` treats the leading axis as a batch, and
tapeflow's batching rules prove row independence, not that (an ``axis=0`` in
``fn`` names a different axis of the batch), so nothing is guessed.
"""
from .control_flow import TensorArray, trace_subgraphs, while_loop
from .framework import nest
from .framework import recording
from .framework.conversion import convert_to_tensor
from .framework.tensor_spec import TensorSpec
from .ops import array_ops, math_ops


def _leading(elems, what):
    leaves = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not leaves:
        raise ValueError(f"{what}: elems must be a tensor or a non-empty structure of tensors")
    sizes = {t.shape[0] if t.shape.rank else None for t in leaves}
    if any(t.shape.rank == 0 for t in leaves):
        raise ValueError(f"{what}: elements in elems must be 1+ dimensional Tensors, not scalars")
    if len(sizes) > 1:
        raise ValueError(f"{what}: all elems must have the same size along the first dimension, got {sizes}")
    return leaves, array_ops.shape(leaves[0])[0]


def _element(elems, leaves, i):
    return nest.pack_sequence_as(elems, [array_ops.gather(t, i) for t in leaves])


def _signature_dtypes(signature):
    return nest.map_structure(lambda s: s.dtype if isinstance(s, TensorSpec) else s, signature)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``stack([fn(e) for e in unstack(elems)])`` over the leading axis of (a structure of) tensors."""
    leaves, n = _leading(elems, "map_fn")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if recording.tracing_graph() is None:
        rows = [fn(_element(elems, leaves, i)) for i in range(int(n._value))]
        if not rows:
            raise ValueError("map_fn over zero elements needs a traced function (no output shape to stack)")
        structure = rows[0]
        flat = [array_ops.stack([convert_to_tensor(leaf) for leaf in column])
                for column in zip(*[nest.flatten(r) for r in rows])]
        return nest.pack_sequence_as(structure, flat)
    if signature is None:   # the output structure of fn, from a trace that is not kept
        _, (structure,), _ = trace_subgraphs([lambda: fn(_element(elems, leaves, 0))], [], "map_fn", "map_fn's fn")
        out_dtypes = [convert_to_tensor(t).dtype for t in nest.flatten(structure)]
    else:
        structure, out_dtypes = signature, nest.flatten(_signature_dtypes(signature))
    arrays = [TensorArray(d, size=n) for d in out_dtypes]

    def body(i, *tas):
        result = nest.flatten(fn(_element(elems, leaves, i)))
        return [math_ops.add(i, 1)] + [ta.write(i, r) for ta, r in zip(tas, result)]
    final = while_loop(lambda i, *_: math_ops.less(i, n), body, [convert_to_tensor(0)] + arrays)
    return nest.pack_sequence_as(structure, [ta.stack() for ta in final[1:]])


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """The accumulators ``a = fn(a, e)`` after each element, stacked (``initializer`` defaults to the first)."""
    return _accumulate(fn, elems, initializer, reverse, "scan", keep_all=True)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    return _accumulate(fn, elems, initializer, False, "foldl", keep_all=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    return _accumulate(fn, elems, initializer, True, "foldr", keep_all=False)


def _accumulate(fn, elems, initializer, reverse, what, keep_all):
    leaves, n = _leading(elems, what)
    if reverse:
        leaves = [array_ops.reverse(t, [0]) for t in leaves]
    start = 0
    if initializer is None:
        acc = _element(elems, leaves, 0)
        start = 1
    else:
        acc = nest.map_structure(convert_to_tensor, initializer)
    if recording.tracing_graph() is None:
        outputs = [acc] if start else []
        for i in range(start, int(n._value)):
            acc = nest.map_structure(convert_to_tensor, fn(acc, _element(elems, leaves, i)))
            outputs.append(acc)
        if not keep_all:
            return acc
        flat = [array_ops.stack(column) for column in zip(*[nest.flatten(o) for o in outputs])]
        stacked = [array_ops.reverse(t, [0]) for t in flat] if reverse else flat
        return nest.pack_sequence_as(acc, stacked)
    flat_acc = nest.flatten(acc)
    arrays = [TensorArray(t.dtype, size=n) for t in flat_acc]
    if start:
        arrays = [ta.write(0, t) for ta, t in zip(arrays, flat_acc)]
    k = len(flat_acc)

    def body(i, *state):
        current = nest.pack_sequence_as(acc, list(state[:k]))
        new = [convert_to_tensor(t) for t in nest.flatten(fn(current, _element(elems, leaves, i)))]
        tas = state[k:]
        if keep_all:
            tas = [ta.write(i, t) for ta, t in zip(tas, new)]
        return [math_ops.add(i, 1)] + new + list(tas)
    final = while_loop(lambda i, *_: math_ops.less(i, n), body,
                       [convert_to_tensor(start)] + flat_acc + (arrays if keep_all else []))
    if not keep_all:
        return nest.pack_sequence_as(acc, final[1:1 + k])
    stacked = [ta.stack() for ta in final[1 + k:]]
    if reverse:
        stacked = [array_ops.reverse(t, [0]) for t in stacked]
    return nest.pack_sequence_as(acc, stacked)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``map_fn(fn, elems)`` (see the module note: exact, one call of ``fn`` per element)."""
    return map_fn(fn, elems)
