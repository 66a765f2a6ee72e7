"""Activation functions (``keras.activations``), by name or as functions.

``softmax`` and ``sigmoid`` remember the logits they were applied to, as
Keras's TensorFlow backend does (``_keras_logits``): a cross-entropy loss
given their output then computes from the logits, exactly and without the
1e-7 clipping of probabilities.
"""
import weakref

import tapeflow.ops.math_ops as M
import tapeflow.ops.nn_ops as nn
from tapeflow.framework.tensor import Tensor
from tapeflow.ops.common import to_tensor

from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object

_logits = {}  # id of an activation output -> (weakref to it, the logits, "softmax" | "sigmoid")


def _remember_logits(output, logits, kind):
    key = output._id
    _logits[key] = (weakref.ref(output, lambda _, key=key: _logits.pop(key, None)), logits, kind)
    return output


def logits_of(output, kind):
    """The logits ``output`` was computed from by ``softmax``/``sigmoid`` (``kind``), or None."""
    if not isinstance(output, Tensor):
        return None
    entry = _logits.get(output._id)
    if entry is None or entry[0]() is not output or entry[2] != kind:
        return None
    return entry[1]


@keras_export("keras.activations.linear")
def linear(x):
    return x


@keras_export("keras.activations.relu")
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    x = to_tensor(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return nn.relu(x)
    if threshold != 0.0:
        y = M.multiply(x, M.cast(M.greater(x, threshold), x.dtype))
    else:
        y = nn.relu(x)
    if max_value is not None:
        y = M.minimum(y, M.cast(max_value, x.dtype))
    if negative_slope != 0.0:
        y = M.add(y, M.multiply(M.minimum(M.subtract(x, threshold), 0.0), negative_slope))
    return y


@keras_export("keras.activations.relu6")
def relu6(x):
    return nn.relu6(x)


@keras_export("keras.activations.leaky_relu")
def leaky_relu(x, negative_slope=0.2):
    return nn.leaky_relu(x, alpha=negative_slope)


@keras_export("keras.activations.elu")
def elu(x, alpha=1.0):
    y = nn.elu(x)
    if alpha == 1.0:
        return y
    x = to_tensor(x)
    return M.add(nn.relu(x), M.multiply(M.minimum(y, 0.0), alpha))


@keras_export("keras.activations.selu")
def selu(x):
    return nn.selu(x)


@keras_export("keras.activations.gelu")
def gelu(x, approximate=False):
    return nn.gelu(x, approximate=approximate)


@keras_export("keras.activations.sigmoid")
def sigmoid(x):
    x = to_tensor(x)
    return _remember_logits(nn.sigmoid(x), x, "sigmoid")


@keras_export("keras.activations.hard_sigmoid")
def hard_sigmoid(x):
    x = to_tensor(x)
    return M.clip_by_value(M.add(M.divide(x, 6.0), 0.5), 0.0, 1.0)


@keras_export("keras.activations.softmax")
def softmax(x, axis=-1):
    x = to_tensor(x)
    return _remember_logits(nn.softmax(x, axis=axis), x, "softmax")


@keras_export("keras.activations.log_softmax")
def log_softmax(x, axis=-1):
    return nn.log_softmax(x, axis=axis)


@keras_export("keras.activations.softplus")
def softplus(x):
    return nn.softplus(x)


@keras_export("keras.activations.softsign")
def softsign(x):
    return nn.softsign(x)


@keras_export("keras.activations.silu")
def silu(x):
    return nn.silu(x)


swish = silu
keras_export("keras.activations.swish")(swish)


@keras_export("keras.activations.tanh")
def tanh(x):
    return M.tanh(x)


@keras_export("keras.activations.exponential")
def exponential(x):
    return M.exp(x)


@keras_export("keras.activations.mish")
def mish(x):
    x = to_tensor(x)
    return M.multiply(x, M.tanh(nn.softplus(x)))


_ALL = {
    "linear": linear, "relu": relu, "relu6": relu6, "leaky_relu": leaky_relu, "elu": elu, "selu": selu,
    "gelu": gelu, "sigmoid": sigmoid, "hard_sigmoid": hard_sigmoid, "softmax": softmax,
    "log_softmax": log_softmax, "softplus": softplus, "softsign": softsign, "silu": silu, "swish": swish,
    "tanh": tanh, "exponential": exponential, "mish": mish,
}
# tf.nn / tf.math functions passed as activations serialize under their Keras names.
_ENGINE_EQUIVALENTS = {nn.relu: "relu", nn.relu6: "relu6", nn.elu: "elu", nn.selu: "selu", nn.sigmoid: "sigmoid",
                       nn.softmax: "softmax", nn.softplus: "softplus", nn.softsign: "softsign", nn.silu: "silu",
                       nn.gelu: "gelu", M.tanh: "tanh", nn.log_softmax: "log_softmax"}


def serialize(activation):
    if activation in _ENGINE_EQUIVALENTS:
        return _ENGINE_EQUIVALENTS[activation]
    if getattr(activation, "__name__", None) in _ALL and _ALL[activation.__name__] is activation:
        return activation.__name__
    return serialize_keras_object(activation)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, custom_objects=custom_objects, module_objects=_ALL)


def get(identifier):
    """An activation function from None (linear), a name, a config or a callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _ALL.get(identifier)
        if fn is None:
            from ..serialization_lib import get_registered_object
            fn = get_registered_object(identifier)
        if fn is None:
            raise ValueError(f"Could not interpret activation function identifier: {identifier}. Known "
                             f"activations: {', '.join(sorted(_ALL))}.")
        return fn
    if isinstance(identifier, dict):
        fn = deserialize(identifier)
        if callable(fn):
            return fn
    elif callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")
