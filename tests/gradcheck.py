"""Shared gradient checkers for the op tests.

* ``check_gradients(f, *inputs)``: the tape's vector-Jacobian product with a
  random cotangent (``output_gradients``) against central finite differences
  in float64.
* ``check_jacobian(f, *inputs)``: ``tape.jacobian`` (one vectorised backward
  pass with stacked cotangents) against a per-element loop of
  ``tape.gradient`` with one-hot ``output_gradients``.
* ``vjp_fn(f, seed)``: the function ``x -> d<ct, f(x)>/dx`` computed with an
  inner tape, for higher derivatives: ``check_gradients(vjp_fn(f), x)``
  compares the tape's second derivative with finite differences of the first.

``f`` takes Tensors and returns a Tensor or a list/tuple of Tensors (entries
may be None: they are treated as constant zero outputs).
"""
import numpy as np

import tapeflow as tf


def _arrays(inputs):
    return [np.array(a, dtype=np.float64) for a in inputs]


def _outputs(y):
    """f's result as a list of Tensors (entries may be None)."""
    ys = list(y) if isinstance(y, (list, tuple)) else [y]
    return ys


def random_cotangents(ys, seed=0):
    rng = np.random.default_rng(seed)
    return [None if y is None else rng.uniform(-1.0, 1.0, size=tuple(y.shape)).astype(y.dtype.name) for y in ys]


def _weighted(f, arrays, cts):
    ys = _outputs(f(*[tf.constant(a) for a in arrays]))
    total = 0.0
    for y, ct in zip(ys, cts):
        if y is not None:
            total += float(np.sum(np.asarray(y.numpy(), np.float64) * ct))
    return total


def numeric_vjp(f, arrays, cts, eps=1e-6):
    """Central finite differences of <ct, f(x)> with respect to every input."""
    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (_weighted(f, plus, cts) - _weighted(f, minus, cts)) / (2 * eps)
        grads.append(g)
    return grads


def tape_vjp(f, arrays, cts):
    xs = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        ys = _outputs(f(*xs))
    pairs = [(y, ct) for y, ct in zip(ys, cts) if y is not None]
    targets = [y for y, _ in pairs]
    ogs = [tf.constant(ct) for _, ct in pairs]
    return tape.gradient(targets, xs, output_gradients=ogs)


def check_gradients(f, *inputs, atol=1e-6, rtol=1e-5, eps=1e-6, seed=0, allow_none=False):
    """Asserts the tape gradient of <ct, f(*inputs)> matches central finite differences.

    Returns the tape gradients (numpy arrays) for further assertions.
    """
    arrays = _arrays(inputs)
    ys = _outputs(f(*[tf.constant(a) for a in arrays]))
    cts = random_cotangents(ys, seed)
    analytic = tape_vjp(f, arrays, cts)
    numeric = numeric_vjp(f, arrays, cts, eps)
    out = []
    for i, (a, g, n) in enumerate(zip(arrays, analytic, numeric)):
        if g is None:
            assert allow_none, f"input {i}: tape gradient is None (finite differences give {n})"
            g = np.zeros_like(a)
        else:
            assert tuple(g.shape) == a.shape, f"input {i}: gradient shape {tuple(g.shape)} != input shape {a.shape}"
            assert g.dtype == tf.float64, f"input {i}: gradient dtype {g.dtype} is not float64"
            g = g.numpy()
        np.testing.assert_allclose(g, n, atol=atol, rtol=rtol, err_msg=f"gradient of input {i}")
        out.append(g)
    return out


def check_jacobian(f, *inputs, atol=1e-10, rtol=1e-9):
    """Asserts tape.jacobian(f(x), x) equals a per-element loop of one-hot tape.gradient calls.

    ``f`` must return a single Tensor here.
    """
    xs = [tf.constant(a) for a in _arrays(inputs)]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = f(*xs)
    jac = tape.jacobian(y, xs)
    y_shape = tuple(y.shape)
    n = int(np.prod(y_shape, dtype=np.int64))
    loop = [np.zeros((n,) + tuple(x.shape)) for x in xs]
    connected = [False] * len(xs)
    for k in range(n):
        onehot = np.zeros(n, y.dtype.name)
        onehot[k] = 1
        grads = tape.gradient(y, xs, output_gradients=tf.constant(onehot.reshape(y_shape)))
        for i, g in enumerate(grads):
            if g is not None:
                connected[i] = True
                loop[i][k] = g.numpy()
    for i, (x, j) in enumerate(zip(xs, jac)):
        if not connected[i]:
            assert j is None, f"input {i}: jacobian is not None but every per-element gradient is"
            continue
        assert j is not None, f"input {i}: jacobian is None but per-element gradients exist"
        assert tuple(j.shape) == y_shape + tuple(x.shape), f"input {i}: jacobian shape {tuple(j.shape)}"
        np.testing.assert_allclose(j.numpy().reshape(loop[i].shape), loop[i], atol=atol, rtol=rtol,
                                   err_msg=f"jacobian of input {i}")
    return [None if j is None else j.numpy() for j in jac]


def vjp_fn(f, seed=1):
    """x -> gradient of <ct, f(x)> computed with an inner tape (recorded by any outer tape).

    The cotangent ``ct`` is fixed (drawn once from ``seed`` on first use), so
    the returned function is a plain differentiable function of x.
    """
    cache = {}

    def first_derivative(*xs):
        with tf.GradientTape() as inner:
            inner.watch(list(xs))
            ys = _outputs(f(*xs))
        if "cts" not in cache:
            cache["cts"] = random_cotangents(ys, seed)
        pairs = [(y, ct) for y, ct in zip(ys, cache["cts"]) if y is not None]
        grads = inner.gradient([y for y, _ in pairs], list(xs),
                               output_gradients=[tf.constant(ct) for _, ct in pairs])
        return list(grads)

    return first_derivative


def single(f, index=0):
    """Selects output ``index`` of a multi-output ``f`` (for check_jacobian)."""
    return lambda *xs: f(*xs)[index]


def jacobian_fn(f):
    """x -> tape.jacobian(f(x), x) computed with an inner tape (for derivatives of a jacobian).

    The inner jacobian runs the backward pass with stacked cotangents, so the
    gradient ops it records carry an extra leading axis; differentiating them
    again checks that their own gradients undo that broadcasting.
    """
    def jac(*xs):
        with tf.GradientTape() as inner:
            inner.watch(list(xs))
            y = f(*xs)
        return list(inner.jacobian(y, list(xs)))

    return jac
