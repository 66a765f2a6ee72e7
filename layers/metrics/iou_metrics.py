"""Intersection-over-union metrics over an accumulated confusion matrix (Keras 3 semantics).

Rows of ``total_cm`` are true classes, columns predicted classes. As in Keras, labels and predictions are
truncated to integer class ids and so are the sample weights (a warning says so when one has a fraction).
Entries whose true class is ``ignore_class``, and class ids outside [0, num_classes), do not count
(out-of-range ids are dropped, as Keras's scatter on jax drops them). The result is the mean IoU of the
``target_class_ids`` whose union is not empty.
"""
import warnings

import numpy as np

from tapeflow.ops import array_ops as A
from tapeflow.ops import linalg_ops
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from ..serialization_lib import keras_export
from .base_metric import Metric, _holds_tensors, _tensor


class _IoUBase(Metric):
    _direction = "up"

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype)
        if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
            raise ValueError(f"`num_classes` must be a positive integer; received num_classes={num_classes!r}")
        self.num_classes = int(num_classes)
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_variable((self.num_classes, self.num_classes), name="total_confusion_matrix")

    def _class_ids(self, y_true, y_pred):
        if not self.sparse_y_true:
            y_true = R.argmax(_tensor(y_true), axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = R.argmax(_tensor(y_pred), axis=self.axis)
        return y_true, y_pred

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = self._class_ids(y_true, y_pred)
        y_true = A.reshape(M.cast(_tensor(y_true, self._dtype), "int32"), [-1])
        y_pred = A.reshape(M.cast(_tensor(y_pred, self._dtype), "int32"), [-1])
        if sample_weight is None:
            weight = A.ones_like(y_true)
        else:
            if not _holds_tensors(sample_weight) and np.any(np.mod(np.asarray(sample_weight), 1)):
                warnings.warn(f"{type(self).__name__}: the sample weights have fractions; like Keras, the "
                              f"confusion matrix counts them truncated to integers.", stacklevel=2)
            weight = A.reshape(M.cast(_tensor(sample_weight), "int32"), [-1])
            weight = M.multiply(weight, A.ones_like(y_true))
        keep = M.logical_and(self._in_range(y_true), self._in_range(y_pred))
        if self.ignore_class is not None:
            keep = M.logical_and(keep, M.not_equal(y_true, int(self.ignore_class)))
        keep = M.cast(keep, "int32")
        weight = M.multiply(weight, keep)
        cells = M.add(M.multiply(M.multiply(y_true, keep), self.num_classes), M.multiply(y_pred, keep))
        counts = A.unsorted_segment_sum(weight, cells, self.num_classes * self.num_classes)
        self.total_cm.assign_add(M.cast(A.reshape(counts, [self.num_classes, self.num_classes]), self._dtype))

    def _in_range(self, ids):
        return M.logical_and(M.greater_equal(ids, 0), M.less(ids, self.num_classes))

    def _mean_iou(self, target_class_ids):
        cm = self.total_cm
        predicted = R.reduce_sum(cm, axis=0)
        actual = R.reduce_sum(cm, axis=1)
        hits = linalg_ops.diag_part(cm)
        union = M.subtract(M.add(predicted, actual), hits)
        ids = list(target_class_ids)
        hits, union = A.gather(hits, ids), A.gather(union, ids)
        valid = R.reduce_sum(M.cast(M.not_equal(union, 0.0), self._dtype))
        return M.div_no_nan(R.reduce_sum(M.div_no_nan(hits, union)), valid)

    def get_config(self):
        config = super().get_config()
        config.update({"num_classes": self.num_classes, "ignore_class": self.ignore_class,
                       "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis})
        return config


@keras_export("keras.metrics.IoU")
class IoU(_IoUBase):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)
        target_class_ids = list(target_class_ids)
        if not target_class_ids or max(target_class_ids) >= self.num_classes or min(target_class_ids) < 0:
            raise ValueError(f"Target class id must be in [0, num_classes={self.num_classes}); received "
                             f"target_class_ids={target_class_ids}")
        self.target_class_ids = target_class_ids

    def result(self):
        return self._mean_iou(self.target_class_ids)

    def get_config(self):
        config = super().get_config()
        config["target_class_ids"] = self.target_class_ids
        return config


@keras_export("keras.metrics.MeanIoU")
class MeanIoU(_IoUBase):
    def result(self):
        return self._mean_iou(range(self.num_classes))


@keras_export("keras.metrics.BinaryIoU")
class BinaryIoU(IoU):
    """IoU of binary labels against probabilities, a prediction being class 1 from ``threshold`` up."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, list(target_class_ids), name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = M.greater_equal(_tensor(y_pred, self._dtype), self.threshold)
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self._dtype}


@keras_export("keras.metrics.OneHotIoU")
class OneHotIoU(IoU):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


@keras_export("keras.metrics.OneHotMeanIoU")
class OneHotMeanIoU(MeanIoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config
