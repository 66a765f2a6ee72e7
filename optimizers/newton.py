"""Newton: damped second-order steps for small models (the advanced guide's Newton update).

Each step solves (H + damping * I) d = g and moves the variables by
``-learning_rate * d``. ``method="exact"`` forms the full Hessian across all
variables (for up to a few thousand parameters); ``method="cg"`` is
Hessian-free: conjugate gradient on Hessian-vector products.

A Newton step needs the loss function, not only its gradient: use
``minimize(loss_fn, var_list)`` (a Keras ``fit`` calls it when the optimizer
sets ``needs_loss_function``).
"""
from tapeflow import autodiff

from .base_optimizer import Optimizer


class Newton(Optimizer):
    """Damped Newton steps (exact Hessian or Newton-CG).

    Args:
        learning_rate: Step size multiplying the Newton direction. Defaults to 1.0.
        damping: Added to the Hessian's diagonal (Levenberg-style), > 0 keeps
            the system solvable where the Hessian is singular.
        method: ``"exact"`` (full Hessian, small models) or ``"cg"`` (Hessian-free).
        max_cg_iterations, cg_tolerance: Conjugate-gradient limits for ``method="cg"``.
    """
    needs_loss_function = True

    def __init__(self, learning_rate=1.0, damping=1e-3, method="exact", max_cg_iterations=20, cg_tolerance=1e-6,
                 name="newton", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        if method not in ("exact", "cg"):
            raise ValueError(f"Newton: `method` must be 'exact' or 'cg'. Received: method={method!r}")
        if damping < 0:
            raise ValueError(f"Newton: `damping` must be >= 0. Received: damping={damping!r}")
        self.damping = float(damping)
        self.method = method
        self.max_cg_iterations = int(max_cg_iterations)
        self.cg_tolerance = float(cg_tolerance)

    def minimize(self, loss, var_list, tape=None):
        """One Newton step on the zero-argument callable ``loss``; returns the loss before the step."""
        if not callable(loss):
            raise ValueError("Newton needs the loss as a zero-argument callable, e.g. "
                             "optimizer.minimize(lambda: loss_fn(model(x), y), model.trainable_variables)")
        var_list = list(var_list() if callable(var_list) else var_list)
        if not self.built:
            self.build(var_list)
        learning_rate = float(self.learning_rate)
        if self.method == "exact":
            value = autodiff.newton_step(loss, var_list, damping=self.damping, learning_rate=learning_rate)
        else:
            value = autodiff.newton_cg_step(loss, var_list, damping=self.damping, learning_rate=learning_rate,
                                            max_iterations=self.max_cg_iterations, tolerance=self.cg_tolerance)
        self.iterations.assign_add(1)
        return value

    def update_step(self, gradient, variable, learning_rate):
        raise TypeError("Newton cannot step from gradients alone: it needs the loss function. Use "
                        "optimizer.minimize(loss_fn, var_list).")

    def get_config(self):
        config = super().get_config()
        config.update({"damping": self.damping, "method": self.method,
                       "max_cg_iterations": self.max_cg_iterations, "cg_tolerance": self.cg_tolerance})
        return config
