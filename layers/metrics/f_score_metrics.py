"""F-beta and F1 scores over accumulated per-class confusion counts (Keras 3 semantics).

A prediction is positive when above ``threshold``; without a threshold the row's maximum (all ties, if not
zero) is the positive class. ``average`` None keeps one score per class, "micro" pools the counts of all
classes, "macro" averages the per-class scores, "weighted" averages them weighted by each class's support.
"""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from ..serialization_lib import keras_export
from .base_metric import Metric, _ndim, _shape, _tensor

_AVERAGES = (None, "micro", "macro", "weighted")
_STATE = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")


@keras_export("keras.metrics.FBetaScore")
class FBetaScore(Metric):
    _direction = "up"

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in _AVERAGES:
            raise ValueError(f"Invalid `average` argument value. Expected one of: {list(_AVERAGES)}. Received: "
                             f"average={average!r}")
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta <= 0:
            raise ValueError(f"`beta` must be a float strictly greater than 0; received beta={beta!r}")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                      or not 0 < threshold <= 1):
            raise ValueError(f"`threshold` must be a float in the range (0, 1] or None; received "
                             f"threshold={threshold!r}")
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self._built = False

    def _build(self, num_classes):
        shape = () if self.average == "micro" else (num_classes,)
        for name in _STATE:
            setattr(self, name, self.add_variable(shape, name=name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _tensor(y_true, self._dtype)
        y_pred = _tensor(y_pred, self._dtype)
        if _ndim(y_true) != 2 or _ndim(y_pred) != 2:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, output_dim); received "
                             f"y_true.shape={_shape(y_true)} and y_pred.shape={_shape(y_pred)}")
        if not self._built:
            self._build(_shape(y_pred)[-1])
        if self.threshold is None:
            row_max = R.reduce_max(y_pred, axis=-1, keepdims=True)
            positive = M.logical_and(M.greater_equal(y_pred, row_max), M.greater(M.abs(y_pred), 1e-9))
        else:
            positive = M.greater(y_pred, self.threshold)
        y_pred = M.cast(positive, self._dtype)
        axis = None if self.average == "micro" else 0

        def total(x):
            if sample_weight is not None:
                x = M.multiply(x, weight)
            return R.reduce_sum(x, axis=axis)

        if sample_weight is not None:
            weight = _tensor(sample_weight, self._dtype)
            if _ndim(weight) == 1:
                weight = A.reshape(weight, [-1, 1])
        negative_true = M.subtract(1.0, y_true)
        self.true_positives.assign_add(total(M.multiply(y_pred, y_true)))
        self.false_positives.assign_add(total(M.multiply(y_pred, negative_true)))
        self.false_negatives.assign_add(total(M.multiply(M.subtract(1.0, y_pred), y_true)))
        self.intermediate_weights.assign_add(total(y_true))

    def result(self):
        if not self._built:
            return _tensor(0.0, self._dtype)
        tp = self.true_positives
        precision = M.div_no_nan(tp, M.add(tp, self.false_positives))
        recall = M.div_no_nan(tp, M.add(tp, self.false_negatives))
        beta_squared = float(self.beta) ** 2
        score = M.multiply(M.div_no_nan(M.multiply(precision, recall), M.add(M.multiply(precision, beta_squared),
                                                                              recall)), 1.0 + beta_squared)
        if self.average == "weighted":
            support = self.intermediate_weights
            return R.reduce_sum(M.multiply(score, M.div_no_nan(support, R.reduce_sum(support))))
        if self.average is not None:
            return R.reduce_mean(score)
        return score

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = super().get_config()
        config.update({"average": self.average, "beta": self.beta, "threshold": self.threshold})
        return config

    def load_own_variables(self, store):
        if not self._built and len(list(store.keys())) == len(_STATE):
            shape = np.asarray(store["0"]).shape
            self._build(1 if shape == () else shape[0])
        super().load_own_variables(store)


@keras_export("keras.metrics.F1Score")
class F1Score(FBetaScore):
    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
