"""ApplyAdam as a compiled program runs it: the op's scalars derived once, the kernel called directly.

The ApplyAdam state op (ops/training_ops.py) re-derives at every call what a traced node fixes
for good: its dtype, its ``1 - beta`` constants, its kernel. Here those are derived when the
program is built, from the node's attributes and the variables' dtype, with the op's own
expressions in the op's order; each call computes only what depends on the step (the bias
correction ``alpha``, once for all the Adam nodes of a step that share it), checks the
variables against the gradient as the op does, and calls the same fused kernel on the
variables' storage. So the update is the op's, bit for bit. A call that does not fit (another
shape, a non-float gradient) runs the op itself, which raises its own error.
"""
import numpy as np

from ..kernels import optimizers
from ..ops.training_ops import compute_dtype

_ALPHAS = {}      # (dtype, beta_1, beta_2, learning rate, iteration) -> alpha, shared by the Adam nodes of a step
_ALPHAS_KEPT = 64


def applies(attrs, variable_dtypes):
    """Whether ApplyAdam with these attributes, on variables of these dtypes, has this form: plain Adam
    (w, m, v, not AMSGrad) on float32 or float64 variables, computed in their own dtype."""
    if len(attrs.get("variables", ())) != 3 or len(set(variable_dtypes)) != 1:
        return False
    dtype = variable_dtypes[0]
    return dtype in (np.dtype(np.float32), np.dtype(np.float64)) and compute_dtype(dtype) == dtype


class AdamStep:
    """``step(variables, gradient, learning_rate, iteration)`` as ApplyAdam's forward with ``own`` attributes."""

    binds_attrs = True      # the program calls it without the node's attributes

    def __init__(self, own, dtype, forward):
        dt = compute_dtype(dtype)
        self.dt, self.dtype, self.forward, self.own = dt, np.dtype(dtype), forward, own
        self.decay, self.wd = bool(own["decay"]), dt(own["weight_decay"])
        self.beta_1, self.beta_2 = dt(own["beta_1"]), dt(own["beta_2"])
        self.c1, self.c2, self.eps = dt(1 - own["beta_1"]), dt(1 - own["beta_2"]), dt(own["epsilon"])
        self.one = dt(1)
        self.key = (self.dtype.str, float(self.beta_1), float(self.beta_2))

    def alpha(self, lr, iteration):
        """The op's step size for learning rate ``lr`` (of the compute dtype) at ``iteration``, computed once
        per distinct value (a pure function of them, so the memo is exact)."""
        key = self.key + (float(lr), int(iteration))
        alpha = _ALPHAS.get(key)
        if alpha is None:
            one = self.one
            t = self.dt(int(iteration) + 1)
            alpha = lr * np.sqrt(one - self.beta_2 ** t) / (one - self.beta_1 ** t)
            if len(_ALPHAS) >= _ALPHAS_KEPT:
                _ALPHAS.clear()
            _ALPHAS[key] = alpha
        return alpha

    def __call__(self, variables, gradient, learning_rate, iteration):
        w, m, v = variables
        shape = np.shape(gradient)
        if not (type(gradient) is np.ndarray and gradient.dtype == self.dtype and w._storage.dtype == self.dtype
                and w._storage.shape == shape and m._storage.shape == shape and v._storage.shape == shape
                and m._storage.dtype == self.dtype and v._storage.dtype == self.dtype):
            return self.forward(variables, gradient, learning_rate, iteration, **self.own)
        lr = self.dt(learning_rate)
        alpha = self.alpha(lr, iteration)
        arrays = [w._write_inplace().reshape(-1), gradient.reshape(-1), m._write_inplace().reshape(-1),
                  v._write_inplace().reshape(-1)]
        optimizers.run(optimizers.adam, arrays, (self.decay, self.wd, lr, alpha, self.c1, self.c2, self.eps))
