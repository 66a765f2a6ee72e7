"""Losses (``keras.losses``): per-sample functions and Loss classes with Keras 3 reductions.

A Loss computes per-sample values with its function (the last axis is
reduced inside it), multiplies them by ``sample_weight`` and reduces:
``sum_over_batch_size`` (the default, also ``mean``) is the weighted sum
divided by the number of per-sample values; ``sum``; ``none``;
``mean_with_sample_weight`` divides by the sum of the weights.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import nn_ops as nn
from tapeflow.ops import reduction_ops as R
from tapeflow.ops.common import to_tensor

from .. import activations, backend
from ..serialization_lib import deserialize_keras_object, keras_export, module_accessors, serialize_keras_object
from .masks import combine_masks, mask_of, weight_per_step

_REDUCTIONS = ("sum_over_batch_size", "mean", "sum", "none", "mean_with_sample_weight")


def standardize_reduction(reduction):
    if reduction is None:
        return "none"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of {list(_REDUCTIONS)}. "
                         f"Received: reduction={reduction}")
    return reduction


def _tensor(x, dtype=None):
    if isinstance(x, Variable):     # a read the tapes see: the loss is differentiable in the variable
        x = to_tensor(x)
    if isinstance(x, Tensor) and (dtype is None or host_array(x).dtype == np.dtype(dtype)):
        return x
    if isinstance(x, Tensor):
        return M.cast(x, dtype)
    value = host_array(x)
    if dtype is not None:
        value = value.astype(dtype)
    elif value.dtype == np.float64:
        value = value.astype(backend.floatx())
    return to_tensor(value)


def _float_pred(y_pred):
    y_pred = _tensor(y_pred)
    if host_array(y_pred).dtype.kind != "f":
        y_pred = M.cast(y_pred, backend.floatx())
    return y_pred


def _is_tensor(x):
    return isinstance(x, Tensor) or hasattr(x, "ndim") and hasattr(x, "shape") and not isinstance(x, (list, tuple, dict))


def _labels_as(y_true, dtype):
    """Targets in the loss's float dtype, as Keras converts them before ``call`` (int labels too); nested
    targets of a custom loss are converted leaf by leaf."""
    if isinstance(y_true, (list, tuple, dict)):
        from ..utils import tree
        return tree.map_structure(lambda t: _labels_as(t, dtype), y_true)
    if y_true is None:
        return None
    return _tensor(y_true, dtype)


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Makes ranks equal by removing or adding a trailing axis of size 1 (Keras's rule)."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and host_array(x1).shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = A.expand_dims(x2, -1)
        else:
            x1 = A.squeeze(x1, -1)
    if r2 == r1 + 1 and host_array(x2).shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = A.expand_dims(x1, -1)
        else:
            x2 = A.squeeze(x2, -1)
    return x1, x2


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    if reduction == "none" or values.ndim == 0 or host_array(values).shape == (0,):
        return values
    if reduction in ("sum_over_batch_size", "mean") and sample_weight is None:
        return R.reduce_mean(values)
    total = R.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = R.reduce_sum(M.cast(sample_weight, values.dtype))
    else:
        divisor = Tensor(np.asarray(host_array(values).size, dtype=host_array(values).dtype))
    return M.div_no_nan(total, divisor)


def reduce_weighted_values(values, sample_weight=None, mask=None, reduction="sum_over_batch_size"):
    """``values * sample_weight`` (ranks matched), reduced; ``mask`` zeroes entries and rescales the mean."""
    reduction = standardize_reduction(reduction)
    if mask is not None:
        mask = M.cast(_tensor(mask), values.dtype)
        if reduction in ("sum_over_batch_size", "mean"):
            # valid entries get weight total/valid, so the mean is over the valid entries only
            valid = M.add(R.reduce_sum(mask), backend.epsilon())
            mask = M.multiply(mask, M.divide(float(host_array(mask).size), valid))
        if sample_weight is not None:
            sample_weight = M.cast(_tensor(sample_weight), values.dtype)
            mask, sample_weight = squeeze_or_expand_to_same_rank(mask, sample_weight)
            sample_weight = M.multiply(sample_weight, mask)
        else:
            sample_weight = mask
    if sample_weight is not None:
        sample_weight = M.cast(_tensor(sample_weight), values.dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = M.multiply(values, sample_weight)
    return reduce_values(values, sample_weight, reduction)


# ------------------------------------------------------------ base classes ---
@keras_export("keras.losses.Loss")
class Loss:
    """Base class: implement ``call(y_true, y_pred)`` returning per-sample losses."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or backend.snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self.dtype = dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        keras_mask = mask_of(y_pred)   # read before any cast makes a new tensor
        y_pred = _float_pred(y_pred) if self.dtype is None else _tensor(y_pred, self.dtype)
        y_true = _labels_as(y_true, host_array(y_pred).dtype)
        losses = self.call(y_true, y_pred)
        mask = combine_masks(keras_mask, getattr(self, "_call_mask", None))
        self._call_mask = None
        return reduce_weighted_values(losses, weight_per_step(sample_weight, mask), mask, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"Loss subclasses must implement `call()`. Received: {type(self).__name__}")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@keras_export("keras.losses.LossFunctionWrapper")
class LossFunctionWrapper(Loss):
    """A Loss around a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        if _is_tensor(y_true) and _is_tensor(y_pred):
            # As Keras: the function sees targets of the predictions' rank, so that (N,) labels against (N, 1)
            # predictions do not broadcast to (N, N) in a user's loss.
            y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        if type(self) is LossFunctionWrapper:
            config["fn"] = serialize_keras_object(self.fn)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if cls is LossFunctionWrapper and "fn" in config:
            config["fn"] = deserialize_keras_object(config["fn"], module_objects=_FUNCTIONS)
        return cls(**config)

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


# --------------------------------------------------------- loss functions ---
def _pair(y_true, y_pred):
    y_pred = _float_pred(y_pred)
    y_true = _tensor(y_true, host_array(y_pred).dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


@keras_export("keras.losses.mean_squared_error")
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return R.reduce_mean(M.square(M.subtract(y_true, y_pred)), -1)


@keras_export("keras.losses.mean_absolute_error")
def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return R.reduce_mean(M.abs(M.subtract(y_true, y_pred)), -1)


@keras_export("keras.losses.mean_absolute_percentage_error")
def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = M.abs(M.divide(M.subtract(y_true, y_pred), M.maximum(M.abs(y_true), backend.epsilon())))
    return M.multiply(R.reduce_mean(diff, -1), 100.0)


@keras_export("keras.losses.mean_squared_logarithmic_error")
def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    first = M.log(M.add(M.maximum(y_pred, eps), 1.0))
    second = M.log(M.add(M.maximum(y_true, eps), 1.0))
    return R.reduce_mean(M.square(M.subtract(first, second)), -1)


@keras_export("keras.losses.huber")
def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    error = M.subtract(y_pred, y_true)
    abs_error = M.abs(error)
    quadratic = M.multiply(M.square(error), 0.5)
    linear = M.subtract(M.multiply(abs_error, float(delta)), 0.5 * float(delta) ** 2)
    return R.reduce_mean(A.where(M.less_equal(abs_error, float(delta)), quadratic, linear), -1)


@keras_export("keras.losses.log_cosh")
def log_cosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = M.subtract(y_pred, y_true)
    return R.reduce_mean(M.subtract(M.add(x, nn.softplus(M.multiply(x, -2.0))), float(np.log(2.0))), -1)


@keras_export("keras.losses.kl_divergence")
def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    y_true = M.clip_by_value(y_true, eps, 1.0)
    y_pred = M.clip_by_value(y_pred, eps, 1.0)
    return R.reduce_sum(M.multiply(y_true, M.log(M.divide(y_true, y_pred))), -1)


@keras_export("keras.losses.poisson")
def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return R.reduce_mean(M.subtract(y_pred, M.multiply(y_true, M.log(M.add(y_pred, backend.epsilon())))), -1)


def _signed_labels(y_true):
    values = host_array(y_true)
    if values.size and np.all((values == 0) | (values == 1)):
        return M.subtract(M.multiply(y_true, 2.0), 1.0)
    return y_true


@keras_export("keras.losses.hinge")
def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return R.reduce_mean(M.maximum(M.subtract(1.0, M.multiply(_signed_labels(y_true), y_pred)), 0.0), -1)


@keras_export("keras.losses.squared_hinge")
def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    margin = M.maximum(M.subtract(1.0, M.multiply(_signed_labels(y_true), y_pred)), 0.0)
    return R.reduce_mean(M.square(margin), -1)


@keras_export("keras.losses.cosine_similarity")
def cosine_similarity(y_true, y_pred, axis=-1):
    from tapeflow.ops.linalg_ops import l2_normalize
    y_true, y_pred = _pair(y_true, y_pred)
    return M.negative(R.reduce_sum(M.multiply(l2_normalize(y_true, axis), l2_normalize(y_pred, axis)), axis))


@keras_export("keras.losses.binary_crossentropy")
def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_pred = _float_pred(y_pred)
    y_true = _tensor(y_true, host_array(y_pred).dtype)
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    logits = activations.logits_of(y_pred, "sigmoid")
    if logits is not None:
        y_pred, from_logits = logits, True
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    if from_logits:
        bce = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        eps = backend.epsilon()
        p = M.clip_by_value(y_pred, eps, 1.0 - eps)
        bce = M.negative(M.add(M.multiply(y_true, M.log(p)),
                               M.multiply(M.subtract(1.0, y_true), M.log(M.subtract(1.0, p)))))
    return R.reduce_mean(bce, axis)


def _one_hot_targets(y_true, y_pred, label_smoothing, axis, hint=""):
    """(y_true, y_pred) of a categorical loss: float predictions, targets of their dtype and shape (else a
    ValueError ending in ``hint``), targets smoothed towards 1 / classes by ``label_smoothing``."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_pred = _float_pred(y_pred)
    y_true = _tensor(y_true, host_array(y_pred).dtype)
    if host_array(y_true).shape != host_array(y_pred).shape:
        raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                         f"target.shape={tuple(host_array(y_true).shape)}, "
                         f"output.shape={tuple(host_array(y_pred).shape)}.{hint}")
    if label_smoothing:
        classes = host_array(y_true).shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / classes)
    return y_true, y_pred


@keras_export("keras.losses.categorical_crossentropy")
def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _one_hot_targets(y_true, y_pred, label_smoothing, axis,
                                      " For integer class labels use `sparse_categorical_crossentropy`.")
    logits = activations.logits_of(y_pred, "softmax")
    if logits is not None:
        y_pred, from_logits = logits, True
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    eps = backend.epsilon()
    p = M.divide(y_pred, R.reduce_sum(y_pred, axis, keepdims=True))
    p = M.clip_by_value(p, eps, 1.0 - eps)
    return M.negative(R.reduce_sum(M.multiply(y_true, M.log(p)), axis))


@keras_export("keras.losses.categorical_hinge")
def categorical_hinge(y_true, y_pred):
    """max(0, 1 + max over wrong classes of y_pred - y_pred of the true class), for one-hot y_true."""
    y_true, y_pred = _pair(y_true, y_pred)
    positive = R.reduce_sum(M.multiply(y_true, y_pred), -1)
    negative = R.reduce_max(M.multiply(M.subtract(1.0, y_true), y_pred), -1)
    return M.maximum(M.add(M.subtract(negative, positive), 1.0), 0.0)


def _binary_crossentropy_terms(y_true, y_pred, logits):
    """Elementwise binary crossentropy; from the logits when they are known (as Keras on TensorFlow does)."""
    if logits is not None:
        return nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=logits)
    eps = backend.epsilon()
    p = M.clip_by_value(y_pred, eps, 1.0 - eps)
    return M.negative(M.add(M.multiply(y_true, M.log(p)),
                            M.multiply(M.subtract(1.0, y_true), M.log(M.subtract(1.0, p)))))


@keras_export("keras.losses.binary_focal_crossentropy")
def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary crossentropy scaled by (1 - p_t) ** gamma, p_t the probability given to the true label
    (Lin et al. 2017); with apply_class_balancing, also by alpha for positives and 1 - alpha for negatives."""
    y_pred = _float_pred(y_pred)
    y_true = _tensor(y_true, host_array(y_pred).dtype)
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        logits, y_pred = y_pred, nn.sigmoid(y_pred)
    else:
        logits = activations.logits_of(y_pred, "sigmoid")
    bce = _binary_crossentropy_terms(y_true, y_pred, logits)
    p_t = M.add(M.multiply(y_true, y_pred), M.multiply(M.subtract(1.0, y_true), M.subtract(1.0, y_pred)))
    focal = M.multiply(M.pow(M.subtract(1.0, p_t), gamma), bce)
    if apply_class_balancing:
        weight = M.add(M.multiply(y_true, alpha), M.multiply(M.subtract(1.0, y_true), 1.0 - alpha))
        focal = M.multiply(weight, focal)
    return R.reduce_mean(focal, axis)


@keras_export("keras.losses.categorical_focal_crossentropy")
def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """Categorical crossentropy with each class term scaled by alpha * (1 - p) ** gamma (Lin et al. 2017)."""
    y_true, y_pred = _one_hot_targets(y_true, y_pred, label_smoothing, axis)
    if from_logits:
        y_pred = nn.softmax(y_pred, axis=axis)
    eps = backend.epsilon()
    p = M.divide(y_pred, R.reduce_sum(y_pred, axis, keepdims=True))
    p = M.clip_by_value(p, eps, 1.0 - eps)
    terms = M.multiply(M.multiply(M.pow(M.subtract(1.0, p), gamma), alpha), M.negative(M.multiply(y_true, M.log(p))))
    return R.reduce_sum(terms, axis)


def _check_labels(labels, num_classes):
    values = host_array(labels)
    if values.size and (values.min() < 0 or values.max() >= num_classes):
        bad = values[(values < 0) | (values >= num_classes)].ravel()[0]
        raise ValueError(f"Received a label value of {bad} which is outside the valid range of [0, {num_classes}). "
                         f"Label values: {values.ravel()[:20]}{' ...' if values.size > 20 else ''}")


@keras_export("keras.losses.sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    y_pred = _float_pred(y_pred)
    y_true = _tensor(y_true)
    if y_true.ndim == y_pred.ndim and host_array(y_true).shape[-1] == 1:
        y_true = A.squeeze(y_true, -1)
    if host_array(y_true).dtype.kind == "f":
        values = host_array(y_true)
        if np.any(values != np.round(values)):
            raise ValueError("sparse_categorical_crossentropy expects integer class labels, but the labels have "
                             f"fractional values such as {values[values != np.round(values)].ravel()[0]}. "
                             "For one-hot or soft labels use `categorical_crossentropy`.")
    labels = y_true if host_array(y_true).dtype.kind in "iu" else M.cast(y_true, "int64")
    if axis not in (-1, y_pred.ndim - 1):
        raise ValueError(f"sparse_categorical_crossentropy supports only axis=-1. Received: axis={axis}")
    if host_array(labels).shape != host_array(y_pred).shape[:-1]:
        raise ValueError(f"Arguments `target` and `output` must have the same shape up until the last dimension: "
                         f"target.shape={tuple(host_array(labels).shape)}, "
                         f"output.shape={tuple(host_array(y_pred).shape)}")
    valid = None
    if ignore_class is not None:
        valid = M.not_equal(labels, ignore_class)
        labels = A.where(valid, labels, A.zeros_like(labels))
    _check_labels(labels, host_array(y_pred).shape[-1])
    logits = activations.logits_of(y_pred, "softmax")
    if logits is not None:
        y_pred, from_logits = logits, True
    if not from_logits:
        eps = backend.epsilon()
        y_pred = M.log(M.clip_by_value(y_pred, eps, 1.0 - eps))
    res = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=y_pred)
    if valid is not None:
        res = M.multiply(res, M.cast(valid, res.dtype))
    return res


# ----------------------------------------------------------- loss classes ---
def _wrapper(public_name, fn, default_name, **defaults):
    """A LossFunctionWrapper subclass whose constructor takes ``defaults`` as keyword arguments."""
    keys = list(defaults)

    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, dtype=None, **kwargs):
        values = dict(defaults)
        values.update(dict(zip(keys, args)))
        unknown = set(kwargs) - set(keys)
        if unknown:
            raise TypeError(f"{public_name}.__init__() got unexpected keyword arguments {sorted(unknown)}")
        values.update(kwargs)
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype, **values)

    cls = type(public_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": fn.__doc__,
                                                     "__module__": __name__})
    return keras_export(f"keras.losses.{public_name}")(cls)


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
Huber = _wrapper("Huber", huber, "huber_loss", delta=1.0)
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh")
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence")
Poisson = _wrapper("Poisson", poisson, "poisson")
Hinge = _wrapper("Hinge", hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity", axis=-1)
BinaryCrossentropy = _wrapper("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                   from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge")
BinaryFocalCrossentropy = _wrapper("BinaryFocalCrossentropy", binary_focal_crossentropy, "binary_focal_crossentropy",
                                   apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1)
CategoricalFocalCrossentropy = _wrapper("CategoricalFocalCrossentropy", categorical_focal_crossentropy,
                                        "categorical_focal_crossentropy", alpha=0.25, gamma=2.0, from_logits=False,
                                        label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False, ignore_class=None,
                                         axis=-1)


def _sparse_call(self, y_true, y_pred, sample_weight=None):
    """With ``ignore_class``, ignored entries are masked out of the reduction (Keras's rule)."""
    ignore = self._fn_kwargs.get("ignore_class")
    if ignore is not None:
        labels = _tensor(y_true)
        if labels.ndim == np.ndim(host_array(y_pred)) and host_array(labels).shape[-1] == 1:
            labels = A.squeeze(labels, -1)
        self._call_mask = M.not_equal(labels, ignore)
    return Loss.__call__(self, y_true, y_pred, sample_weight)


SparseCategoricalCrossentropy.__call__ = _sparse_call

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence

_FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "MAPE": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
    "MSLE": mean_squared_logarithmic_error,
    "huber": huber, "log_cosh": log_cosh, "logcosh": log_cosh, "kl_divergence": kl_divergence,
    "kld": kl_divergence, "KLD": kl_divergence, "poisson": poisson, "hinge": hinge,
    "squared_hinge": squared_hinge, "cosine_similarity": cosine_similarity,
    "binary_crossentropy": binary_crossentropy, "bce": binary_crossentropy, "BCE": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "categorical_hinge": categorical_hinge, "binary_focal_crossentropy": binary_focal_crossentropy,
    "categorical_focal_crossentropy": categorical_focal_crossentropy,
}
_CLASSES = {cls.__name__: cls for cls in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber, LogCosh,
    KLDivergence, Poisson, Hinge, SquaredHinge, CosineSimilarity, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, CategoricalHinge, BinaryFocalCrossentropy, CategoricalFocalCrossentropy,
    LossFunctionWrapper)}


# Names resolve as Keras does: functions, then classes, then registered objects.
serialize, deserialize, get = module_accessors({**_FUNCTIONS, **_CLASSES}, "loss",
                                               names={**_CLASSES, **_FUNCTIONS}, registered=True)


# ------------------------------------------------- overlap (segmentation) losses ---
def _overlap_pair(y_true, y_pred):
    y_pred = _float_pred(y_pred)
    return _tensor(y_true, host_array(y_pred).dtype), y_pred


def _overlap_axis(axis):
    return list(axis) if isinstance(axis, (list, tuple)) else axis


@keras_export("keras.losses.dice")
def dice(y_true, y_pred, axis=None):
    """1 - 2 |t p| / (|t| + |p|), summed over ``axis`` (None: everything, one value for the batch)."""
    y_true, y_pred = _overlap_pair(y_true, y_pred)
    axis = _overlap_axis(axis)
    intersection = R.reduce_sum(M.multiply(y_true, y_pred), axis=axis)
    total = M.add(R.reduce_sum(y_true, axis=axis), R.reduce_sum(y_pred, axis=axis))
    return M.subtract(1.0, M.divide(M.multiply(2.0, intersection), M.add(total, backend.epsilon())))


@keras_export("keras.losses.tversky")
def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha * sum(t (1 - p)) + beta * sum((1 - t) p)), summed over ``axis`` (None: everything).

    As observed in Keras 3, ``alpha`` weighs the missed positives and ``beta`` the false alarms."""
    y_true, y_pred = _overlap_pair(y_true, y_pred)
    axis = _overlap_axis(axis)
    tp = R.reduce_sum(M.multiply(y_true, y_pred), axis=axis)
    missed = R.reduce_sum(M.multiply(y_true, M.subtract(1.0, y_pred)), axis=axis)
    false_alarms = R.reduce_sum(M.multiply(M.subtract(1.0, y_true), y_pred), axis=axis)
    denominator = M.add(M.add(tp, M.multiply(alpha, missed)), M.multiply(beta, false_alarms))
    return M.subtract(1.0, M.divide(tp, M.add(denominator, backend.epsilon())))


Dice = _wrapper("Dice", dice, "dice", axis=None)
Tversky = _wrapper("Tversky", tversky, "tversky", alpha=0.5, beta=0.5, axis=None)
_FUNCTIONS.update({"dice": dice, "tversky": tversky})
_CLASSES.update({"Dice": Dice, "Tversky": Tversky})
