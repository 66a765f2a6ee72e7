"""Accuracy metrics: the functions and their MeanMetricWrapper classes."""
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .. import backend
from ..losses import squeeze_or_expand_to_same_rank
from ..serialization_lib import keras_export
from .base_metric import _ndim, _shape, _tensor
from .reduction_metrics import _wrapper_class


@keras_export("keras.metrics.accuracy")
def accuracy(y_true, y_pred):
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return M.cast(M.equal(y_true, y_pred), backend.floatx())


@keras_export("keras.metrics.binary_accuracy")
def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = _tensor(y_pred)
    y_true = _tensor(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    predicted = M.cast(M.greater(y_pred, _tensor(threshold, y_pred.dtype)), y_true.dtype)
    return R.reduce_mean(M.cast(M.equal(y_true, predicted), backend.floatx()), -1)


def _class_matches(labels, predicted):
    """labels == predicted (argmax indices, int64), compared exactly: integer labels as int64,
    floating-point labels as float64 (numpy's promotion; a float16 label is not rounded against a
    large class index)."""
    common = "int64" if labels.dtype.is_integer else "float64"
    return M.cast(M.equal(M.cast(labels, common), M.cast(predicted, common)), backend.floatx())


@keras_export("keras.metrics.categorical_accuracy")
def categorical_accuracy(y_true, y_pred):
    y_true = _tensor(y_true)
    y_pred = _tensor(y_pred)
    if _ndim(y_true) == _ndim(y_pred):
        y_true = R.argmax(y_true, -1)
    return M.cast(M.equal(M.cast(y_true, "int64"), R.argmax(y_pred, -1)), backend.floatx())


@keras_export("keras.metrics.sparse_categorical_accuracy")
def sparse_categorical_accuracy(y_true, y_pred):
    y_true = _tensor(y_true)
    y_pred = _tensor(y_pred)
    original_shape = _shape(y_true)
    reshape = False
    if _ndim(y_true) == _ndim(y_pred) and _shape(y_true)[-1] == 1:
        y_true = A.squeeze(y_true, -1)
        reshape = True
    matches = _class_matches(y_true, R.argmax(y_pred, -1))
    if reshape:
        matches = A.reshape(matches, original_shape)
    if _ndim(matches) > 1 and _shape(matches)[-1] == 1:
        matches = A.squeeze(matches, -1)
    return matches


@keras_export("keras.metrics.top_k_categorical_accuracy")
def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return sparse_top_k_categorical_accuracy(R.argmax(_tensor(y_true), -1), y_pred, k=k)


@keras_export("keras.metrics.sparse_top_k_categorical_accuracy")
def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true = _tensor(y_true)
    y_pred = _tensor(y_pred)
    if _ndim(y_true) == _ndim(y_pred) and _shape(y_true)[-1] == 1:
        y_true = A.squeeze(y_true, -1)
    target = A.take_along_axis(y_pred, A.expand_dims(M.cast(y_true, "int64"), -1), axis=-1)
    # In the top k if fewer than k classes score strictly higher than the target class.
    higher = R.reduce_sum(M.cast(M.greater(y_pred, target), "int64"), -1)
    return M.cast(M.less(higher, _tensor(k, "int64")), backend.floatx())


Accuracy = _wrapper_class("Accuracy", accuracy, "accuracy")


BinaryAccuracy = _wrapper_class("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)


CategoricalAccuracy = _wrapper_class("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")


SparseCategoricalAccuracy = _wrapper_class("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                           "sparse_categorical_accuracy")


TopKCategoricalAccuracy = _wrapper_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                         "top_k_categorical_accuracy", k=5)


SparseTopKCategoricalAccuracy = _wrapper_class("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                               "sparse_top_k_categorical_accuracy", k=5)
