"""Op execution and recording onto the active tapes.

Every differentiable computation goes through ``execute(op_type, inputs, attrs)``:
it runs the op's registered forward on numpy arrays, wraps the results in
Tensors and, only when a tape or forward accumulator is active, records an
``OpRecord`` on each tape that watches one of the inputs. With nothing active
the cost of recording is one truthiness check of two lists.
"""
from types import MappingProxyType

from .tensor import Tensor

_NO_ATTRS = MappingProxyType({})

# Stacks of currently recording tapes / forward accumulators. Mutated in
# place (never rebound) so other modules may hold a reference to them.
active_tapes = []
active_accumulators = []
# Sets (dicts id -> Variable) collecting every trainable variable read while
# they are installed; custom_gradient uses this to find the variables it reads.
variable_watchers = []
# The graph being traced by tf.function, or None (see tapeflow.function).
tracing = [None]

_FORWARDS = {}


class OpRecord:
    """One executed op as a gradient function sees it (TensorFlow's ``op``)."""
    __slots__ = ("type", "inputs", "outputs", "attrs", "grad_fn", "skip_input_indices")

    def __init__(self, op_type, inputs, outputs, attrs, grad_fn=None):
        self.type = op_type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = _NO_ATTRS if attrs is None else attrs
        self.grad_fn = grad_fn
        self.skip_input_indices = ()

    @property
    def name(self):
        return self.type

    def get_attr(self, name):
        return self.attrs[name]

    def __repr__(self):
        return f"<OpRecord {self.type} inputs={len(self.inputs)} outputs={len(self.outputs)}>"


class TapeState:
    """The recorded state of one GradientTape between reset points."""
    __slots__ = ("ids", "roots", "records", "variables", "persistent", "watch_accessed_variables")

    def __init__(self, persistent, watch_accessed_variables):
        self.ids = set()          # ids of trainable-dtype tensors whose history is recorded
        self.roots = set()        # the ids in ``ids`` that were watched (tensors, variables), not computed
        self.records = []         # OpRecords in execution order
        self.variables = {}       # id -> Variable, watched variables
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables


def register_op(op_type, num_outputs=1):
    """Decorator: registers ``forward(*arrays, **attrs)`` as the kernel of ``op_type``."""
    def decorator(forward):
        if op_type in _FORWARDS:
            raise KeyError(f"Op {op_type!r} is already defined")
        _FORWARDS[op_type] = (forward, num_outputs)
        return forward
    return decorator


def forward_of(op_type):
    try:
        return _FORWARDS[op_type]
    except KeyError:
        raise LookupError(f"Unknown op type {op_type!r}") from None


def execute(op_type, inputs, attrs=None):
    """Runs ``op_type`` on Tensors ``inputs``; returns a Tensor (or a tuple for multi-output ops)."""
    forward, num_outputs = _FORWARDS[op_type]
    if tracing[0] is not None:
        return tracing[0].add_op(op_type, inputs, attrs or {})
    if attrs:
        if len(inputs) == 1:
            result = forward(inputs[0]._value, **attrs)
        else:
            result = forward(*[t._value for t in inputs], **attrs)
    elif len(inputs) == 2:
        result = forward(inputs[0]._value, inputs[1]._value)
    elif len(inputs) == 1:
        result = forward(inputs[0]._value)
    else:
        result = forward(*[t._value for t in inputs])
    if num_outputs == 1:
        out = Tensor(result)
        if active_tapes:
            if len(active_tapes) == 1 and not active_accumulators:  # the common case, inlined
                tape = active_tapes[0]
                ids = tape.ids
                for t in inputs:
                    if t._id in ids:
                        tape.records.append(OpRecord(op_type, inputs, (out,), attrs))
                        if result.dtype.kind in "fc":
                            ids.add(out._id)
                        break
            else:
                record(op_type, inputs, (out,), attrs)
        elif active_accumulators:
            record(op_type, inputs, (out,), attrs)
        return out
    outputs = tuple(Tensor(r) for r in result)
    if active_tapes or active_accumulators:
        record(op_type, inputs, outputs, attrs)
    return outputs


def with_inlined_execute(op_type, general):
    """``general(x, y)`` (a public elementwise binary op) with ``execute`` inlined for the
    common case: two eager Tensors of one numeric dtype and shape, at most one tape and
    no forward accumulator. Arithmetic operators then cost one Python frame, not three."""
    forward = _FORWARDS[op_type][0]

    def op(x, y, name=None):
        if type(x) is Tensor and type(y) is Tensor and tracing[0] is None and not active_accumulators:
            xv = x._value
            yv = y._value
            if xv.dtype is yv.dtype and xv.shape == yv.shape and xv.dtype.kind != "O" and len(active_tapes) < 2:
                result = forward(xv, yv)
                out = Tensor(result)
                if active_tapes:
                    tape = active_tapes[0]
                    ids = tape.ids
                    if x._id in ids or y._id in ids:
                        tape.records.append(OpRecord(op_type, (x, y), (out,), None))
                        if result.dtype.kind in "fc":
                            ids.add(out._id)
                return out
        return general(x, y)
    op.__name__, op.__qualname__, op.__doc__ = general.__name__, general.__qualname__, general.__doc__
    op.__module__ = general.__module__
    return op


def record(op_type, inputs, outputs, attrs=None, grad_fn=None, forward_mode=True):
    """Records an already computed op on every active tape that watches an input.

    With ``forward_mode=False`` active forward accumulators are not told (the
    caller propagates tangents itself).
    """
    rec = None
    for tape in active_tapes:
        ids = tape.ids
        for t in inputs:
            if t._id in ids:
                break
        else:
            continue
        if rec is None:
            rec = OpRecord(op_type, inputs, outputs, attrs, grad_fn)
        tape.records.append(rec)
        for o in outputs:
            if o._value.dtype.kind in "fc":
                ids.add(o._id)
    if forward_mode and active_accumulators:
        if rec is None:
            rec = OpRecord(op_type, inputs, outputs, attrs, grad_fn)
        for acc in list(active_accumulators):
            acc._process(rec)
    return rec


def recording_anything():
    return bool(active_tapes or active_accumulators)
