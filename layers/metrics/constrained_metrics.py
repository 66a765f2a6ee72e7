"""Metrics read off the confusion counts at evenly spaced thresholds: the best value of one rate among the
thresholds where another rate meets a target (SensitivityAtSpecificity, SpecificityAtSensitivity,
PrecisionAtRecall, RecallAtPrecision)."""
import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from ..serialization_lib import keras_export
from .base_metric import Metric, _tensor
from .confusion_metrics import _confusion_counts, _confusion_inputs, class_column

_CELLS = ("true_positives", "false_positives", "true_negatives", "false_negatives")


def _rates(tp, fp, tn, fn):
    return {"sensitivity": M.div_no_nan(tp, M.add(tp, fn)), "recall": M.div_no_nan(tp, M.add(tp, fn)),
            "specificity": M.div_no_nan(tn, M.add(tn, fp)), "precision": M.div_no_nan(tp, M.add(tp, fp))}


class _AtConstraint(Metric):
    """max over thresholds of rate ``_maximized`` where rate ``_constrained`` >= the target (0 if none does)."""
    _direction = "up"
    _maximized = _constrained = None

    def __init__(self, target, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if not 0 <= target <= 1:
            raise ValueError(f"Argument `{self._constrained}` must be in the range [0, 1]. Received: "
                             f"{self._constrained}={target}")
        if not isinstance(num_thresholds, int) or num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.target = target
        self.num_thresholds = num_thresholds
        self.class_id = class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds = [0.0] + inner + [1.0]
        for cell in _CELLS:
            setattr(self, cell, self.add_variable((num_thresholds,), name=cell))

    def update_state(self, y_true, y_pred, sample_weight=None):
        dtype = self.true_positives.dtype
        y_true, y_pred, sample_weight = _confusion_inputs(self, y_true, y_pred, sample_weight, dtype)
        y_true, y_pred = class_column(y_true, y_pred, self.class_id)
        counts = _confusion_counts(y_true, y_pred, sample_weight, _tensor(np.array(self.thresholds), dtype),
                                   ("tp", "fp", "tn", "fn"))
        for cell, count in zip(_CELLS, counts):
            getattr(self, cell).assign_add(count)

    def result(self):
        rates = _rates(*(_tensor(getattr(self, cell)) for cell in _CELLS))
        feasible = M.greater_equal(rates[self._constrained], self.target)
        candidates = A.where(feasible, rates[self._maximized], A.zeros_like(rates[self._maximized]))
        return R.reduce_max(candidates)

    def get_config(self):
        config = super().get_config()
        config.update({"class_id": self.class_id, "num_thresholds": self.num_thresholds,
                       self._constrained: self.target})
        return config


@keras_export("keras.metrics.SensitivityAtSpecificity")
class SensitivityAtSpecificity(_AtConstraint):
    _maximized, _constrained = "sensitivity", "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


@keras_export("keras.metrics.SpecificityAtSensitivity")
class SpecificityAtSensitivity(_AtConstraint):
    _maximized, _constrained = "specificity", "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


@keras_export("keras.metrics.PrecisionAtRecall")
class PrecisionAtRecall(_AtConstraint):
    _maximized, _constrained = "precision", "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


@keras_export("keras.metrics.RecallAtPrecision")
class RecallAtPrecision(_AtConstraint):
    _maximized, _constrained = "recall", "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)
