"""Sum, Mean and MeanMetricWrapper (a Mean of a function's per-sample values)."""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from ..losses import squeeze_or_expand_to_same_rank
from ..losses.masks import mask_of, masked_sample_weight
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object
from .base_metric import Metric, _ndim, _shape, _tensor


def _to_samplewise(values, sample_weight, reduce, dtype):
    """Keras's per-sample values (and weights), in ``dtype``: the weights' rank matched to the values'
    (a trailing axis of 1 squeezed or added), the values' extra axes reduced with ``reduce`` (mean for
    Mean, sum for Sum), the values multiplied by the weights, then everything past axis 0 reduced."""
    values = _tensor(values, dtype)
    if sample_weight is not None:
        sample_weight = _tensor(sample_weight, dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = _ndim(sample_weight), _ndim(values)
        if values_ndim > weight_ndim:
            values = reduce(values, list(range(weight_ndim, values_ndim)))
        sample_weight = A.broadcast_to(sample_weight, _shape(values))
        values = M.multiply(values, sample_weight)
        if weight_ndim > 1:
            sample_weight = reduce(sample_weight, list(range(1, weight_ndim)))
    if _ndim(values) > 1:
        values = reduce(values, list(range(1, _ndim(values))))
    return values, sample_weight


def _is_number(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


@keras_export("keras.metrics.Sum")
class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = _to_samplewise(values, sample_weight, R.reduce_sum, self._dtype)
        self.total.assign_add(R.reduce_sum(values))

    def result(self):
        return A.identity(self.total)


@keras_export("keras.metrics.Mean")
class Mean(Metric):
    """The (weighted) mean of the values seen: total / count."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        if _is_number(sample_weight):
            values = _tensor(values, self._dtype)
            if _ndim(values) == 0:   # a scalar weighted by a number (fit's loss tracker): two updates
                self.total.assign_add(M.multiply(values, sample_weight))
                self.count.assign_add(_tensor(sample_weight, self._dtype))
                return
        values, sample_weight = _to_samplewise(values, sample_weight, R.reduce_mean, self._dtype)
        self.total.assign_add(R.reduce_sum(values))
        if sample_weight is not None:
            count = R.reduce_sum(sample_weight)
        else:
            count = _tensor(_shape(values)[0] if _ndim(values) >= 1 else 1, self._dtype)
        self.count.assign_add(count)

    def result(self):
        return M.div_no_nan(self.total, self.count)


@keras_export("keras.metrics.MeanMetricWrapper")
class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` over every sample seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        fn_name = getattr(fn, "__name__", "")
        if "accuracy" in fn_name:
            self._direction = "up"
        elif fn_name.endswith(("error", "crossentropy", "hinge", "divergence")):
            self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = mask_of(y_pred)   # a Keras mask on the predictions: masked entries neither count nor weigh
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:
            sample_weight = masked_sample_weight(sample_weight, mask, self._dtype)
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        if type(self) is MeanMetricWrapper:
            config["fn"] = serialize_keras_object(self._fn)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if cls is MeanMetricWrapper:
            from . import _FUNCTIONS  # the package's table of metric functions, from modules importing this one
            config["fn"] = deserialize_keras_object(config["fn"], module_objects=_FUNCTIONS)
        return cls(**config)


def _wrapper_class(public_name, fn, default_name, **defaults):
    keys = list(defaults)

    def __init__(self, *args, name=default_name, dtype=None, **kwargs):
        values = dict(defaults)
        values.update(dict(zip(keys, args)))
        unknown = set(kwargs) - set(keys)
        if unknown:
            raise TypeError(f"{public_name}.__init__() got unexpected keyword arguments {sorted(unknown)}")
        values.update(kwargs)
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **values)

    cls = type(public_name, (MeanMetricWrapper,), {"__init__": __init__, "__module__": __name__})
    return keras_export(f"keras.metrics.{public_name}")(cls)
