"""Op execution and recording onto this thread's active tapes.

Every differentiable computation goes through ``execute(op_type, inputs, attrs)``:
it runs the op's registered forward on numpy arrays, wraps the results in
Tensors and, only when a tape or forward accumulator is active, records an
``OpRecord`` on each tape that watches one of the inputs.

What is recording is per thread, as in TensorFlow: ``ThreadRecording`` owns
one thread's tapes, forward accumulators, variable watchers and the graph it
is tracing, and every change to them goes through this module's functions.
``_installed`` counts, over all threads, what they have installed and not yet
removed; while it is zero no thread records anything and an op skips the
thread-local lookup entirely (the fast path is one check of one number).
"""
import contextlib
import threading
from types import MappingProxyType

import numpy as np

from .errors import InvalidArgumentError
from .tensor import Tensor

_NO_ATTRS = MappingProxyType({})
_FORWARDS = {}


class _Nothing:
    """``ThreadRecording.only_tape`` when nothing records on the thread."""
    __slots__ = ()


NOTHING = _Nothing()


class ThreadRecording:
    """One thread's recording state. Read its lists; change them only through this module's functions."""
    __slots__ = ("tapes", "accumulators", "watchers", "graph", "only_tape")

    def __init__(self):
        self.tapes = []          # TapeStates recording on this thread, innermost last
        self.accumulators = []   # ForwardAccumulators, innermost last
        self.watchers = []       # dicts id -> Variable collecting trainable variables read (custom_gradient)
        self.graph = None        # the FuncGraph this thread is tracing into, or None
        self.only_tape = NOTHING  # the inlined fast path: NOTHING records here, or the one tape that does
                                  # (no accumulator, no trace); None when the general path must run

    def changed(self):
        if self.accumulators or self.graph is not None or len(self.tapes) > 1:
            self.only_tape = None
        else:
            self.only_tape = self.tapes[0] if self.tapes else NOTHING


class _PerThread(threading.local):
    """Holds each thread's ThreadRecording: one thread-local lookup per op, then plain slot reads
    (every attribute read on a threading.local costs a lookup of the thread's dict)."""

    def __init__(self):
        self.state = ThreadRecording()


_local = _PerThread()
_installed = [0]
_installed_lock = threading.Lock()


def _count(delta):
    with _installed_lock:
        _installed[0] += delta


_numerics_checked = [False]   # tf.debugging.enable_check_numerics: process-wide, as in TensorFlow


def set_numerics_checked(enabled):
    """Checks every op's floating-point outputs for NaN and Inf from now on (or stops)."""
    enabled = bool(enabled)
    if enabled != _numerics_checked[0]:
        _numerics_checked[0] = enabled
        _count(1 if enabled else -1)


def numerics_checked():
    return _numerics_checked[0]


def _check_numerics(op_type, arrays):
    for i, a in enumerate(arrays):
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            what = "NaN" if np.isnan(a).any() else "Inf"
            raise InvalidArgumentError(f"\n!!! Detected Infinity or NaN in output {i} of eagerly-executing op "
                                       f'"{op_type}" (# of outputs: {len(arrays)}) !!!\n  dtype: {a.dtype}\n'
                                       f"  shape: {a.shape}\n  The output has {what} values.")


def current():
    """This thread's recording state, or None when no thread has anything installed."""
    return _local.state if _installed[0] else None


def active_tapes():
    """This thread's recording tapes (a list not to be modified)."""
    return _local.state.tapes if _installed[0] else ()


def active_accumulators():
    return _local.state.accumulators if _installed[0] else ()


def tracing_graph():
    """The graph this thread is tracing (tf.function), or None when executing eagerly."""
    return _local.state.graph if _installed[0] else None


def recording_anything():
    if not _installed[0]:
        return False
    s = _local.state
    return bool(s.tapes or s.accumulators)


def push_tape(tape):
    _count(1)
    state = _local.state
    state.tapes.append(tape)
    state.changed()


def pop_tape(tape):
    """Removes the innermost entry of ``tape`` from this thread's stack."""
    state = _local.state
    tapes = state.tapes
    for i in range(len(tapes) - 1, -1, -1):
        if tapes[i] is tape:
            del tapes[i]
            state.changed()
            _count(-1)
            return


def push_accumulator(accumulator):
    _count(1)
    _local.state.accumulators.append(accumulator)
    _local.state.changed()


def pop_accumulator(accumulator):
    _local.state.accumulators.remove(accumulator)
    _local.state.changed()
    _count(-1)


@contextlib.contextmanager
def accumulators_hidden_from(accumulator):
    """Hides ``accumulator`` and those entered after it (they must not see its own JVP computation)."""
    state = _local.state
    accumulators = state.accumulators
    position = accumulators.index(accumulator)
    later = accumulators[position:]
    del accumulators[position:]
    state.changed()
    try:
        yield
    finally:
        accumulators.extend(later)
        state.changed()


@contextlib.contextmanager
def watching_variables():
    """Yields a dict (id -> Variable) that collects every trainable variable read inside."""
    watcher = {}
    _count(1)
    _local.state.watchers.append(watcher)
    try:
        yield watcher
    finally:
        _local.state.watchers.remove(watcher)
        _count(-1)


@contextlib.contextmanager
def _alone_with(graph):
    """Hides this thread's tapes, accumulators and watchers, and makes ``graph`` (or eager execution,
    for None) the target of its ops, until the block ends."""
    s = _local.state
    saved = (s.tapes, s.accumulators, s.watchers, s.graph)
    s.tapes, s.accumulators, s.watchers, s.graph = [], [], [], graph
    s.changed()
    try:
        yield graph
    finally:
        s.tapes, s.accumulators, s.watchers, s.graph = saved
        s.changed()


@contextlib.contextmanager
def tracing_into(graph):
    """Makes ``graph`` the target of this thread's ops; what records outside is hidden until the trace
    ends (a trace is not a computation it should see)."""
    _count(1)
    try:
        with _alone_with(graph):
            yield graph
    finally:
        _count(-1)


def init_scope():
    """``tf.init_scope``: code that runs eagerly and unrecorded even in the middle of a trace, such as
    creating a function's variables or assigning values restored from a file: inside a trace an assign
    would become a graph node, run again at every call."""
    return _alone_with(None)


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


_TRACE_FORWARDS = {}
DECLARED_PURE = set()   # op types registered with pure=True (see framework/op_purity.py)


def register_op(op_type, num_outputs=1, at_trace=None, pure=False):
    """Decorator: registers ``forward(*arrays, **attrs)`` as the kernel of ``op_type``.

    ``at_trace``: for an op with a side effect (printing, a check that raises), what computes its
    outputs on a trace's placeholder values instead of the forward (which runs at every call).
    ``pure``: the outputs are a function of the inputs and attributes only and computing them is the
    op's only effect, so graph passes may remove, merge or fold it (framework/op_purity.py)."""
    if pure and at_trace is not None:
        raise ValueError(f"Op {op_type!r}: an op with an at_trace side effect cannot be declared pure")

    def decorator(forward):
        if op_type in _FORWARDS:
            raise KeyError(f"Op {op_type!r} is already defined")
        _FORWARDS[op_type] = (forward, num_outputs)
        if at_trace is not None:
            _TRACE_FORWARDS[op_type] = at_trace
        if pure:
            DECLARED_PURE.add(op_type)
        return forward
    return decorator


_STATE_OPS = {}   # op type -> (fewest, most) variables it updates


def register_state_op(op_type, variables):
    """Decorator: registers ``forward(variables, *arrays, **attrs)``, an op that updates tf.Variables
    (``variables``: how many it takes, an int or a (fewest, most) pair) and has no outputs, such as an
    optimizer's update (TensorFlow's ``ResourceApplyAdam``). It is not differentiable: nothing is
    recorded on tapes. A trace records it as a node naming its variables, which every replay runs.

    Every state op also takes ``gated=True``: its last input is then a boolean scalar, and the update
    runs only when it holds (how an update that happens every n steps stays one graph)."""
    counts = (variables, variables) if isinstance(variables, int) else tuple(variables)

    def decorator(forward):
        def run(variables, *arrays, gated=False, **attrs):
            if gated:
                *arrays, condition = arrays
                if not bool(condition):
                    return
            forward(variables, *arrays, **attrs)
        run.__name__, run.__doc__, run.__wrapped__ = forward.__name__, forward.__doc__, forward
        register_op(op_type, num_outputs=0)(run)
        _STATE_OPS[op_type] = counts
        return forward
    return decorator


def state_op_variable_counts(op_type):
    """(fewest, most) variables of a state op, or None for an op that is not one."""
    return _STATE_OPS.get(op_type)


def state_node_parts(attrs):
    """(indices of the variables a recorded state-op node updates, the op's own attributes)."""
    own = dict(attrs)
    return own.pop("variables"), own


def execute_state(op_type, variables, inputs, attrs=None):
    """Runs the state op ``op_type`` on ``variables`` and Tensors ``inputs`` (while tracing: records it)."""
    forward = _FORWARDS[op_type][0]
    state = _local.state if _installed[0] else None
    if state is not None and state.graph is not None:
        state.graph.add_state_op(op_type, variables, inputs, attrs or {})
        return
    if attrs:
        forward(variables, *[t._value for t in inputs], **attrs)
    else:
        forward(variables, *[t._value for t in inputs])


def trace_forward_of(op_type):
    """(what computes the op's outputs while tracing, number of outputs)."""
    forward, num_outputs = forward_of(op_type)
    return _TRACE_FORWARDS.get(op_type, forward), num_outputs


def forward_of(op_type):
    try:
        return _FORWARDS[op_type]
    except KeyError:
        raise LookupError(f"Unknown op type {op_type!r}") from None


def execute(op_type, inputs, attrs=None):
    """Runs ``op_type`` on Tensors ``inputs``; returns a Tensor (or a tuple for multi-output ops)."""
    forward, num_outputs = _FORWARDS[op_type]
    state = _local.state if _installed[0] else None
    if state is not None and state.graph is not None:
        return state.graph.add_op(op_type, inputs, attrs or {})
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
        if state is not None:
            if _numerics_checked[0]:
                _check_numerics(op_type, (result,))
            tapes = state.tapes
            if len(tapes) == 1 and not state.accumulators:  # the common case, inlined
                tape = tapes[0]
                ids = tape.ids
                for t in inputs:
                    if t._id in ids:
                        tape.records.append(OpRecord(op_type, inputs, (out,), attrs))
                        if result.dtype.kind in "fc":
                            ids.add(out._id)
                        break
            elif tapes or state.accumulators:
                record(op_type, inputs, (out,), attrs)
        return out
    outputs = tuple(Tensor(r) for r in result)
    if state is not None:
        if _numerics_checked[0]:
            _check_numerics(op_type, [o._value for o in outputs])
        if state.tapes or state.accumulators:
            record(op_type, inputs, outputs, attrs)
    return outputs


def with_inlined_execute(op_type, general):
    """``general(x, y)`` (a public elementwise binary op) with ``execute`` inlined for the
    common case: two eager Tensors of one numeric dtype and shape, at most one tape and
    no forward accumulator. Arithmetic operators then cost one Python frame, not three."""
    forward = _FORWARDS[op_type][0]

    def op(x, y, name=None):
        if type(x) is Tensor and type(y) is Tensor:
            tape = NOTHING
            if _installed[0]:
                tape = _local.state.only_tape
                if tape is None or _numerics_checked[0]:
                    return general(x, y)
            xv = x._value
            yv = y._value
            if xv.dtype is yv.dtype and xv.shape == yv.shape and xv.dtype.kind != "O":
                result = forward(xv, yv)
                out = Tensor(result)
                if tape is not NOTHING:
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
    """Records an already computed op on every active tape of this thread that watches an input.

    With ``forward_mode=False`` active forward accumulators are not told (the
    caller propagates tangents itself).
    """
    if not _installed[0]:
        return None
    state = _local.state
    rec = None
    for tape in state.tapes:
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
    if forward_mode and state.accumulators:
        if rec is None:
            rec = OpRecord(op_type, inputs, outputs, attrs, grad_fn)
        for acc in list(state.accumulators):
            acc._process(rec)
    return rec
