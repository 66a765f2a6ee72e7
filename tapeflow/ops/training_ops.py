"""Optimizer updates as state ops (TensorFlow's ``ResourceApplyAdam`` and family).

Each op takes the variable and its slot variables, the gradient, the learning
rate and the step (the optimizer's ``iterations`` before it is incremented)
and runs a fused kernel of ``tapeflow.kernels.optimizers`` on the variables'
own storage: one pass over memory, every array read once and written once.
The scalars the kernels take (bias corrections, ``1 - beta``) are computed
here in the variable's compute dtype, one rounded operation at a time, so
the results match Keras's separate elementwise ops bit for bit.

``decay`` / ``weight_decay``: Keras's decoupled weight decay
``w - w * weight_decay * lr``, folded into the kernel's pass.

The ops are state ops (``register_state_op``): eager execution runs them, a
trace records them with the variables they update, replays run them and a
SavedModel stores them. Before touching memory every op checks that its
variables and gradient agree in shape and dtype, so a bad call (or a
tampered file) raises instead of writing out of bounds.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.recording import register_state_op


class _Kernels:
    """``tapeflow.kernels.optimizers``, imported on first use (it imports numba, which ``import tapeflow``
    must not pay for)."""

    def __getattr__(self, name):
        from ..kernels import optimizers
        return getattr(optimizers, name)


kernels = _Kernels()


def compute_dtype(np_dtype):
    """float32/float64 compute in their own dtype; half precision computes in float32."""
    return np.float64 if np_dtype == np.float64 else np.float32


def _checked(op_type, variables, gradient):
    """The variables' dtype, after checking every variable against the gradient's shape."""
    dtype = variables[0]._storage.dtype
    for v in variables:
        storage = v._storage
        if storage.dtype != dtype or dtype.kind != "f":
            raise InvalidArgumentError(f"{op_type}: variables must share one floating-point dtype; "
                                       f"got {dtype} and {storage.dtype}")
        if storage.shape != gradient.shape:
            raise InvalidArgumentError(f"{op_type}: variable '{v.name}' has shape {storage.shape}, which does not "
                                       f"match the shape {gradient.shape} of the update")
    return dtype


def _run(op_type, kernel, variables, gradient, scalars, slots=None):
    """``kernel(w, g, *slots, *scalars)`` in place on the variables' storage. ``slots``: the kernel's slot
    arguments in order, each one of ``variables`` or None for a slot the kernel leaves unused (default:
    ``variables[1:]``). Half-precision variables are computed in float32 and rounded back."""
    dtype = _checked(op_type, variables, gradient)
    dt = compute_dtype(dtype)
    g = np.ascontiguousarray(gradient, dtype=dt).reshape(-1)
    in_place = dtype == dt
    flat = {id(v): v._write_inplace().reshape(-1) if in_place else v._storage.astype(dt).reshape(-1)
            for v in variables}
    unused = np.empty(0, dt)
    slots = variables[1:] if slots is None else slots
    kernels.run(kernel, [flat[id(variables[0])], g, *[unused if s is None else flat[id(s)] for s in slots]],
                scalars)
    if not in_place:
        for v in variables:
            v._write_inplace()[...] = flat[id(v)].reshape(v._storage.shape)


def _rate(variables, learning_rate, decay, weight_decay):
    """(compute dtype, ``decay, wd, lr`` as the update kernels take them)."""
    dt = compute_dtype(variables[0]._storage.dtype)
    return dt, (bool(decay), dt(weight_decay), dt(learning_rate))


def _step(dt, iteration):
    """t = iterations + 1, in the compute dtype."""
    return dt(int(iteration) + 1)


@register_state_op("ApplySGD", variables=(1, 2))
def apply_sgd(variables, gradient, learning_rate, *, momentum, nesterov, decay, weight_decay):
    """``w -= lr * g``; with a momentum slot, ``m = momentum * m - lr * g`` and ``w += m``
    (``w += momentum * m - lr * g`` with ``nesterov``)."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    if len(variables) == 1:
        _run("ApplySGD", kernels.sgd, variables, gradient, rate)
    else:
        _run("ApplySGD", kernels.sgd_momentum, variables, gradient, rate + (dt(momentum), bool(nesterov)))


@register_state_op("ApplyAdam", variables=(3, 4))
def apply_adam(variables, gradient, learning_rate, iteration, *, beta_1, beta_2, epsilon, decay, weight_decay):
    """Adam on [w, m, v] (AMSGrad on [w, m, v, v_hat])."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    t = _step(dt, iteration)
    one = dt(1)
    alpha = rate[2] * np.sqrt(one - dt(beta_2) ** t) / (one - dt(beta_1) ** t)
    kernel = kernels.adam if len(variables) == 3 else kernels.adam_amsgrad
    _run("ApplyAdam", kernel, variables, gradient,
         rate + (alpha, dt(1 - beta_1), dt(1 - beta_2), dt(epsilon)))


@register_state_op("ApplyRMSProp", variables=(2, 4))
def apply_rmsprop(variables, gradient, learning_rate, *, rho, epsilon, momentum, centered, decay, weight_decay):
    """RMSprop on [w, velocity, (momentum if momentum > 0), (average gradient if centered)]."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    use_momentum = momentum > 0
    expected = 2 + use_momentum + bool(centered)
    if len(variables) != expected:
        raise InvalidArgumentError(f"ApplyRMSProp: expected {expected} variables for momentum={momentum}, "
                                   f"centered={centered}, got {len(variables)}")
    _, velocity, *rest = variables
    mom = rest.pop(0) if use_momentum else None
    avg = rest.pop(0) if centered else None
    _run("ApplyRMSProp", kernels.rmsprop, variables, gradient,
         rate + (dt(rho), dt(1 - rho), dt(epsilon), dt(momentum), use_momentum, bool(centered)),
         slots=[velocity, mom, avg])


@register_state_op("ApplyAdagrad", variables=2)
def apply_adagrad(variables, gradient, learning_rate, *, epsilon, decay, weight_decay):
    """Adagrad on [w, accumulator]."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    _run("ApplyAdagrad", kernels.adagrad, variables, gradient, rate + (dt(epsilon),))


@register_state_op("ApplyAdadelta", variables=3)
def apply_adadelta(variables, gradient, learning_rate, *, rho, epsilon, decay, weight_decay):
    """Adadelta on [w, accumulated gradient, accumulated delta]."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    _run("ApplyAdadelta", kernels.adadelta, variables, gradient, rate + (dt(rho), dt(1 - rho), dt(epsilon)))


@register_state_op("ApplyAdamax", variables=3)
def apply_adamax(variables, gradient, learning_rate, iteration, *, beta_1, beta_2, epsilon, decay, weight_decay):
    """Adamax on [w, m, u]."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    t = _step(dt, iteration)
    _run("ApplyAdamax", kernels.adamax, variables, gradient,
         rate + (dt(1 - beta_1), dt(beta_2), dt(epsilon), dt(1) - dt(beta_1) ** t))


def nadam_u(dt, beta_1, step):
    """Nadam's momentum schedule ``u_t = beta_1 * (1 - 0.5 * 0.96 ** t)``."""
    return dt(beta_1) * (dt(1) - dt(0.5) * dt(0.96) ** dt(step))


@register_state_op("ApplyNadam", variables=3)
def apply_nadam(variables, gradient, learning_rate, iteration, u_product, *, beta_1, beta_2, epsilon, decay,
                weight_decay):
    """Nadam on [w, m, v]; ``u_product`` is the product of the ``u`` up to this step (this step's included)."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    t = _step(dt, iteration)
    one = dt(1)
    u_t = nadam_u(dt, beta_1, t)
    u_next = nadam_u(dt, beta_1, t + one)
    product = dt(u_product)
    product_next = product * u_next
    _run("ApplyNadam", kernels.nadam, variables, gradient,
         rate + (one - dt(beta_1), one - dt(beta_2), dt(epsilon), u_next, one - u_t, one - product_next,
                 one - product, one - dt(beta_2) ** t))


@register_state_op("UpdateNadamProduct", variables=1)
def update_nadam_product(variables, iteration, *, beta_1):
    """``u_product *= u_t`` (once per step, before the variables' updates)."""
    (product,) = variables
    dt = compute_dtype(product._storage.dtype)
    t = _step(dt, iteration)
    value = dt(product._storage[()]) * dt(beta_1) * (dt(1) - dt(0.5) * dt(0.96) ** t)   # Keras's order
    product._write_inplace()[...] = value


@register_state_op("ApplyLion", variables=2)
def apply_lion(variables, gradient, learning_rate, *, beta_1, beta_2, decay, weight_decay):
    """Lion on [w, m]."""
    dt, rate = _rate(variables, learning_rate, decay, weight_decay)
    b1, b2 = dt(beta_1), dt(beta_2)
    _run("ApplyLion", kernels.lion, variables, gradient, rate + (b1, dt(1) - b1, b2, dt(1) - b2))


@register_state_op("ApplyMovingAverage", variables=1)
def apply_moving_average(variables, value, iteration, *, momentum):
    """``average = m * average + (1 - m) * value`` with ``m = momentum``, or 0 at the first step
    (``iteration == 0``) so that the average starts at the value."""
    dt = compute_dtype(variables[0]._storage.dtype)
    m = dt(0) if int(iteration) == 0 else dt(momentum)
    _run("ApplyMovingAverage", kernels.ema, variables, value, (m, dt(1) - m))


@register_state_op("AccumulateGradient", variables=1)
def accumulate_gradient(variables, gradient):
    """``accumulator += gradient``."""
    _run("AccumulateGradient", kernels.accumulate, variables, gradient, ())


@register_state_op("AssignVariable", variables=1)
def assign_variable(variables, value):
    """``variable = value``: an assignment as a state op, for updates taken under a condition
    (``gated``), such as resetting gradient accumulators every n steps."""
    (variable,) = variables
    if np.shape(value) != variable._storage.shape:
        raise InvalidArgumentError(f"AssignVariable: value of shape {np.shape(value)} for variable "
                                   f"'{variable.name}' of shape {variable._storage.shape}")
    variable._write_inplace()[...] = value
