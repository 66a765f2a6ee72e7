"""Second-order recipes of the advanced autodiff guide, one call each.

- ``hessian(f, variables)``: the full Hessian of a scalar loss across several
  variables of any shapes, as one flattened (n, n) matrix.
- ``flatten`` / ``unflatten``: the "careful concatenation and slicing" between
  per-variable tensors and one vector.
- ``hvp(f, variables, vectors)``: Hessian-vector products without forming the
  Hessian (reverse-over-reverse by default, or forward-over-reverse).
- ``newton_step`` and ``newton_cg_step``: damped Newton updates, exact or
  Hessian-free (conjugate gradient on hvp).
- ``input_gradient_norm``: the magnitude of the gradient with respect to the
  input (input-gradient regularisation, Finlay & Oberman 2019).
"""
import numpy as np

from ..backprop import GradientTape
from ..framework.conversion import convert_to_tensor
from ..framework.tensor import Tensor
from ..framework.variables import Variable
from ..ops import array_ops, linalg_ops, math_ops, reduction_ops
from .forwardprop import ForwardAccumulator


def _as_list(variables):
    if isinstance(variables, (Variable, Tensor)):
        return [variables]
    variables = list(variables)
    if not variables:
        raise ValueError("At least one variable is needed")
    return variables


def _zeros_if_none(grads, variables):
    return [g if g is not None else array_ops.zeros_like(convert_to_tensor(v)) for g, v in zip(grads, variables)]


def flatten(tensors):
    """One 1-D tensor holding ``tensors`` (any shapes) one after the other."""
    return array_ops.concat([array_ops.reshape(convert_to_tensor(t), [-1]) for t in tensors], axis=0)


def unflatten(vector, like):
    """Splits a 1-D ``vector`` back into tensors shaped like the variables in ``like``."""
    vector = convert_to_tensor(vector)
    like = _as_list(like)
    sizes = [int(np.prod(v.shape.as_list())) for v in like]
    if vector.shape.rank != 1 and not (vector.shape.rank == 2 and vector.shape[1] == 1):
        raise ValueError(f"unflatten: expected a vector, got shape {vector.shape}")
    vector = array_ops.reshape(vector, [-1])
    if vector.shape[0] != sum(sizes):
        raise ValueError(f"unflatten: the vector has {vector.shape[0]} elements but the variables have {sum(sizes)}")
    pieces = array_ops.split(vector, sizes) if len(sizes) > 1 else [vector]
    return [array_ops.reshape(p, v.shape.as_list()) for p, v in zip(pieces, like)]


def _gradients(f, variables, tape_kwargs=None):
    with GradientTape(**(tape_kwargs or {})) as tape:
        for v in variables:
            tape.watch(v)
        loss = f()
    return loss, _zeros_if_none(tape.gradient(loss, variables), variables)


def hessian(f, variables):
    """The Hessian of the scalar ``f()`` with respect to all ``variables``, as an (n, n) tensor.

    Rows and columns follow ``flatten(variables)`` order. One vectorised
    jacobian of the flattened gradient: no Python loop over parameters.
    """
    variables = _as_list(variables)
    with GradientTape() as outer:
        for v in variables:
            outer.watch(v)
        _, grads = _gradients(f, variables)
        flat_grad = flatten(grads)
    blocks = outer.jacobian(flat_grad, variables, unconnected_gradients="zero")
    n = flat_grad.shape[0]
    return array_ops.concat([array_ops.reshape(b, [n, -1]) for b in blocks], axis=1)


def hvp(f, variables, vectors, method="reverse"):
    """Hessian-vector product H @ v of the scalar ``f()``, one tensor per variable.

    ``method='reverse'`` differentiates <gradient, v> (reverse over reverse);
    ``method='forward'`` pushes v through the gradient computation with a
    ForwardAccumulator (forward over reverse). Both cost a small multiple of one gradient.
    """
    variables = _as_list(variables)
    vectors = [convert_to_tensor(v) for v in (_as_list(vectors) if not isinstance(vectors, Tensor) else [vectors])]
    if len(vectors) != len(variables):
        raise ValueError(f"hvp: {len(vectors)} vectors for {len(variables)} variables")
    for v, var in zip(vectors, variables):
        if v.shape != var.shape:
            raise ValueError(f"hvp: a vector of shape {v.shape} for a variable of shape {var.shape}")
    if method == "forward":
        with ForwardAccumulator(variables, vectors) as acc:
            _, grads = _gradients(f, variables)
        return _zeros_if_none([acc.jvp(g) for g in grads], variables)
    if method != "reverse":
        raise ValueError(f"hvp: unknown method {method!r}; use 'reverse' or 'forward'")
    with GradientTape() as outer:
        for v in variables:
            outer.watch(v)
        _, grads = _gradients(f, variables)
        inner_product = math_ops.add_n([reduction_ops.reduce_sum(g * math_ops.cast(v, g.dtype))
                                        for g, v in zip(grads, vectors)])
    return _zeros_if_none(outer.gradient(inner_product, variables), variables)


def _apply_step(variables, step):
    for var, d in zip(variables, step):
        if not isinstance(var, Variable):
            raise TypeError("newton steps update tf.Variable objects; got a tensor")
        var.assign_sub(math_ops.cast(d, var.dtype))


def newton_step(f, variables, damping=1e-3, learning_rate=1.0):
    """One damped Newton update: solve (H + damping*I) d = g, then variables -= learning_rate * d.

    Returns the loss before the step. Forms the full Hessian: for small models.
    """
    variables = _as_list(variables)
    h = hessian(f, variables)
    loss, grads = _gradients(f, variables)
    g = array_ops.reshape(flatten(grads), [-1, 1])
    n = g.shape[0]
    damped = h + array_ops.eye(n, dtype=h.dtype) * damping
    d = linalg_ops.solve(damped, g)
    _apply_step(variables, [s * learning_rate for s in unflatten(d, variables)])
    return loss


def newton_cg_step(f, variables, damping=1e-3, learning_rate=1.0, max_iterations=20, tolerance=1e-6):
    """Hessian-free Newton update: (H + damping*I) d = g solved by conjugate gradient on hvp.

    Never forms H: each iteration costs one Hessian-vector product. Returns the loss before the step.
    """
    variables = _as_list(variables)
    loss, grads = _gradients(f, variables)
    g = flatten(grads).numpy().astype(np.float64)

    def apply_matrix(p):
        hp = hvp(f, variables, unflatten(Tensor(p.astype(variables[0].dtype.as_numpy_dtype)), variables))
        return flatten(hp).numpy().astype(np.float64) + damping * p

    x = np.zeros_like(g)
    r = g.copy()
    p = r.copy()
    rs = r @ r
    g_norm = np.sqrt(g @ g)
    for _ in range(max_iterations):
        if np.sqrt(rs) <= tolerance * max(g_norm, 1e-30):
            break
        ap = apply_matrix(p)
        curvature = p @ ap
        if curvature <= 0:  # negative curvature: stop with the best step so far
            if not x.any():
                x = p
            break
        alpha = rs / curvature
        x += alpha * p
        r -= alpha * ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    step = unflatten(Tensor(x.astype(variables[0].dtype.as_numpy_dtype)), variables)
    _apply_step(variables, [s * learning_rate for s in step])
    return loss


def input_gradient_norm(model_or_fn, x, y=None, loss_fn=None, per_example=False):
    """Magnitude of the gradient of the output (or of ``loss_fn(y, output)``) with respect to ``x``.

    Without a loss it is the advanced guide's recipe: the gradient of
    sum(output**2). The inner tape watches only ``x``, so an enclosing tape can
    differentiate the result with respect to the model's weights. With
    ``per_example=True`` it returns the mean of the per-example L2 norms.
    """
    x = convert_to_tensor(x)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        out = model_or_fn(x)
        if loss_fn is not None:
            if y is None:
                raise ValueError("input_gradient_norm: loss_fn needs the targets y")
            target = loss_fn(y, out)
        else:
            target = reduction_ops.reduce_sum(out ** 2)
    g = tape.gradient(target, x)
    if g is None:
        raise ValueError("input_gradient_norm: the output does not depend on x")
    if per_example:
        rows = array_ops.reshape(g, [g.shape[0], -1])
        return reduction_ops.reduce_mean(math_ops.sqrt(reduction_ops.reduce_sum(rows * rows, axis=1) + 1e-12))
    return reduction_ops.norm(g)
