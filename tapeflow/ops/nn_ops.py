"""Neural-network ops: activations with fused gradient ops, softmax, cross-entropies, dropout."""
import numpy as np

from ..framework.batching import axis_attr_not_0, declare, elementwise, register_batching_rule
from ..framework.errors import InvalidArgumentError
from ..framework.recording import recording_anything
from ..framework.tensor import Tensor
from . import array_ops, math_ops, random_ops, reduction_ops, stateless_random_ops
from .common import RegisterGradient, batch_ndim, execute, normalize_axis, quietly, register_op, to_tensor


class _LazyKernels:
    """Stands for a kernel module until first use: importing numba costs ~0.2 s, which
    ``import tapeflow`` must not pay. On first attribute access the real module
    replaces this placeholder in the module globals."""

    def __init__(self, global_name, module_name):
        self._global_name = global_name
        self._module_name = module_name

    def __getattr__(self, attr):
        import importlib
        module = importlib.import_module(self._module_name)
        globals()[self._global_name] = module
        return getattr(module, attr)


K = _LazyKernels("K", "tapeflow.kernels.activations")
SK = _LazyKernels("SK", "tapeflow.kernels.softmax")


def _is_float(a):
    return a.dtype.kind == "f"


def _fused(kernel, numpy_fallback):
    """A forward that runs the numba kernel named ``kernel`` on floats and ``numpy_fallback`` (if any) on
    other dtypes."""
    def forward(*arrays, **params):
        if _is_float(arrays[0]):
            return K.apply(getattr(K, kernel), *arrays, params=tuple(params.values()))
        if numpy_fallback is None:
            raise InvalidArgumentError(f"{kernel} needs a floating-point tensor, got {arrays[0].dtype}")
        return numpy_fallback(*arrays, **params)
    return forward


# Gradients of the fused gradient ops (ReluGrad, EluGrad, ...). Their inputs are
# (upstream g, forward value); when g carries stacked cotangent axes (a jacobian
# recorded by an outer tape) the op broadcasts, so each gradient is summed back
# to its input's shape, keeping this backward pass's own stacked axes.
def _to_input(g, x, nb):
    return reduction_ops.sum_to(g, x._value.shape, nb)


def _zero_grad(x, grad, nb):
    """The zero gradient of a piecewise-linear op with respect to its forward value."""
    return Tensor(np.zeros(grad._value.shape[:nb] + x._value.shape, grad._value.dtype))


_NUMBA_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fused_grad(kernel, numpy_fallback):
    """``_fused`` for a gradient op ``(g, x) -> g * f'(x)``, elementwise and linear in ``g``.

    When ``g`` carries stacked cotangent axes that ``x`` lacks (a jacobian), f'(x)
    is computed once on ``x`` and broadcast: cheaper than copying ``x`` per row.
    Every kernel multiplies ``g`` by its slope (relu's too: ``g * (y > 0)``, as
    TensorFlow), so ``g * slope`` is the kernel's own result, inf and nan included.
    """
    dense = _fused(kernel, numpy_fallback)

    def forward(g, x, **params):
        if g.ndim > x.ndim and _is_float(g) and g.shape[g.ndim - x.ndim:] == x.shape and x.size:
            slope = dense(np.ones(x.shape, g.dtype), x, **params)
            if g.dtype in _NUMBA_FLOATS and g.flags.c_contiguous:
                rows = g.reshape(-1, x.size)
                out = np.empty_like(rows)
                K.scale_rows(rows, slope.reshape(-1), out)
                return out.reshape(g.shape)
            return quietly(np.multiply, g, slope)
        return dense(g, x, **params)
    return forward


# ----------------------------------------------------------------- relu ---
register_op("Relu")(_fused("relu", lambda x: np.maximum(x, 0).astype(x.dtype)))
register_op("ReluGrad")(_fused_grad("relu_grad", lambda g, y: (g * (y > 0)).astype(g.dtype)))


@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return execute("ReluGrad", (grad, op.outputs[0]))


@RegisterGradient("ReluGrad")
def _relu_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, y = op.inputs
    return _to_input(execute("ReluGrad", (grad, y)), g, nb), _zero_grad(y, grad, nb)


def relu(features, name=None):
    return execute("Relu", (to_tensor(features),))


register_op("Relu6")(_fused("relu6", lambda x: np.clip(x, 0, 6).astype(x.dtype)))
register_op("Relu6Grad")(_fused_grad("relu6_grad", lambda g, x: (g * ((x > 0) & (x < 6))).astype(g.dtype)))


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    return execute("Relu6Grad", (grad, op.inputs[0]))


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, x = op.inputs
    return _to_input(execute("Relu6Grad", (grad, x)), g, nb), _zero_grad(x, grad, nb)


def relu6(features, name=None):
    return execute("Relu6", (to_tensor(features),))


register_op("LeakyRelu")(_fused("leaky_relu", lambda x, alpha: np.where(x > 0, x, alpha * x).astype(x.dtype)))
register_op("LeakyReluGrad")(_fused_grad("leaky_relu_grad", lambda g, x, alpha: np.where(x > 0, g, alpha * g).astype(g.dtype)))


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return execute("LeakyReluGrad", (grad, op.inputs[0]), {"alpha": op.attrs["alpha"]})


@RegisterGradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, x = op.inputs
    return (_to_input(execute("LeakyReluGrad", (grad, x), {"alpha": op.attrs["alpha"]}), g, nb),
            _zero_grad(x, grad, nb))


def leaky_relu(features, alpha=0.2, name=None):
    return execute("LeakyRelu", (to_tensor(features),), {"alpha": float(alpha)})


# ------------------------------------------------------------- elu / selu ---
register_op("Elu")(_fused("elu", lambda x: np.where(x > 0, x, np.expm1(x)).astype(x.dtype)))
register_op("EluGrad")(_fused_grad("elu_grad", lambda g, y: np.where(y < 0, g * (y + 1), g).astype(g.dtype)))


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    return execute("EluGrad", (grad, op.outputs[0]))


@RegisterGradient("EluGrad")
def _elu_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, y = op.inputs
    negative = math_ops.less(y, 0)
    zero = Tensor(np.zeros((), grad._value.dtype))
    return (_to_input(execute("EluGrad", (grad, y)), g, nb),
            _to_input(array_ops.where(negative, math_ops.multiply(grad, g), zero), y, nb))


def elu(features, name=None):
    return execute("Elu", (to_tensor(features),))


register_op("Selu")(_fused("selu", None))
register_op("SeluGrad")(_fused_grad("selu_grad", None))


@RegisterGradient("Selu")
def _selu_grad(op, grad):
    return execute("SeluGrad", (grad, op.outputs[0]))


@RegisterGradient("SeluGrad")
def _selu_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, y = op.inputs
    negative = math_ops.less(y, 0)
    zero = Tensor(np.zeros((), grad._value.dtype))
    return (_to_input(execute("SeluGrad", (grad, y)), g, nb),
            _to_input(array_ops.where(negative, math_ops.multiply(grad, g), zero), y, nb))


def selu(features, name=None):
    return execute("Selu", (to_tensor(features),))


# ---------------------------------------------------------------- sigmoid ---
register_op("Sigmoid")(_fused("sigmoid", None))
register_op("SigmoidGrad")(_fused("sigmoid_grad", None))


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    return execute("SigmoidGrad", (op.outputs[0], grad))


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    y, g = op.inputs
    one_minus_2y = math_ops.subtract(1, math_ops.multiply(y, 2))
    return (_to_input(math_ops.multiply(math_ops.multiply(grad, g), one_minus_2y), y, nb),
            _to_input(execute("SigmoidGrad", (y, grad)), g, nb))


def sigmoid(x, name=None):
    x = to_tensor(x)
    if not _is_float(x._value):
        raise InvalidArgumentError(f"sigmoid needs a floating-point tensor, got {x.dtype.name}")
    return execute("Sigmoid", (x,))


# --------------------------------------------------------- softplus/sign ---
register_op("Softplus")(_fused("softplus", None))
register_op("SoftplusGrad")(_fused_grad("softplus_grad", None))


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return execute("SoftplusGrad", (grad, op.inputs[0]))


@RegisterGradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, x = op.inputs
    s = sigmoid(x)
    d2 = math_ops.multiply(s, math_ops.subtract(1, s))
    return (_to_input(execute("SoftplusGrad", (grad, x)), g, nb),
            _to_input(math_ops.multiply(math_ops.multiply(grad, g), d2), x, nb))


def softplus(features, name=None):
    return execute("Softplus", (to_tensor(features),))


register_op("Softsign")(_fused("softsign", None))
register_op("SoftsignGrad")(_fused_grad("softsign_grad", None))


@RegisterGradient("Softsign")
def _softsign_grad(op, grad):
    return execute("SoftsignGrad", (grad, op.inputs[0]))


@RegisterGradient("SoftsignGrad")
def _softsign_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, x = op.inputs
    d = math_ops.add(math_ops.abs(x), 1)
    d2 = math_ops.divide(math_ops.multiply(math_ops.sign(x), -2.0), math_ops.multiply(math_ops.square(d), d))
    return (_to_input(execute("SoftsignGrad", (grad, x)), g, nb),
            _to_input(math_ops.multiply(math_ops.multiply(grad, g), d2), x, nb))


def softsign(features, name=None):
    return execute("Softsign", (to_tensor(features),))


# -------------------------------------------------------------- bias+relu ---
def _rows(a):
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


@register_op("BiasRelu")
def _bias_relu_fwd(x, bias):
    if x.dtype in (np.float32, np.float64) and bias.dtype == x.dtype and x.ndim >= 1:
        out = np.empty(x.shape, x.dtype)
        K.bias_relu_rows(_rows(x), np.ascontiguousarray(bias), out.reshape(-1, x.shape[-1]))
        return out
    return np.maximum(x + bias, 0).astype(x.dtype)


@RegisterGradient("BiasRelu")
def _bias_relu_grad(op, grad):
    y = op.outputs[0]
    bias = op.inputs[1]
    nb = batch_ndim(op, grad)
    if nb == 0 and not recording_anything() and grad._value.dtype == y._value.dtype:
        return execute("BiasReluGrad", (grad, y))  # fused: mask and bias sums in one pass
    dx = execute("ReluGrad", (grad, y))
    return dx, reduction_ops.sum_to(dx, bias._value.shape, nb)


@register_batching_rule("BiasReluGrad")
def _bias_relu_grad_rows(op, batched):
    return elementwise(op, batched), False    # dbias sums over the rows


@register_op("BiasReluGrad", num_outputs=2)
def _bias_relu_grad_fwd(g, y):
    if g.dtype in (np.float32, np.float64) and g.ndim >= 1:
        dx = np.empty(g.shape, g.dtype)
        dbias = np.empty(g.shape[-1], g.dtype)
        K.bias_relu_grad_rows(_rows(g), _rows(y), dx.reshape(-1, g.shape[-1]), dbias)
        return dx, dbias
    dx = (g * (y > 0)).astype(g.dtype)
    return dx, dx.reshape(-1, g.shape[-1]).sum(0)


@RegisterGradient("BiasReluGrad")
def _bias_relu_grad_grad(op, grad_dx, grad_dbias):
    g, y = op.inputs
    nb = batch_ndim(op, grad_dx)
    # dx = mask * g and dbias = column sums of mask * g are linear in g.
    upstream = math_ops.add(grad_dx, grad_dbias) if nb == 0 else math_ops.add(
        grad_dx, array_ops.expand_dims(grad_dbias, -2) if g._value.ndim > 1 else grad_dbias)
    return execute("ReluGrad", (upstream, y)), _zero_grad(y, grad_dx, nb)


def bias_relu(x, bias, name=None):
    """relu(x + bias) with bias along the last axis, fused into one pass."""
    x, bias = to_tensor(x), to_tensor(bias)
    if bias._value.ndim != 1 or x._value.ndim < 1 or x._value.shape[-1] != bias._value.shape[0]:
        raise InvalidArgumentError(f"bias_relu: bias of shape {bias.shape} does not match the last axis of "
                                   f"x with shape {x.shape}")
    if x._value.dtype != bias._value.dtype:
        raise InvalidArgumentError(f"bias_relu: x is {x.dtype.name} but bias is {bias.dtype.name}")
    return execute("BiasRelu", (x, bias))


# ------------------------------------------------------------------- gelu ---
@register_op("Gelu")
def _gelu_fwd(x, approximate):
    return K.apply(K.gelu_tanh if approximate else K.gelu, x)


@register_op("GeluGrad")
def _gelu_grad_fwd(g, x, approximate):
    return K.apply(K.gelu_tanh_grad if approximate else K.gelu_grad, g, x)


@RegisterGradient("Gelu")
def _gelu_grad(op, grad):
    return execute("GeluGrad", (grad, op.inputs[0]), op.attrs)


@RegisterGradient("GeluGrad")
def _gelu_grad_grad(op, grad):
    nb = batch_ndim(op, grad)
    g, x = op.inputs
    M = math_ops
    if op.attrs["approximate"]:
        c, k = 0.7978845608028654, 0.044715
        x2 = M.square(x)
        t = M.tanh(M.multiply(M.add(x, M.multiply(M.multiply(x2, x), k)), c))
        du = M.multiply(M.add(M.multiply(x2, 3 * k), 1), c)
        d2u = M.multiply(x, 6 * k * c)
        one_minus_t2 = M.subtract(1, M.square(t))
        inner = M.add(M.subtract(du, M.multiply(M.multiply(x, t), M.square(du))), M.multiply(M.multiply(x, d2u), 0.5))
        second = M.multiply(one_minus_t2, inner)
    else:
        pdf = M.multiply(M.exp(M.multiply(M.square(x), -0.5)), 0.3989422804014327)
        second = M.multiply(pdf, M.subtract(2, M.square(x)))
    return (_to_input(execute("GeluGrad", (grad, x), op.attrs), g, nb),
            _to_input(M.multiply(M.multiply(grad, g), second), x, nb))


def gelu(features, approximate=False, name=None):
    x = to_tensor(features)
    if not _is_float(x._value):
        raise InvalidArgumentError(f"gelu needs a floating-point tensor, got {x.dtype.name}")
    return execute("Gelu", (x,), {"approximate": bool(approximate)})


def silu(features, beta=1.0, name=None):
    x = to_tensor(features)
    if beta == 1.0:
        return math_ops.multiply(x, sigmoid(x))
    return math_ops.multiply(x, sigmoid(math_ops.multiply(x, beta)))


swish = silu


# ---------------------------------------------------------------- softmax ---
def _move_last(x, axis):
    nd = x.ndim
    return x if axis in (-1, nd - 1) else np.moveaxis(x, axis, -1)


def _move_back(x, axis):
    nd = x.ndim
    return x if axis in (-1, nd - 1) else np.moveaxis(x, -1, axis)


declare(elementwise, "Relu", "ReluGrad", "Relu6", "Relu6Grad", "LeakyRelu", "LeakyReluGrad", "Elu", "EluGrad",
        "Selu", "SeluGrad", "Sigmoid", "SigmoidGrad", "Softplus", "SoftplusGrad", "Softsign", "SoftsignGrad",
        "BiasRelu", "Gelu", "GeluGrad")
declare(axis_attr_not_0("axis"), "Softmax", "LogSoftmax")


@register_op("Softmax")
def _softmax_fwd(x, axis):
    return _move_back(SK.softmax_last_axis(_move_last(x, axis)), axis)


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs["axis"] - y._value.ndim  # negative: valid for stacked cotangents too
    gy = math_ops.multiply(grad, y)
    return math_ops.subtract(gy, math_ops.multiply(y, reduction_ops.reduce_sum(gy, axis, keepdims=True)))


@register_op("LogSoftmax")
def _log_softmax_fwd(x, axis):
    return _move_back(SK.softmax_last_axis(_move_last(x, axis), log=True), axis)


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs["axis"] - y._value.ndim
    return math_ops.subtract(grad, math_ops.multiply(math_ops.exp(y), reduction_ops.reduce_sum(grad, axis, keepdims=True)))


def _softmax_args(logits, axis):
    x = to_tensor(logits)
    if not _is_float(x._value):
        raise InvalidArgumentError(f"softmax needs a floating-point tensor, got {x.dtype.name}")
    if x._value.ndim == 0:
        raise InvalidArgumentError("softmax needs a tensor of rank >= 1, got a scalar")
    return x, normalize_axis(int(axis), x._value.ndim)


def softmax(logits, axis=None, name=None):
    x, axis = _softmax_args(logits, -1 if axis is None else axis)
    return execute("Softmax", (x,), {"axis": axis})


def log_softmax(logits, axis=None, name=None):
    x, axis = _softmax_args(logits, -1 if axis is None else axis)
    return execute("LogSoftmax", (x,), {"axis": axis})


# ---------------------------------------------------------- cross-entropy ---
@register_op("SoftmaxCrossEntropyWithLogits", num_outputs=2)
def _softmax_xent_fwd(logits, labels):
    return SK.softmax_cross_entropy(logits, labels)


@register_batching_rule("SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits")
def _xent_rows(op, batched):
    """Losses of [examples, classes] logits: one row per example."""
    batch = op.inputs[0]._value.shape[0]
    return (op.outputs[0]._value.shape == (batch,)
            and all(t._value.shape[:1] == (batch,) and t._value.ndim == 2 for t, b in zip(op.inputs, batched) if b))


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_backprop=None):
    logits, labels = op.inputs
    g = array_ops.expand_dims(grad_loss, -1)
    if recording_anything():
        # Recompute with differentiable ops so an outer tape can take the next derivative.
        backprop = math_ops.subtract(softmax(logits), labels)
    else:
        backprop = op.outputs[1]
    g_logits = math_ops.multiply(g, backprop)
    g_labels = None
    if 1 not in op.skip_input_indices:
        g_labels = math_ops.multiply(g, math_ops.negative(log_softmax(logits)))
    return g_logits, g_labels


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    logits = to_tensor(logits)
    labels = to_tensor(labels, dtype=logits.dtype) if not isinstance(labels, Tensor) else labels
    if labels._value.shape != logits._value.shape:
        raise InvalidArgumentError(f"softmax_cross_entropy_with_logits: labels shape {labels.shape} and logits "
                                   f"shape {logits.shape} must match")
    axis = normalize_axis(int(axis), logits._value.ndim)
    if axis != logits._value.ndim - 1:
        perm = [a for a in range(logits._value.ndim) if a != axis] + [axis]
        logits, labels = array_ops.transpose(logits, perm), array_ops.transpose(labels, perm)
    return execute("SoftmaxCrossEntropyWithLogits", (logits, math_ops.cast(labels, logits.dtype)))[0]


@register_op("SparseSoftmaxCrossEntropyWithLogits", num_outputs=2)
def _sparse_softmax_xent_fwd(logits, labels):
    n = logits.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= n):
        bad = labels[(labels < 0) | (labels >= n)].ravel()[0]
        raise InvalidArgumentError(f"Received a label value of {bad} which is outside the valid range of [0, {n}).")
    return SK.sparse_softmax_cross_entropy(logits, labels)


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop=None):
    logits, labels = op.inputs
    g = array_ops.expand_dims(grad_loss, -1)
    if recording_anything():
        depth = logits._value.shape[-1]
        backprop = math_ops.subtract(softmax(logits), array_ops.one_hot(labels, depth, dtype=logits.dtype))
    else:
        backprop = op.outputs[1]
    return math_ops.multiply(g, backprop), None


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    logits = to_tensor(logits)
    labels = to_tensor(labels)
    if labels._value.dtype.kind not in "iu":
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels must be integers, got {labels.dtype.name}")
    if labels._value.shape != logits._value.shape[:-1]:
        raise InvalidArgumentError(f"sparse_softmax_cross_entropy_with_logits: labels shape {labels.shape} must equal "
                                   f"logits shape {logits.shape} without its last dimension")
    return execute("SparseSoftmaxCrossEntropyWithLogits", (logits, labels))[0]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)), stable for large |x|."""
    logits = to_tensor(logits)
    labels = to_tensor(labels, dtype=logits.dtype) if not isinstance(labels, Tensor) else labels
    if labels._value.shape != logits._value.shape:
        raise InvalidArgumentError(f"sigmoid_cross_entropy_with_logits: logits and labels must have the same shape "
                                   f"({logits.shape} vs {labels.shape})")
    M = math_ops
    # where() rather than relu/abs, so the gradient at logits == 0 is the true sigmoid(0) - labels.
    nonneg = M.greater_equal(logits, 0)
    zeros = M.zeros_like_(logits)
    relu_logits = array_ops.where(nonneg, logits, zeros)
    neg_abs_logits = array_ops.where(nonneg, M.negative(logits), logits)
    return M.add(M.subtract(relu_logits, M.multiply(logits, labels)), M.log1p(M.exp(neg_abs_logits)))


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    M = math_ops
    logits = to_tensor(logits)
    labels = to_tensor(labels, dtype=logits.dtype) if not isinstance(labels, Tensor) else labels
    pos_weight = to_tensor(pos_weight, dtype=logits.dtype) if not isinstance(pos_weight, Tensor) else pos_weight
    log_weight = M.add(M.multiply(M.subtract(pos_weight, 1), labels), 1)
    return M.add(M.multiply(M.subtract(1, labels), logits),
                 M.multiply(log_weight, M.add(M.log1p(M.exp(M.negative(M.abs(logits)))), relu(M.negative(logits)))))


# ------------------------------------------------------------------ misc ---
def l2_loss(t, name=None):
    return math_ops.divide(reduction_ops.reduce_sum(math_ops.square(to_tensor(t))), 2)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and (biased) variance over ``axes``, as tf.nn.moments.

    TensorFlow puts a stop_gradient on the mean inside the variance: harmless for
    first derivatives (that gradient is zero) but it makes second derivatives of
    the variance wrong. Here the mean stays connected, so Hessians are exact.
    float16 inputs are computed in float32 and cast back, as in TensorFlow.
    """
    x = to_tensor(x)
    half = x._value.dtype == np.float16
    if half:
        x = math_ops.cast(x, "float32")
    mean = reduction_ops.reduce_mean(x, axes, keepdims=True)
    variance = reduction_ops.reduce_mean(math_ops.squared_difference(x, mean), axes, keepdims=True)
    if half:
        mean, variance = math_ops.cast(mean, "float16"), math_ops.cast(variance, "float16")
    if not keepdims:
        mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    M = math_ops
    inv = M.rsqrt(M.add(variance, variance_epsilon))
    if scale is not None:
        inv = M.multiply(inv, scale)
    shift = M.negative(M.multiply(mean, inv))
    if offset is not None:
        shift = M.add(shift, offset)
    return M.add(M.multiply(x, M.cast(inv, to_tensor(x).dtype)), M.cast(shift, to_tensor(x).dtype))


def bias_add(value, bias, data_format=None, name=None):
    value, bias = to_tensor(value), to_tensor(bias)
    if bias._value.ndim != 1:
        raise InvalidArgumentError(f"bias_add: bias must be 1-D, got shape {bias.shape}")
    channel_axis = 1 if data_format in ("NCHW", "NCW", "NCDHW") else -1
    if value._value.shape[channel_axis] != bias._value.shape[0]:
        raise InvalidArgumentError(f"bias_add: bias of size {bias._value.shape[0]} does not match dimension "
                                   f"{channel_axis} of value with shape {value.shape}")
    if channel_axis == 1:
        bias = array_ops.reshape(bias, (-1,) + (1,) * (value._value.ndim - 2))
    return math_ops.add(value, bias)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes elements with probability ``rate`` and scales the rest by 1/(1-rate)."""
    x = to_tensor(x)
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be a scalar tensor or a float in the range [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = x._value.shape if noise_shape is None else tuple(
        d if n is None else int(n) for n, d in zip(noise_shape, x._value.shape))
    # The mask is an op (not a constant), so a traced tf.function draws a new one on every call.
    return math_ops.multiply(x, random_ops.dropout_mask(shape, rate, x.dtype, seed))


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """tf.nn.experimental.stateless_dropout: dropout whose mask is a function of ``seed`` (two integers), the
    same mask TensorFlow draws for that seed."""
    x = to_tensor(x)
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"stateless_dropout: rate must be a scalar tensor or a float in the range [0, 1), got "
                         f"{rate}")
    shape = x._value.shape if noise_shape is None else tuple(
        d if n is None else int(n) for n, d in zip(noise_shape, x._value.shape))
    return math_ops.multiply(x, stateless_random_ops.dropout_mask(shape, rate, seed, x.dtype.name))



def top_k(input, k=1, sorted=True, name=None):
    """The k largest entries of the last axis and their indices (ties: the lower index first)."""
    x = to_tensor(input)
    if x._value.ndim == 0:
        raise InvalidArgumentError("top_k: input must have rank >= 1")
    k = int(k)
    n = x._value.shape[-1]
    if not 0 <= k <= n:
        raise InvalidArgumentError(f"top_k: k={k} must be between 0 and the size {n} of the last axis")
    order = array_ops.argsort(x, -1, "DESCENDING")
    indices = order[..., :k]
    return array_ops.take_along_axis(x, indices, -1), indices


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    x = to_tensor(x)
    return math_ops.negative(softplus(math_ops.negative(x)))
