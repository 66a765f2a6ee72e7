"""Metrics (``keras.metrics``): stateful ``update_state`` / ``result`` / ``reset_state``.

A metric's state lives in non-trainable variables (``total``, ``count``,
...), so it can be inspected and saved like Keras's. As in Keras, updates are
computed with tapeflow ops and applied with ``assign`` / ``assign_add``, and
results are computed with ops on the variables: eagerly they run at once;
inside tf.function they are nodes of the traced graph, run at every call, so
a traced step that updates metrics can be saved and reloaded like any graph.

Numbers follow Keras 3: values are cast to the metric's dtype before they are
reduced, confusion counts are compared and summed in the variables' dtype.
"""
import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import nn_ops
from tapeflow.ops import reduction_ops as R

from .. import backend
from .. import losses as losses_module
from ..losses import squeeze_or_expand_to_same_rank  # noqa: F401  (Keras's rule, also public here)
from ..serialization_lib import deserialize_keras_object, keras_export, module_accessors, serialize_keras_object
from ..variable import KerasVariable


def _holds_tensors(x):
    if isinstance(x, (list, tuple)):
        return any(_holds_tensors(item) for item in x)
    return isinstance(x, Tensor) or hasattr(x, "_as_tensor")


def _tensor(x, dtype=None):
    """``x`` as a Tensor, in ``dtype`` when given. Tensors and variables are cast with an op (a node of
    the graph being traced); Python and numpy values are converted straight to ``dtype``."""
    if dtype is None:
        return convert_to_tensor(x)
    if _holds_tensors(x):
        return M.cast(convert_to_tensor(x), dtype)
    return convert_to_tensor(np.asarray(x).astype(dtypes.as_dtype(dtype).as_numpy_dtype))


def _ndim(t):
    return t._value.ndim


def _shape(t):
    return t._value.shape


@keras_export("keras.metrics.Metric")
class Metric:
    """Base class: subclasses create state with ``add_variable`` and implement the three methods."""
    _is_keras_metric = True
    _direction = None  # "up" when larger is better, "down" when smaller is (used by callbacks' mode="auto")

    def __init__(self, dtype=None, name=None):
        self.name = name or backend.snake_case(type(self).__name__)
        self._dtype = getattr(dtype, "name", dtype) or backend.floatx()
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        from .. import initializers
        with backend.name_scope(self.name, caller=self):
            variable = KerasVariable(initializers.get(initializer), shape=tuple(shape), dtype=dtype or self._dtype,
                                     trainable=False, aggregation=aggregation, name=name)
        self._variables.append(variable)
        return variable

    add_weight = add_variable

    @property
    def variables(self):
        out = list(self._variables)
        for value in vars(self).values():
            if isinstance(value, Metric):
                out.extend(value.variables)
        return out

    def reset_state(self):
        for v in self.variables:
            v.assign(A.zeros(v.shape, v.dtype))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"Metric {type(self).__name__} does not implement `update_state()`.")

    def result(self):
        raise NotImplementedError(f"Metric {type(self).__name__} does not implement `result()`.")

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def save_own_variables(self, store):
        for i, v in enumerate(self._variables):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store):
        if len(list(store.keys())) != len(self._variables):
            raise ValueError(f"Metric '{self.name}' expected {len(self._variables)} variables, but received "
                             f"{len(list(store.keys()))} variables during loading.")
        for i, v in enumerate(self._variables):
            v.assign(np.asarray(store[str(i)]))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


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


# ------------------------------------------------------------ reductions ---
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
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)

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
            config["fn"] = deserialize_keras_object(config["fn"], module_objects=_FUNCTIONS)
        return cls(**config)


# ------------------------------------------------------ metric functions ---
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


# ---------------------------------------------------------- metric classes ---
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


Accuracy = _wrapper_class("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper_class("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)
CategoricalAccuracy = _wrapper_class("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper_class("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                           "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _wrapper_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                         "top_k_categorical_accuracy", k=5)
SparseTopKCategoricalAccuracy = _wrapper_class("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                               "sparse_top_k_categorical_accuracy", k=5)
MeanSquaredError = _wrapper_class("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                             "mean_absolute_percentage_error")


def _crossentropy_metric(public_name, loss_name, **defaults):
    def fn(y_true, y_pred, **kwargs):
        return getattr(losses_module, loss_name)(y_true, y_pred, **kwargs)
    fn.__name__ = loss_name
    return _wrapper_class(public_name, fn, loss_name, **defaults)


BinaryCrossentropy = _crossentropy_metric("BinaryCrossentropy", "binary_crossentropy", from_logits=False,
                                          label_smoothing=0.0)
CategoricalCrossentropy = _crossentropy_metric("CategoricalCrossentropy", "categorical_crossentropy",
                                               from_logits=False, label_smoothing=0.0)
SparseCategoricalCrossentropy = _crossentropy_metric("SparseCategoricalCrossentropy",
                                                     "sparse_categorical_crossentropy", from_logits=False)


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


def _confusion_inputs(metric, y_true, y_pred, sample_weight, dtype):
    """Keras's preparation of labels, predictions and weights for confusion counts, all in ``dtype``
    (the counts' dtype): ranks matched, a weight per prediction."""
    y_true = _tensor(y_true, dtype)
    y_pred = _tensor(y_pred, dtype)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if y_true._value.size != y_pred._value.size:
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
        if self.class_id is not None:
            if _ndim(y_pred) == 1:
                raise ValueError("When class_id is provided, y_pred must be a 2D array with shape (num_samples, "
                                 f"num_classes), found shape: {_shape(y_pred)}")
            at = slice(self.class_id, self.class_id + 1)
            y_true, y_pred = y_true[..., at], y_pred[..., at]
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


_FUNCTIONS = {
    "accuracy": accuracy, "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "MAPE": mean_absolute_percentage_error,
}
_CLASSES = {cls.__name__: cls for cls in (
    Sum, Mean, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError,
    MeanAbsolutePercentageError, RootMeanSquaredError, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, Precision, Recall, AUC)}
_SNAKE_CLASSES = {backend.snake_case(name): cls for name, cls in _CLASSES.items()}
_SNAKE_CLASSES["auc"] = AUC


# Names resolve as Keras does: functions, then classes, then snake-case class names, then registered objects.
serialize, deserialize, get = module_accessors({**_FUNCTIONS, **_CLASSES}, "metric",
                                               names={**_SNAKE_CLASSES, **_CLASSES, **_FUNCTIONS}, registered=True)
