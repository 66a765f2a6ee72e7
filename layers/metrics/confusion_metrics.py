"""Confusion-count metrics: TruePositives/FalsePositives/TrueNegatives/FalseNegatives, Precision, Recall and AUC."""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import nn_ops
from tapeflow.ops import reduction_ops as R

from .. import backend
from ..losses import squeeze_or_expand_to_same_rank
from ..serialization_lib import keras_export
from .base_metric import Metric, _ndim, _shape, _tensor


def _confusion_inputs(metric, y_true, y_pred, sample_weight, dtype):
    """Keras's preparation of labels, predictions and weights for confusion counts, all in ``dtype``
    (the counts' dtype): ranks matched, a weight per prediction."""
    y_true = _tensor(y_true, dtype)
    y_pred = _tensor(y_pred, dtype)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if host_array(y_true).size != host_array(y_pred).size:
        raise ValueError(f"{type(metric).__name__} '{metric.name}' needs one label per prediction: y_true has shape "
                         f"{_shape(y_true)} and y_pred has shape {_shape(y_pred)}.")
    if sample_weight is not None:
        sample_weight = A.expand_dims(_tensor(sample_weight, dtype), -1)
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight, expand_rank_1=False)
    return y_true, y_pred, sample_weight


def _confusion_counts(y_true, y_pred, sample_weight, thresholds, wanted):
    """Weighted counts per threshold (each of shape ``thresholds.shape``) of the cells ``wanted`` names:
    "tp", "fp", "tn", "fn", where a prediction is positive when it is strictly above the threshold."""
    dtype = y_pred.dtype
    label = A.reshape(M.cast(y_true, "bool"), [1, -1])
    above = M.greater(A.reshape(y_pred, [1, -1]), A.reshape(thresholds, [-1, 1]))   # (thresholds, predictions)
    weights = None
    if sample_weight is not None:
        weights = A.reshape(A.broadcast_to(sample_weight, _shape(y_pred)), [1, -1])
    below, negative = M.logical_not(above), M.logical_not(label)
    cells = {"tp": (above, label), "fp": (above, negative), "tn": (below, negative), "fn": (below, label)}
    counts = []
    for name in wanted:
        predicted, actual = cells[name]
        hits = M.cast(M.logical_and(actual, predicted), dtype)
        if weights is not None:
            hits = M.multiply(hits, weights)
        counts.append(R.reduce_sum(hits, 1))
    return counts


class _ConditionCount(Metric):
    """The weighted count of one confusion cell at each threshold, accumulated over batches."""
    _cell = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = np.atleast_1d(np.asarray(0.5 if thresholds is None else thresholds, np.float64))
        if self.thresholds.ndim != 1:
            raise ValueError(f"{type(self).__name__}: thresholds must be a float or a list of floats. "
                             f"Received: thresholds={thresholds}")
        self.accumulator = self.add_variable((len(self.thresholds),), name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        dtype = self.accumulator.dtype
        y_true, y_pred, sample_weight = _confusion_inputs(self, y_true, y_pred, sample_weight, dtype)
        (count,) = _confusion_counts(y_true, y_pred, sample_weight, _tensor(self.thresholds, dtype), (self._cell,))
        self.accumulator.assign_add(count)

    def result(self):
        return self.accumulator[0] if len(self.thresholds) == 1 else _tensor(self.accumulator)

    def get_config(self):
        config = super().get_config()
        config["thresholds"] = self.init_thresholds
        return config


@keras_export("keras.metrics.TruePositives")
class TruePositives(_ConditionCount):
    """Weighted count of positive labels whose prediction is above the threshold."""
    _cell = "tp"
    _direction = "up"


@keras_export("keras.metrics.FalsePositives")
class FalsePositives(_ConditionCount):
    """Weighted count of negative labels whose prediction is above the threshold."""
    _cell = "fp"
    _direction = "down"


@keras_export("keras.metrics.TrueNegatives")
class TrueNegatives(_ConditionCount):
    """Weighted count of negative labels whose prediction is at or below the threshold."""
    _cell = "tn"
    _direction = "up"


@keras_export("keras.metrics.FalseNegatives")
class FalseNegatives(_ConditionCount):
    """Weighted count of positive labels whose prediction is at or below the threshold."""
    _cell = "fn"
    _direction = "down"


def class_column(y_true, y_pred, class_id):
    """Labels and predictions of class ``class_id`` alone (as columns), or all of them when it is None."""
    if class_id is None:
        return y_true, y_pred
    if _ndim(y_pred) == 1:
        raise ValueError("When class_id is provided, y_pred must be a 2D array with shape (num_samples, "
                         f"num_classes), found shape: {_shape(y_pred)}")
    at = slice(class_id, class_id + 1)
    return y_true[..., at], y_pred[..., at]


class _ConfusionCounts(Metric):
    """Counts of true/false positives (and negatives) at a decision threshold."""
    _direction = "up"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if top_k is not None:
            raise ValueError(f"{type(self).__name__}: top_k is not supported by tapeflow. Received: top_k={top_k}")
        self.init_thresholds = thresholds
        self.thresholds = np.atleast_1d(np.asarray(0.5 if thresholds is None else thresholds, np.float64))
        self.class_id = class_id
        n = len(self.thresholds)
        self.true_positives = self.add_variable((n,), name="true_positives")
        self._second = self.add_variable((n,), name=self._second_name)

    def update_state(self, y_true, y_pred, sample_weight=None):
        dtype = self.true_positives.dtype
        y_true, y_pred, sample_weight = _confusion_inputs(self, y_true, y_pred, sample_weight, dtype)
        y_true, y_pred = class_column(y_true, y_pred, self.class_id)
        tp, second = _confusion_counts(y_true, y_pred, sample_weight, _tensor(self.thresholds, dtype),
                                       ("tp", self._second_cell))
        self.true_positives.assign_add(tp)
        self._second.assign_add(second)

    def result(self):
        value = M.div_no_nan(self.true_positives, M.add(self.true_positives, self._second))
        return value[0] if len(self.thresholds) == 1 else value

    def get_config(self):
        config = super().get_config()
        config.update({"thresholds": self.init_thresholds, "top_k": None, "class_id": self.class_id})
        return config


@keras_export("keras.metrics.Precision")
class Precision(_ConfusionCounts):
    """true positives / predicted positives."""
    _second_name = "false_positives"
    _second_cell = "fp"


@keras_export("keras.metrics.Recall")
class Recall(_ConfusionCounts):
    """true positives / actual positives."""
    _second_name = "false_negatives"
    _second_cell = "fn"


@keras_export("keras.metrics.AUC")
class AUC(Metric):
    """Area under the ROC or precision-recall curve, from confusion counts at fixed thresholds."""
    _direction = "up"

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        curve = curve.upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["ROC", "PR"]')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        if multi_label:
            raise ValueError("AUC: multi_label=True is not supported by tapeflow.")
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            self._given_thresholds = inner
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._given_thresholds = None
        eps = backend.epsilon()
        self.thresholds = np.array([0.0 - eps] + inner + [1.0 + eps])
        self.num_thresholds = len(self.thresholds)
        self.curve = curve
        self.summation_method = summation_method
        self.multi_label = False
        self.label_weights = label_weights
        self.from_logits = bool(from_logits)
        n = self.num_thresholds
        self.true_positives = self.add_variable((n,), name="true_positives")
        self.false_positives = self.add_variable((n,), name="false_positives")
        self.true_negatives = self.add_variable((n,), name="true_negatives")
        self.false_negatives = self.add_variable((n,), name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            y_pred = nn_ops.sigmoid(_tensor(y_pred))
        dtype = self.true_positives.dtype
        y_true, y_pred, sample_weight = _confusion_inputs(self, y_true, y_pred, sample_weight, dtype)
        counts = _confusion_counts(y_true, y_pred, sample_weight, _tensor(self.thresholds, dtype),
                                   ("tp", "fp", "tn", "fn"))
        for variable, count in zip((self.true_positives, self.false_positives, self.true_negatives,
                                    self.false_negatives), counts):
            variable.assign_add(count)

    def result(self):
        tp, fp, tn, fn = (_tensor(v) for v in (self.true_positives, self.false_positives, self.true_negatives,
                                               self.false_negatives))
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr_auc(tp, fp, fn)
        recall = M.div_no_nan(tp, M.add(tp, fn))
        if self.curve == "ROC":
            x, y = M.div_no_nan(fp, M.add(fp, tn)), recall
        else:
            x, y = recall, M.div_no_nan(tp, M.add(tp, fp))
        if self.summation_method == "interpolation":
            heights = M.divide(M.add(y[:-1], y[1:]), 2.0)
        elif self.summation_method == "minoring":
            heights = M.minimum(y[:-1], y[1:])
        else:
            heights = M.maximum(y[:-1], y[1:])
        return R.reduce_sum(M.multiply(M.subtract(x[:-1], x[1:]), heights))

    @staticmethod
    def _interpolated_pr_auc(tp, fp, fn):
        """Davis & Goadrich (2006): between thresholds, precision is interpolated along true positives."""
        positives = M.add(tp, fp)
        d_tp = M.subtract(tp[:-1], tp[1:])
        d_p = M.subtract(positives[:-1], positives[1:])
        slope = M.div_no_nan(d_tp, M.maximum(d_p, 0.0))
        intercept = M.subtract(tp[1:], M.multiply(slope, positives[1:]))
        both_positive = M.logical_and(M.greater(positives[:-1], 0.0), M.greater(positives[1:], 0.0))
        ratio = A.where(both_positive, M.div_no_nan(positives[:-1], M.maximum(positives[1:], 0.0)),
                        A.ones_like(positives[1:]))
        increment = M.div_no_nan(M.multiply(slope, M.add(d_tp, M.multiply(intercept, M.log(ratio)))),
                                 M.maximum(M.add(tp[1:], fn[1:]), 0.0))
        return R.reduce_sum(increment)

    def get_config(self):
        config = super().get_config()
        config.update({"num_thresholds": self.num_thresholds, "curve": self.curve,
                       "summation_method": self.summation_method, "multi_label": False,
                       "num_labels": None, "label_weights": self.label_weights, "from_logits": self.from_logits})
        if self._given_thresholds is not None:
            config["thresholds"] = self._given_thresholds
        return config
