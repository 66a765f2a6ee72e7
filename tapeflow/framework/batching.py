"""Batching rules: how an op treats a leading batch axis.

A jacobian of a target ``[b, ...]`` with respect to a source ``[b, ...]`` is
block-diagonal over the batch when row i of the target depends only on row i
of the source. That is proven, never sampled: every op on the path from the
source to the target must keep rows independent, by its declared rule, as
``vmap``/``pfor`` decide it.

A rule is ``rule(op, batched) -> bool`` (or one bool per output), where ``op``
is the executed record and ``batched[i]`` says that input i depends on the
source; such an input is known to have the batch at axis 0, its row r
depending on source row r only. The rule answers whether each output then has
the batch at axis 0 with the same property (inputs not batched are constants
with respect to the source, whatever their shape). An op with no rule, or a
record with a custom gradient, mixes rows as far as the proof is concerned.
"""
_RULES = {}


def register_batching_rule(*op_types):
    """Decorator declaring ``rule(op, batched)`` for each of ``op_types``."""
    def decorator(rule):
        for op_type in op_types:
            if op_type in _RULES:
                raise KeyError(f"A batching rule for {op_type!r} is already registered")
            _RULES[op_type] = rule
        return rule
    return decorator


def declare(rule, *op_types):
    register_batching_rule(*op_types)(rule)


def _shape(t):
    return t._value.shape


def _batch_size(op, batched):
    return next(_shape(t)[0] for t, b in zip(op.inputs, batched) if b)


def _outputs_keep_axis0(op, batch):
    return all(_shape(o) and _shape(o)[0] == batch for o in op.outputs)


def elementwise(op, batched):
    """Broadcasting elementwise ops: each batched input has the output's rank (its axis 0 is the
    output's axis 0); constant inputs may broadcast in any way."""
    batch = _batch_size(op, batched)
    rank = len(_shape(op.outputs[0]))
    return (_outputs_keep_axis0(op, batch)
            and all(len(_shape(t)) == rank for t, b in zip(op.inputs, batched) if b))


def axis_attr_not_0(name):
    """Ops acting along one axis (softmax, cumsum, concat, gather, split, ...) keep rows
    independent when that axis is not the batch axis."""
    def rule(op, batched):
        rank = len(_shape(next(t for t, b in zip(op.inputs, batched) if b)))
        axis = op.attrs[name]
        return (axis % max(rank, 1) != 0 and _outputs_keep_axis0(op, _batch_size(op, batched))
                and all(len(_shape(t)) == rank for t, b in zip(op.inputs, batched) if b))
    return rule


def reduction(op, batched):
    """Reductions over axes other than 0 (the ``axes`` attribute is normalised and sorted)."""
    axes = op.attrs["axes"]
    return bool(axes) and axes[0] != 0 and _outputs_keep_axis0(op, _batch_size(op, batched))


def rows_independent(op, batched):
    """Per output: True when it keeps the batch at axis 0 with rows independent."""
    if op.grad_fn is not None or "_gradient_op_type" in op.attrs:
        return (False,) * len(op.outputs)     # a user's gradient may mix rows whatever the forward does
    rule = _RULES.get(op.type)
    verdict = False if rule is None else rule(op, batched)
    return (verdict,) * len(op.outputs) if isinstance(verdict, bool) else tuple(verdict)


def proven_block_diagonal(records, source_id, target_id):
    """Whether every path on ``records`` (execution order) from the source to the target keeps
    the batch rows independent: then d target[i] / d source[j] is zero for i != j."""
    if target_id == source_id:
        return True
    status = {source_id: True}     # id -> rows independent, for tensors depending on the source
    for op in records:
        batched = [status.get(t._id) for t in op.inputs]
        if not any(b is not None for b in batched):
            continue
        if any(b is False for b in batched):
            verdicts = (False,) * len(op.outputs)
        else:
            verdicts = rows_independent(op, [b is True for b in batched])
        for o, ok in zip(op.outputs, verdicts):
            if o._value.dtype.kind in "fc" and status.get(o._id) is not False:
                status[o._id] = ok
    return status.get(target_id) is True
