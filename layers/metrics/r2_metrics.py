"""R2Score: the coefficient of determination over everything seen, per output column then aggregated
(Keras 3 semantics: weighted sums accumulated in variables, an infinite score read as 0)."""
from tapeflow.ops import array_ops as A
from tapeflow.ops import core_ops as C
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from ..serialization_lib import keras_export
from .base_metric import Metric, _ndim, _shape, _tensor

_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")
_STATE = ("squared_sum", "sum", "total_mse", "count")


@keras_export("keras.metrics.R2Score")
class R2Score(Metric):
    _direction = "up"

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in _AGGREGATIONS:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"{list(_AGGREGATIONS)}. Received: class_aggregation={class_aggregation!r}")
        if isinstance(num_regressors, bool) or not isinstance(num_regressors, int) or num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. Received: "
                             f"num_regressors={num_regressors!r}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable((), dtype="int32", name="num_samples")
        self._built = False

    def _build(self, num_outputs):
        for name in _STATE:
            setattr(self, name, self.add_variable((num_outputs,), name=name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _tensor(y_true, self._dtype)
        y_pred = _tensor(y_pred, self._dtype)
        if _ndim(y_true) == 1:
            y_true = A.reshape(y_true, [-1, 1])
        if _ndim(y_pred) == 1:
            y_pred = A.reshape(y_pred, [-1, 1])
        if _ndim(y_true) != 2 or _shape(y_true) != _shape(y_pred):
            raise ValueError(f"R2Score expects y_true and y_pred of one shape (num_samples, num_outputs); "
                             f"received y_true.shape={_shape(y_true)} and y_pred.shape={_shape(y_pred)}")
        if not self._built:
            self._build(_shape(y_true)[-1])
        if sample_weight is None:
            weight = A.ones_like(y_true)
        else:
            weight = _tensor(sample_weight, self._dtype)
            if _ndim(weight) == 1:
                weight = A.reshape(weight, [-1, 1])
            weight = M.multiply(weight, A.ones_like(y_true))
        weighted_true = M.multiply(y_true, weight)
        self.sum.assign_add(R.reduce_sum(weighted_true, axis=0))
        self.squared_sum.assign_add(R.reduce_sum(M.multiply(y_true, weighted_true), axis=0))
        self.total_mse.assign_add(R.reduce_sum(M.multiply(M.square(M.subtract(y_true, y_pred)), weight), axis=0))
        self.count.assign_add(R.reduce_sum(weight, axis=0))
        self.num_samples.assign_add(_shape(y_true)[0] * _shape(y_true)[1])  # Keras counts every entry

    def result(self):
        if not self._built:
            return _tensor(0.0, self._dtype)
        mean = M.divide(self.sum, self.count)
        total = M.subtract(self.squared_sum, M.multiply(self.sum, mean))
        raw = M.subtract(1.0, M.divide(self.total_mse, total))
        raw = C.where(M.is_inf(raw), A.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            score = R.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = M.divide(R.reduce_sum(M.multiply(total, raw)), R.reduce_sum(total))
        else:
            score = raw
        if self.num_regressors:
            # adjusted R2; undefined (plain R2 returned) unless there are more entries than regressors + 1
            n = M.cast(self.num_samples, self._dtype)
            p = float(self.num_regressors)
            adjusted = M.subtract(1.0, M.multiply(M.subtract(1.0, score),
                                                  M.div_no_nan(M.subtract(n, 1.0), M.subtract(n, p + 1.0))))
            score = C.where(M.greater(n, p + 1.0), adjusted, score)
        return score

    def reset_state(self):
        for v in self.variables:
            v.assign(A.zeros(v.shape, v.dtype))

    def get_config(self):
        config = super().get_config()
        config.update({"class_aggregation": self.class_aggregation, "num_regressors": self.num_regressors})
        return config

    def load_own_variables(self, store):
        if not self._built and len(list(store.keys())) == 1 + len(_STATE):
            import numpy as np
            self._build(np.asarray(store["1"]).shape[0])
        super().load_own_variables(store)
