"""GradientTape: recording control, the backward pass, jacobian and batch_jacobian.

The backward pass walks a tape's records in reverse execution order (a valid
reverse topological order), calling each op's registered gradient function.
Gradient functions are tapeflow ops, so an enclosing tape records them.

Jacobians run the backward pass once with a stack of one-hot cotangents (an
extra leading axis): built-in gradient functions are written to accept it.
Gradient functions registered by users are called once per stacked row. A
jacobian proven block-diagonal over a batch axis by the ops' batching rules
(tapeflow.framework.batching) is assembled from batch_jacobian's blocks.
"""
import contextlib
import enum

import numpy as np

from .framework import nest
from .framework.batching import proven_block_diagonal
from .framework.conversion import convert_to_tensor
from .framework.logging_util import warn_first_n
from .framework import recording
from .framework.recording import TapeState, recording_anything
from .framework.registry import _GRADIENTS, _NO_GRADIENT, TAKES_MISSING_COTANGENTS, lookup, missing_gradient_error
from .framework.tensor import Tensor
from .framework.variables import Variable
from .ops import array_ops, math_ops

_CONSUMED = "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
_IN_CONTEXT_WARNING = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly less efficient "
    "than calling it outside the context (it causes the gradient ops to be recorded on the tape, leading to "
    "increased CPU and memory usage). Only call GradientTape.gradient inside the context if you actually want "
    "to trace the gradient in order to compute higher order derivatives.")
# Largest number of elements in one stacked block of jacobian cotangents.
_JACOBIAN_BLOCK_ELEMENTS = 1 << 24


class UnconnectedGradients(enum.Enum):
    NONE = "none"
    ZERO = "zero"


def _parse_unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


def _is_trainable_dtype(t):
    return t._value.dtype.kind in "fc"


# ------------------------------------------------------------ backward pass ---
def _fill_missing(rec, out_grads):
    """Zeros (with the stacked axes of the present ones) for outputs that got no cotangent."""
    present = next(g for g in out_grads if g is not None)
    k = out_grads.index(present)
    lead = present._value.shape[:present._value.ndim - rec.outputs[k]._value.ndim]
    return [g if g is not None else Tensor(np.zeros(lead + o._value.shape, o._value.dtype))
            for g, o in zip(out_grads, rec.outputs)]


def _call_unbatched(rec, grad_fn, out_grads):
    """Calls a gradient function that knows nothing of stacked cotangents once per stacked row."""
    k, present = next((i, g) for i, g in enumerate(out_grads) if g is not None)
    nb = present._value.ndim - rec.outputs[k]._value.ndim
    if nb == 0:
        return grad_fn(rec, *out_grads)
    lead = present._value.shape[:nb]
    rows = int(np.prod(lead))
    flat = [None if g is None else array_ops.reshape(g, (rows,) + o._value.shape)
            for g, o in zip(out_grads, rec.outputs)]
    per_row = []
    for r in range(rows):
        res = grad_fn(rec, *[None if g is None else g[r] for g in flat])
        per_row.append(list(res) if isinstance(res, (list, tuple)) else [res])
    results = []
    for i, t in enumerate(rec.inputs):
        column = [row[i] for row in per_row]
        if all(c is None for c in column):
            results.append(None)
            continue
        column = [c if c is not None else Tensor(np.zeros(t._value.shape, t._value.dtype)) for c in column]
        stacked = array_ops.stack([convert_to_tensor(c) for c in column])
        results.append(array_ops.reshape(stacked, lead + t._value.shape))
    return results


def _accumulate(grads, key, g):
    previous = grads.get(key)
    grads[key] = g if previous is None else math_ops.add(previous, g)


class _IndexSplits(dict):
    """(mask, n) -> (indices set in ``mask``, the other indices) for an op with ``n`` inputs,
    computed on first use: a hit is one dict lookup in the backward loop."""

    def __missing__(self, key):
        mask, n = key
        split = self[key] = (tuple(i for i in range(n) if mask >> i & 1),
                             tuple(i for i in range(n) if not mask >> i & 1))
        return split


_INDEX_SPLITS = _IndexSplits()


def _dependents(tape, sources):
    """The ids of every tensor on ``tape`` that depends on a source (trainable dtypes only).

    When the sources are exactly the tape's watched roots (or more of its tensors), that is
    every tensor the tape traces: ``tape.ids``, with no sweep over the records.
    """
    if tape.roots <= sources <= tape.ids:
        return set(tape.ids) if tape in recording.active_tapes() else tape.ids  # a recording tape grows
    depends = set(sources)
    for rec in tape.records:
        for t in rec.inputs:
            if t._id in depends:
                for o in rec.outputs:
                    if o._value.dtype.kind in "fc":
                        depends.add(o._id)
                break
    return depends


def _resolve_gradient(rec):
    """(gradient function or None, batch_aware) for a record; raises LookupError if there is none."""
    if rec.grad_fn is not None:
        return rec.grad_fn, False
    op_type = rec.type
    if op_type == "IdentityN" and "_gradient_op_type" in rec.attrs:
        entry = _GRADIENTS.get(rec.attrs["_gradient_op_type"])
        if entry is None:  # a traced custom gradient that was not saved with its graph
            raise missing_gradient_error("IdentityN")
    else:
        entry = _GRADIENTS.get(op_type)
    if entry is None or entry[0] is _NO_GRADIENT:
        return lookup(op_type)
    return entry[0], entry[2]


def backward(tape, targets, target_grads, source_ids):
    """Cotangents of ``source_ids`` given cotangents ``target_grads`` of ``targets``.

    ``tape`` is a TapeState (its OpRecords are in execution order); sources without
    a path from a target get None.
    """
    sources = set(source_ids)
    depends = _dependents(tape, sources)
    splits = _INDEX_SPLITS
    grads = {}
    for t, g in zip(targets, target_grads):
        if t._id in depends and _is_trainable_dtype(t):
            _accumulate(grads, t._id, g)
    resolved = {}   # op type -> (gradient function, batch aware), for plain records
    for rec in reversed(tape.records):
        outputs = rec.outputs
        if len(outputs) == 1:
            key = outputs[0]._id
            g = grads.pop(key, None)
            if g is None:
                continue
            if key in sources:
                grads[key] = g
            out_grads = None
        else:
            out_grads = [grads.get(o._id) if o._id in sources else grads.pop(o._id, None) for o in outputs]
            if all(g is None for g in out_grads):
                continue
        inputs = rec.inputs
        mask = 0
        bit = 1
        for t in inputs:
            if t._id in depends:
                mask |= bit
            bit <<= 1
        if not mask:  # no input depends on a source (its output may be one): nothing to propagate
            continue
        if out_grads is not None and (rec.grad_fn is not None or rec.type not in TAKES_MISSING_COTANGENTS):
            out_grads = _fill_missing(rec, out_grads)
        if rec.grad_fn is None:
            op_type = rec.type
            entry = resolved.get(op_type)
            if entry is None:
                entry = resolved[op_type] = _resolve_gradient(rec)
                if op_type == "IdentityN":  # resolved per record (its attrs name the gradient)
                    del resolved[op_type]
            grad_fn, batch_aware = entry
        else:
            grad_fn, batch_aware = rec.grad_fn, False
        if grad_fn is None:
            continue
        needed, rec.skip_input_indices = splits[mask, len(inputs)]
        if batch_aware:
            in_grads = grad_fn(rec, g) if out_grads is None else grad_fn(rec, *out_grads)
        else:
            in_grads = _call_unbatched(rec, grad_fn, [g] if out_grads is None else out_grads)
        if type(in_grads) is not tuple and type(in_grads) is not list:
            in_grads = (in_grads,)
        if len(in_grads) != len(inputs):
            raise ValueError(f"Num gradients {len(in_grads)} generated for op name: {rec.type!r} do not match "
                             f"num inputs {len(inputs)}")
        for i in needed:
            gi = in_grads[i]
            if gi is None:
                continue
            if type(gi) is not Tensor:
                gi = convert_to_tensor(gi)
            t = inputs[i]
            shape = t._value.shape
            gshape = gi._value.shape
            if gshape != shape and gshape[len(gshape) - len(shape):] != shape:
                raise ValueError(f"The gradient function of {rec.type!r} returned a gradient of shape {gi.shape} "
                                 f"for an input of shape {t.shape}")
            key = t._id
            previous = grads.get(key)
            grads[key] = gi if previous is None else math_ops.add(previous, gi)
    return [grads.get(s) for s in source_ids]


# ------------------------------------------------------------- the tape ---
def _as_source(s):
    if isinstance(s, Variable):
        return s._read_tensor
    if isinstance(s, Tensor):
        return s
    if s is None:
        raise TypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    raise TypeError(f"gradient sources must be tf.Tensor or tf.Variable objects (or nests of them), "
                    f"got {s!r} of type {type(s).__name__!r}")


def _as_target(t):
    if isinstance(t, Variable):
        return t._read_tensor
    if isinstance(t, Tensor):
        return t
    if t is None:
        raise TypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    raise TypeError(f"gradient targets must be tf.Tensor or tf.Variable objects (or nests of them), "
                    f"got {t!r} of type {type(t).__name__!r}")


class GradientTape:
    """Records operations for automatic differentiation (``tf.GradientTape``)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._tape = None
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._watched_variables = ()
        self._recording = False

    # -- recording control ---------------------------------------------------
    def __enter__(self):
        self._push_tape()
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._pop_tape()

    def _push_tape(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        if self._tape is None:
            self._tape = TapeState(self._persistent, self._watch_accessed_variables)
        recording.push_tape(self._tape)
        self._recording = True

    def _pop_tape(self):
        if not self._recording:
            raise ValueError("Tape is not recording.")
        recording.pop_tape(self._tape)
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops recording on this tape (other tapes keep recording)."""
        if self._tape is None:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._pop_tape()
        try:
            yield
        finally:
            self._push_tape()

    def reset(self):
        """Drops everything recorded and watched so far, keeping the tape active."""
        self._pop_tape()
        self._tape = None
        self._push_tape()

    def watch(self, tensor):
        """Ensures that ``tensor`` (a Tensor, Variable or nest of them) is traced by this tape."""
        if self._tape is None:
            raise RuntimeError("GradientTape.watch() was called on a tape that is not active; call it inside "
                               "`with tf.GradientTape() as tape:` (a non-persistent tape is released by gradient()).")
        for t in nest.flatten(tensor):
            if isinstance(t, Variable):
                self._tape.variables[t._id] = t
            elif not isinstance(t, Tensor):
                raise ValueError(f"Passed in object {t} of type {type(t).__name__!r}, not tf.Tensor or tf.Variable "
                                 "or ExtensionType.")
            if not _is_trainable_dtype(t):
                warn_first_n(f"The dtype of the watched tensor must be floating (e.g. tf.float32), got {t.dtype!r}", 5)
                continue
            self._tape.ids.add(t._id)
            self._tape.roots.add(t._id)

    def watched_variables(self):
        """The variables watched by this tape, in creation order."""
        if self._tape is not None:
            return tuple(sorted(self._tape.variables.values(), key=lambda v: v._id))
        return self._watched_variables

    # -- gradients -------------------------------------------------------------
    def _begin_gradient(self):
        """Checks the tape is usable; a non-persistent tape stops recording, a persistent one warns."""
        if self._tape is None:
            raise RuntimeError(_CONSUMED)
        if self._recording:
            if not self._persistent:
                self._pop_tape()
            else:
                warn_first_n(_IN_CONTEXT_WARNING, 1)

    def _release_if_not_persistent(self):
        if not self._persistent:
            self._watched_variables = self.watched_variables()
            self._tape = None

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of ``target`` (summed over its elements and nested parts) w.r.t. ``sources``.

        The result has the structure of ``sources``.
        """
        self._begin_gradient()
        unconnected = _parse_unconnected(unconnected_gradients)
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, Variables or "
                            "CompositeTensors to be differentiated, but received None.")
        flat_targets = [_as_target(t) for t in nest.flatten(target)]
        flat_sources = [_as_source(s) for s in nest.flatten(sources)]
        target_grads = self._seed_gradients(flat_targets, output_gradients)
        grads = backward(self._tape, flat_targets, target_grads, [s._id for s in flat_sources])
        self._release_if_not_persistent()
        result = []
        for s, g in zip(flat_sources, grads):
            if g is None and unconnected is UnconnectedGradients.ZERO:
                g = Tensor(np.zeros(s._value.shape, s._value.dtype))
            elif g is not None and g._value.dtype != s._value.dtype and s._value.dtype.kind in "fc":
                g = math_ops.cast(g, s.dtype)
            result.append(g)
        return nest.pack_sequence_as(sources, result)

    @staticmethod
    def _seed_gradients(targets, output_gradients):
        if output_gradients is None:
            return [Tensor(np.ones(t._value.shape, t._value.dtype)) for t in targets]
        given = nest.flatten(output_gradients)
        seeds = []
        for i, t in enumerate(targets):
            og = given[i] if i < len(given) else None
            if og is None:
                seeds.append(Tensor(np.ones(t._value.shape, t._value.dtype)))
                continue
            og = convert_to_tensor(og, dtype_hint=t.dtype)
            if og._value.dtype != t._value.dtype:
                raise ValueError(f"output_gradients[{i}] has dtype {og.dtype.name} but target {i} has dtype "
                                 f"{t.dtype.name}")
            if og._value.shape != t._value.shape:
                try:
                    og = Tensor(np.broadcast_to(og._value, t._value.shape))
                except ValueError:
                    raise ValueError(f"output_gradients[{i}] has shape {og.shape}, which does not broadcast to "
                                     f"the shape {t.shape} of target {i}") from None
            seeds.append(og)
        return seeds

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...] for every element pair: shape target.shape + source.shape."""
        if self._tape is None:
            raise RuntimeError(_CONSUMED)
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError("GradientTape must be created with persistent=True to compute the jacobian with "
                               "eager execution enabled and with experimental_use_pfor set to False.")
        self._begin_gradient()
        unconnected = _parse_unconnected(unconnected_gradients)
        target = self._single_tensor(target, "jacobian", "target")
        flat_sources = [_as_source(s) for s in nest.flatten(sources)]
        t_shape = target._value.shape
        if len(flat_sources) == 1 and self._proven_block_diagonal(target, flat_sources[0]):
            stacked = [self._block_diagonal_jacobian(target, flat_sources[0])]
        else:
            stacked = self._stacked_backward(target, flat_sources, int(np.prod(t_shape, dtype=np.int64)), per_row=None)
        self._release_if_not_persistent()
        result = []
        for s, g in zip(flat_sources, stacked):
            shape = t_shape + s._value.shape
            if g is None:
                g = Tensor(np.zeros(shape, s._value.dtype)) if unconnected is UnconnectedGradients.ZERO else None
            else:
                g = array_ops.reshape(g, shape)
            result.append(g)
        return nest.pack_sequence_as(sources, result)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example jacobians: target [b, y...] and source [b, x...] give [b, y..., x...].

        Like TensorFlow, this assumes example i of the target depends only on
        example i of the source; it does not check it.
        """
        if self._tape is None:
            raise RuntimeError(_CONSUMED)
        if not self._persistent:
            if not experimental_use_pfor:
                raise RuntimeError("GradientTape must be created with persistent=True to compute the batch_jacobian "
                                   "with eager execution enabled and with experimental_use_pfor set to False.")
            if parallel_iterations is not None:
                raise RuntimeError("GradientTape must be created with persistent=True to compute the batch_jacobian "
                                   "with parallel_iterations.")
        target = self._single_tensor(target, "batch_jacobian", "target")
        src = _as_source(self._single_tensor(source, "batch_jacobian", "source"))
        for t in (target, src):
            if t._value.ndim < 2:
                raise ValueError(f"Shape {t.shape} must have rank at least 2")
        if target._value.shape[0] != src._value.shape[0]:
            raise ValueError(f"Need first dimension of target shape ({target.shape}) and source shape "
                             f"({src.shape}) to match.")
        self._begin_gradient()
        _parse_unconnected(unconnected_gradients)
        batch, y_shape = target._value.shape[0], target._value.shape[1:]
        per_example = int(np.prod(y_shape, dtype=np.int64))
        (g,) = self._stacked_backward(target, [src], per_example, per_row=batch)
        self._release_if_not_persistent()
        x_shape = src._value.shape[1:]
        if g is None:
            # Unconnected gives zeros even with UnconnectedGradients.NONE, as in TensorFlow.
            return Tensor(np.zeros((batch,) + y_shape + x_shape, src._value.dtype))
        g = array_ops.reshape(g, (per_example, batch) + x_shape)
        g = array_ops.transpose(g, [1, 0] + list(range(2, 2 + len(x_shape))))
        return array_ops.reshape(g, (batch,) + y_shape + x_shape)

    def _proven_block_diagonal(self, target, source):
        """Whether target [b, ...] and source [b, ...] share a batch axis whose rows every op on the
        tape between them keeps independent (declared batching rules; nothing is sampled)."""
        t_shape, s_shape = target._value.shape, source._value.shape
        return (len(t_shape) >= 1 and len(s_shape) >= 1 and t_shape[0] == s_shape[0] >= 2
                and _is_trainable_dtype(target)
                and proven_block_diagonal(self._tape.records, source._id, target._id))

    def _block_diagonal_jacobian(self, target, source):
        """The full jacobian of a target proven block-diagonal over the batch: batch_jacobian's
        blocks placed on the diagonal (None when the target does not depend on the source)."""
        t_shape, s_shape = target._value.shape, source._value.shape
        batch = t_shape[0]
        per_example = int(np.prod(t_shape[1:], dtype=np.int64))
        (g,) = self._stacked_backward(target, [source], per_example, per_row=batch)
        if g is None:
            return None
        if recording_anything() or recording.tracing_graph() is not None:
            # an enclosing tape differentiates the jacobian, or a tf.function traces it (numpy here would
            # bake this call's jacobian into the graph as a constant): assemble with ops
            blocks = array_ops.reshape(g, (per_example, batch, -1))
            eye = Tensor(np.eye(batch, dtype=g._value.dtype))
            dense = math_ops.einsum("ybx,bc->bycx", blocks, eye)
            return array_ops.reshape(dense, t_shape + s_shape)
        blocks = g._value.reshape(per_example, batch, -1)
        dense = np.zeros((batch, per_example, batch, blocks.shape[2]), blocks.dtype)
        diagonal = np.arange(batch)
        dense[diagonal, :, diagonal, :] = blocks.transpose(1, 0, 2)
        return Tensor(dense.reshape(t_shape + s_shape))

    @staticmethod
    def _single_tensor(value, method, what):
        if isinstance(value, (Tensor, Variable)):
            return value._read_tensor if isinstance(value, Variable) else value
        raise TypeError(f"{method}: {what} must be a single tf.Tensor, got {type(value).__name__}")

    def _stacked_backward(self, target, sources, n, per_row):
        """Backward passes seeded with one-hot cotangents, in blocks; returns (n, *source.shape) per source.

        Without ``per_row`` the seeds are the n one-hot vectors of the flattened
        target. With ``per_row=b`` (batch_jacobian) seed k is one-hot at
        position k of every one of the b examples at once.
        """
        if not _is_trainable_dtype(target):
            return [None] * len(sources)
        t_shape = target._value.shape
        dtype = target._value.dtype
        block = max(1, min(n, _JACOBIAN_BLOCK_ELEMENTS // max(1, int(np.prod(t_shape)))))
        pieces = [[] for _ in sources]
        block_sizes = []
        for start in range(0, n, block):
            rows = np.arange(start, min(n, start + block))
            block_sizes.append(len(rows))
            if per_row is None:
                seeds = np.zeros((len(rows), n), dtype)
                seeds[np.arange(len(rows)), rows] = 1
            else:
                seeds = np.zeros((len(rows), per_row, n), dtype)
                seeds[np.arange(len(rows)), :, rows] = 1
            seeds = Tensor(seeds.reshape((len(rows),) + t_shape))
            grads = backward(self._tape, [target], [seeds], [s._id for s in sources])
            for piece, g in zip(pieces, grads):
                piece.append(g)
        out = []
        for s, piece in zip(sources, pieces):
            if all(g is None for g in piece):
                out.append(None)
                continue
            piece = [g if g is not None else Tensor(np.zeros((size,) + s._value.shape, s._value.dtype))
                     for g, size in zip(piece, block_sizes)]
            out.append(piece[0] if len(piece) == 1 else array_ops.concat(piece, 0))
        return out
