"""Regression metrics: mean squared / absolute / absolute percentage error and RMSE."""
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .. import backend
from ..losses import squeeze_or_expand_to_same_rank
from ..serialization_lib import keras_export
from .base_metric import _tensor
from .reduction_metrics import Mean, _wrapper_class


def _regression_pair(y_true, y_pred):
    y_pred = _tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = M.cast(y_pred, backend.floatx())
    y_true = _tensor(y_true, y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


@keras_export("keras.metrics.mean_squared_error")
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    return R.reduce_mean(M.square(M.subtract(y_true, y_pred)), -1)


@keras_export("keras.metrics.mean_absolute_error")
def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    return R.reduce_mean(M.abs(M.subtract(y_true, y_pred)), -1)


@keras_export("keras.metrics.mean_absolute_percentage_error")
def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    diff = M.abs(M.divide(M.subtract(y_true, y_pred), M.maximum(M.abs(y_true), backend.epsilon())))
    return M.multiply(R.reduce_mean(diff, -1), 100.0)


MeanSquaredError = _wrapper_class("MeanSquaredError", mean_squared_error, "mean_squared_error")


MeanAbsoluteError = _wrapper_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")


MeanAbsolutePercentageError = _wrapper_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                             "mean_absolute_percentage_error")


@keras_export("keras.metrics.RootMeanSquaredError")
class RootMeanSquaredError(Mean):
    """sqrt of the mean squared error over everything seen (the inputs cast to the metric's dtype first)."""
    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _tensor(y_true, self._dtype)
        y_pred = _tensor(y_pred, self._dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        super().update_state(M.square(M.subtract(y_pred, y_true)), sample_weight=sample_weight)

    def result(self):
        return M.sqrt(super().result())
