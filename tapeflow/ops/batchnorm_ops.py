"""Training-mode batch normalization as one fused op, with its gradient.

``FusedBatchNormTraining(x, gamma, beta)`` normalizes over every axis but the
last and also returns the batch mean and (biased) variance, which the
BatchNormalization layer folds into its moving statistics.

Its gradient takes the fused numba kernel (``FusedBatchNormGrad``) on the
plain path: one cotangent and nothing recording. When the cotangents are
stacked (jacobian, batch_jacobian) or a tape/accumulator is recording
(second order, forward mode), it is written with ordinary ops, which
broadcast over the stacked axes and are recorded by the enclosing tape.
"""
import numpy as np

from ..framework.recording import active_tapes, recording_anything
from ..framework.registry import RegisterGradient as _PerRowGradient
from . import array_ops, math_ops, reduction_ops
from .common import RegisterGradient, batch_ndim, execute, register_op, to_tensor


def _kernels():
    """The numba kernels, imported on first use (importing numba costs ~0.2 s)."""
    from ..kernels import batchnorm
    return batchnorm


@register_op("FusedBatchNormTraining", num_outputs=3)
def _fused_batch_norm_fwd(x, gamma, beta, epsilon):
    K = _kernels()
    channels = x.shape[-1]
    y, mean, var = K.train_forward(x.reshape(-1, channels), gamma, beta, epsilon)
    return y.reshape(x.shape), mean, var


@register_op("FusedBatchNormGrad", num_outputs=3)
def _fused_batch_norm_grad_fwd(dy, x, gamma, mean, var, g_mean, g_var, epsilon):
    K = _kernels()
    channels = x.shape[-1]
    dx, dgamma, dbeta = K.train_backward(dy.reshape(-1, channels), x.reshape(-1, channels), gamma, mean, var,
                                         g_mean, g_var, epsilon)
    return dx.reshape(x.shape), dgamma, dbeta


def _is_constant_zero(g):
    """A cotangent that is all zeros and watched by no tape contributes nothing."""
    if g is None:
        return True
    if np.any(g._value):
        return False
    return not any(g._id in tape.ids for tape in active_tapes())


def composite_grad(dy, x, gamma, mean, var, g_mean, g_var, epsilon):
    """(dx, dgamma, dbeta) with ordinary ops; ``dy`` may carry extra leading (stacked) axes."""
    M, R, A = math_ops, reduction_ops, array_ops
    r = x._value.ndim
    rows = x._value.size // max(1, x._value.shape[-1])
    axes = list(range(-r, -1))
    inv = M.rsqrt(M.add(var, epsilon))
    centered = M.subtract(x, mean)
    xhat = M.multiply(centered, inv)
    dbeta = R.reduce_sum(dy, axes) if axes else dy
    dgamma = R.reduce_sum(M.multiply(dy, xhat), axes) if axes else M.multiply(dy, xhat)
    dxhat = M.multiply(dy, gamma)
    mean_dxhat = R.reduce_mean(dxhat, axes, keepdims=True) if axes else dxhat
    mean_dxhat_xhat = (R.reduce_mean(M.multiply(dxhat, xhat), axes, keepdims=True) if axes
                       else M.multiply(dxhat, xhat))
    dx = M.multiply(inv, M.subtract(M.subtract(dxhat, mean_dxhat), M.multiply(xhat, mean_dxhat_xhat)))

    def per_channel(g):  # lead + (C,) -> lead + (1,)*(r-1) + (C,)
        lead = g._value.shape[:-1]
        return A.reshape(g, lead + (1,) * (r - 1) + g._value.shape[-1:])
    if not _is_constant_zero(g_mean):
        dx = M.add(dx, M.divide(per_channel(g_mean), float(rows)))
    if not _is_constant_zero(g_var):
        dx = M.add(dx, M.multiply(per_channel(g_var), M.multiply(centered, 2.0 / rows)))
    return dx, dgamma, dbeta


@RegisterGradient("FusedBatchNormTraining")
def _fused_batch_norm_grad(op, dy, g_mean, g_var):
    x, gamma, _ = op.inputs
    _, mean, var = op.outputs
    epsilon = op.attrs["epsilon"]
    if batch_ndim(op, dy) == 0 and not recording_anything():
        return execute("FusedBatchNormGrad", (dy, x, gamma, mean, var, g_mean, g_var), {"epsilon": epsilon})
    return composite_grad(dy, x, gamma, mean, var, g_mean, g_var, epsilon)


@_PerRowGradient("FusedBatchNormGrad")
def _fused_batch_norm_grad_grad(op, d_dx, d_dgamma, d_dbeta):
    """The VJP of FusedBatchNormGrad: differentiate the composite backward with an inner tape."""
    from ..backprop import GradientTape  # backprop sits above ops
    inputs = list(op.inputs)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([t for t in inputs if t._value.dtype.kind == "f"])
        outputs = composite_grad(*inputs, op.attrs["epsilon"])
    return tape.gradient(list(outputs), inputs, output_gradients=[d_dx, d_dgamma, d_dbeta])


def fused_batch_norm_training(x, gamma, beta, epsilon):
    """Normalizes ``x`` over every axis but the last; returns (y, batch_mean, batch_variance)."""
    x = to_tensor(x)
    gamma = math_ops.cast(to_tensor(gamma), x.dtype)
    beta = math_ops.cast(to_tensor(beta), x.dtype)
    channels = x._value.shape[-1]
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t._value.shape != (channels,):
            raise ValueError(f"fused_batch_norm_training: {name} must have shape ({channels},), got {t.shape}")
    if x._value.size == 0:
        raise ValueError(f"fused_batch_norm_training: cannot normalize an empty batch (input shape {x.shape})")
    return execute("FusedBatchNormTraining", (x, gamma, beta), {"epsilon": float(epsilon)})

