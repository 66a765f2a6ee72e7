"""Forward-mode autodiff: tf.autodiff.ForwardAccumulator.

No op needs a forward-mode rule: an op's JVP is obtained from its registered
gradient (a VJP, linear in the cotangent u) by the transpose trick
jvp(t) = d/du <vjp(u), t>, computed with an inner tape. Because the JVP is
built from ordinary ops, an enclosing tape can differentiate it
(forward-over-reverse Hessian-vector products) and enclosing accumulators see it.
"""
import numpy as np

from ..backprop import GradientTape, UnconnectedGradients, _parse_unconnected
from ..framework import nest
from ..framework.conversion import convert_to_tensor
from ..framework.logging_util import warn_first_n
from ..framework import recording
from ..framework.registry import lookup
from ..framework.tensor import Tensor
from ..framework.variables import Variable
from ..ops import math_ops, reduction_ops


def _primal_tensor(p):
    if isinstance(p, Variable):
        return p._read_tensor
    if isinstance(p, Tensor):
        return p
    raise TypeError(f"ForwardAccumulator primals must be tf.Tensor or tf.Variable objects, got {type(p).__name__}")


def _op_jvp(rec, input_tangents):
    """Output tangents of one recorded op, given its input tangents (None = zero)."""
    grad_fn = rec.grad_fn
    if grad_fn is None:
        grad_fn, _ = lookup(rec.type)
        if grad_fn is None:
            return [None] * len(rec.outputs)
    dummies = [Tensor(np.zeros(o._value.shape, o._value.dtype)) for o in rec.outputs]
    trainable = [d for d in dummies if d._value.dtype.kind in "fc"]
    if not trainable:
        return [None] * len(rec.outputs)
    with GradientTape(persistent=False, watch_accessed_variables=False) as inner:
        inner.watch(trainable)
        rec.skip_input_indices = tuple(i for i, t in enumerate(input_tangents) if t is None)
        vjps = grad_fn(rec, *dummies)
        if not isinstance(vjps, (list, tuple)):
            vjps = (vjps,)
        terms = [reduction_ops.reduce_sum(math_ops.multiply(convert_to_tensor(v), t))
                 for v, t in zip(vjps, input_tangents) if v is not None and t is not None]
        if not terms:
            return [None] * len(rec.outputs)
        inner_product = math_ops.add_n(terms)
    return inner.gradient(inner_product, dummies)


class ForwardAccumulator:
    """Computes Jacobian-vector products of the ops run inside its context."""

    def __init__(self, primals, tangents):
        nest.assert_same_structure(primals, tangents)
        self._tangents = {}
        self._recording = False
        for p, t in zip(nest.flatten(primals), nest.flatten(tangents)):
            p = _primal_tensor(p)
            if p._id in self._tangents:
                raise ValueError(f"Tensor {p!r} was specified as a primal multiple times. This may indicate an "
                                 "error. If it was intended, please sum the corresponding tangents.")
            if p._value.dtype.kind != "f":
                warn_first_n(f"The dtype of the watched primal must be floating (e.g. tf.float32), got {p.dtype!r}", 5)
            t = convert_to_tensor(t, dtype=p.dtype) if not isinstance(t, Tensor) else t
            if t._value.dtype != p._value.dtype:
                raise ValueError(f"Tensor conversion requested dtype {p.dtype.name} for Tensor with dtype "
                                 f"{t.dtype.name}: {t!r}")
            if t._value.shape != p._value.shape:
                raise ValueError(f"ForwardAccumulator: tangent shape {t.shape} does not match primal shape {p.shape}")
            self._tangents[p._id] = t

    def __enter__(self):
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        recording.push_accumulator(self)
        self._recording = True
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            recording.pop_accumulator(self)
            self._recording = False

    def _process(self, rec):
        tangents = [self._tangents.get(t._id) for t in rec.inputs]
        if all(t is None for t in tangents):
            return
        with recording.accumulators_hidden_from(self):  # only those entered before it see the JVP
            out_tangents = _op_jvp(rec, tangents)
        for o, t in zip(rec.outputs, out_tangents):
            if t is not None and o._value.dtype.kind in "fc":
                self._tangents[o._id] = t

    def _alias(self, sources, targets):
        """Gives ``targets`` the tangents of ``sources`` (outputs renamed by custom_gradient)."""
        for s, t in zip(sources, targets):
            if s._id in self._tangents:
                self._tangents[t._id] = self._tangents[s._id]

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """Tangents of ``primals`` (a tensor or nest), None where unconnected."""
        unconnected = _parse_unconnected(unconnected_gradients)

        def one(p):
            p = _primal_tensor(p)
            t = self._tangents.get(p._id)
            if t is None and unconnected is UnconnectedGradients.ZERO:
                t = Tensor(np.zeros(p._value.shape, p._value.dtype))
            return t
        return nest.map_structure(one, primals)
