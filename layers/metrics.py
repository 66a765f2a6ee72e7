"""Metrics (``keras.metrics``): stateful ``update_state`` / ``result`` / ``reset_state``.

A metric's state lives in non-trainable variables (``total``, ``count``,
...), so it can be inspected and saved like Keras's. Metrics are never
differentiated, so their updates run in numpy.
"""
import functools

import numpy as np

from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.recording import outside_graph, tracing_graph
from tapeflow.framework.tensor import Tensor

from . import backend, tree
from .serialization_lib import (deserialize_keras_object, keras_export, module_accessors,
                                serialize_keras_object)
from .variable import KerasVariable


def _array(x, dtype=None):
    value = np.asarray(getattr(x, "_value", x) if not hasattr(x, "_as_tensor") else x.numpy())
    return value if dtype is None else value.astype(dtype, copy=False)


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = x2[..., None]
        else:
            x1 = x1[..., 0]
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = x1[..., None]
        else:
            x2 = x2[..., 0]
    return x1, x2


def _deferred_under_tracing(update_state):
    """Inside tf.function, ``update_state`` becomes a graph node that runs the numpy update on every call."""
    @functools.wraps(update_state)
    def wrapper(self, *args, **kwargs):
        graph = tracing_graph()
        if graph is None:
            return update_state(self, *args, **kwargs)
        leaves = tree.flatten((args, kwargs))
        positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor) or hasattr(leaf, "_as_tensor")]
        tensors = [convert_to_tensor(leaves[i]) for i in positions]

        def replay(*values):
            filled = list(leaves)
            for i, value in zip(positions, values):
                filled[i] = value
            it = iter(filled)
            call_args, call_kwargs = tree.map_structure(lambda _: next(it), (args, kwargs))
            update_state(self, *call_args, **call_kwargs)
        graph.defer_call(replay, tensors)
    wrapper._defers_under_tracing = True
    return wrapper


_RESULT_DEPTH = [0]   # > 0 while a traced result() is being computed: inner calls run as written


def _result_under_tracing(result):
    """Inside tf.function, a ``result()`` computed with numpy (a constant of the trace) becomes
    a graph node that recomputes it at each call; one computed with tf ops on the metric's
    variables is already live and is returned as it is."""
    @functools.wraps(result)
    def wrapper(self, *args, **kwargs):
        graph = tracing_graph()
        if graph is None or _RESULT_DEPTH[0]:
            return result(self, *args, **kwargs)
        _RESULT_DEPTH[0] += 1
        try:
            try:
                value = result(self, *args, **kwargs)
            except TypeError:   # it read a symbolic tensor as a number: compute it outside the trace
                with outside_graph():
                    value = result(self, *args, **kwargs)
        finally:
            _RESULT_DEPTH[0] -= 1
        if not isinstance(value, Tensor) or graph.is_live(value):
            return value
        return graph.defer_call(lambda: result(self, *args, **kwargs), [], returns=value)
    wrapper._defers_under_tracing = True
    return wrapper


@keras_export("keras.metrics.Metric")
class Metric:
    """Base class: subclasses create state with ``add_variable`` and implement the three methods."""
    _is_keras_metric = True
    _direction = None  # "up" when larger is better, "down" when smaller is (used by callbacks' mode="auto")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        update_state = cls.__dict__.get("update_state")
        if update_state is not None and not getattr(update_state, "_defers_under_tracing", False):
            cls.update_state = _deferred_under_tracing(update_state)
        result = cls.__dict__.get("result")
        if result is not None and not getattr(result, "_defers_under_tracing", False):
            cls.result = _result_under_tracing(result)

    def __init__(self, dtype=None, name=None):
        self.name = name or backend.snake_case(type(self).__name__)
        self._dtype = getattr(dtype, "name", dtype) or backend.floatx()
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        from . import initializers
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
            v.assign(np.zeros(v.shape, v._value.dtype))

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

    def _scalar(self, value):
        return Tensor(np.asarray(value, dtype=self._dtype))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _to_samplewise(values, sample_weight, reduce=np.mean):
    """Per-sample values (and weights): the trailing axes reduced with ``reduce`` (mean for Mean, sum for Sum)."""
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=values.dtype)
        wd, vd = sample_weight.ndim, values.ndim
        if vd > wd:
            values = reduce(values, axis=tuple(range(wd, vd)))
        sample_weight = np.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if wd > 1:
            sample_weight = reduce(sample_weight, axis=tuple(range(1, wd)))
    if values.ndim > 1:
        values = reduce(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


# ------------------------------------------------------------ reductions ---
@keras_export("keras.metrics.Sum")
class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = _to_samplewise(_array(values, self._dtype), sample_weight, reduce=np.sum)
        self.total.assign(self.total._value + values.sum(dtype=self._dtype))

    def result(self):
        return self._scalar(self.total._value)


@keras_export("keras.metrics.Mean")
class Mean(Metric):
    """The (weighted) mean of the values seen: total / count."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        values, sample_weight = _to_samplewise(_array(values, self._dtype), sample_weight)
        self.total.assign(self.total._value + values.sum(dtype=self._dtype))
        if sample_weight is not None:
            count = np.sum(sample_weight, dtype=self._dtype)
        else:
            count = values.shape[0] if values.ndim >= 1 else 1
        self.count.assign(self.count._value + np.asarray(count, self._dtype))

    def result(self):
        count = self.count._value
        return self._scalar(self.total._value / count if count else 0.0)


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
        values = _array(self._fn(y_true, y_pred, **self._fn_kwargs), self._dtype)
        if sample_weight is not None:
            values, sample_weight = squeeze_or_expand_to_same_rank(values, _array(sample_weight, self._dtype))
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
            config["fn"] = deserialize_keras_object(config["fn"], module_objects=_FUNCTIONS)
        return cls(**config)


# ------------------------------------------------------ metric functions ---
@keras_export("keras.metrics.accuracy")
def accuracy(y_true, y_pred):
    y_pred = _array(y_pred)
    y_true = _array(y_true)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return (y_true == y_pred).astype(backend.floatx())


@keras_export("keras.metrics.binary_accuracy")
def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = _array(y_pred)
    y_true = _array(y_true)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    predicted = (y_pred > threshold).astype(y_true.dtype)
    return np.mean(y_true == predicted, axis=-1, dtype=backend.floatx())


@keras_export("keras.metrics.categorical_accuracy")
def categorical_accuracy(y_true, y_pred):
    y_true = _array(y_true)
    y_pred = _array(y_pred)
    if y_true.ndim == y_pred.ndim:
        y_true = np.argmax(y_true, axis=-1)
    return (y_true.astype(np.int64) == np.argmax(y_pred, axis=-1)).astype(backend.floatx())


@keras_export("keras.metrics.sparse_categorical_accuracy")
def sparse_categorical_accuracy(y_true, y_pred):
    y_true = _array(y_true)
    y_pred = _array(y_pred)
    original_shape = y_true.shape
    reshape = False
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
        reshape = True
    matches = (y_true == np.argmax(y_pred, axis=-1)).astype(backend.floatx())
    if reshape:
        matches = matches.reshape(original_shape)
    if matches.ndim > 1 and matches.shape[-1] == 1:
        matches = matches[..., 0]
    return matches


@keras_export("keras.metrics.top_k_categorical_accuracy")
def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return sparse_top_k_categorical_accuracy(np.argmax(_array(y_true), axis=-1), y_pred, k=k)


@keras_export("keras.metrics.sparse_top_k_categorical_accuracy")
def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true = _array(y_true)
    y_pred = _array(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    y_true = y_true.astype(np.int64)
    target = np.take_along_axis(y_pred, y_true[..., None], axis=-1)
    # In the top k if fewer than k classes score strictly higher than the target class.
    return (np.sum(y_pred > target, axis=-1) < k).astype(backend.floatx())


def _regression_pair(y_true, y_pred):
    y_pred = _array(y_pred)
    y_true = _array(y_true, y_pred.dtype if y_pred.dtype.kind == "f" else backend.floatx())
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


@keras_export("keras.metrics.mean_squared_error")
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    return np.mean(np.square(y_true - y_pred), axis=-1)


@keras_export("keras.metrics.mean_absolute_error")
def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    return np.mean(np.abs(y_true - y_pred), axis=-1)


@keras_export("keras.metrics.mean_absolute_percentage_error")
def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _regression_pair(y_true, y_pred)
    return 100.0 * np.mean(np.abs((y_true - y_pred) / np.maximum(np.abs(y_true), backend.epsilon())), axis=-1)


def _losses():
    from . import losses
    return losses


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
        return _array(getattr(_losses(), loss_name)(y_true, y_pred, **kwargs))
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
    """sqrt of the mean squared error over everything seen."""
    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _regression_pair(y_true, y_pred)
        error = np.square(y_true - y_pred).astype(self._dtype)
        if sample_weight is not None:
            error, sample_weight = squeeze_or_expand_to_same_rank(error, _array(sample_weight, self._dtype))
        super().update_state(error, sample_weight=sample_weight)

    def result(self):
        return self._scalar(np.sqrt(super().result()._value))


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
        y_true = _array(y_true).astype(bool)
        y_pred = _array(y_pred)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        weight = np.ones_like(y_pred, dtype=np.float64) if sample_weight is None else np.broadcast_to(
            squeeze_or_expand_to_same_rank(_array(sample_weight, np.float64), y_pred)[0], y_pred.shape)
        predicted = y_pred.reshape(-1)[None, :] > self.thresholds[:, None]
        truth = y_true.reshape(-1)[None, :]
        weight = weight.reshape(-1)[None, :]
        tp = np.sum((predicted & truth) * weight, axis=1)
        second = np.sum((self._second_mask(predicted, truth)) * weight, axis=1)
        self.true_positives.assign(self.true_positives._value + tp.astype(self._dtype))
        self._second.assign(self._second._value + second.astype(self._dtype))

    def result(self):
        tp, other = self.true_positives._value, self._second._value
        denom = tp + other
        value = np.divide(tp, denom, out=np.zeros_like(tp), where=denom != 0)
        return self._scalar(value[0] if len(value) == 1 else value)

    def get_config(self):
        config = super().get_config()
        config.update({"thresholds": self.init_thresholds, "top_k": None, "class_id": self.class_id})
        return config


@keras_export("keras.metrics.Precision")
class Precision(_ConfusionCounts):
    """true positives / predicted positives."""
    _second_name = "false_positives"

    @staticmethod
    def _second_mask(predicted, truth):
        return predicted & ~truth


@keras_export("keras.metrics.Recall")
class Recall(_ConfusionCounts):
    """true positives / actual positives."""
    _second_name = "false_negatives"

    @staticmethod
    def _second_mask(predicted, truth):
        return ~predicted & truth


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
        y_pred = _array(y_pred).astype(np.float64)
        if self.from_logits:
            y_pred = 1.0 / (1.0 + np.exp(-y_pred))
        y_true = _array(y_true).astype(bool)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        weight = np.ones(y_pred.shape) if sample_weight is None else np.broadcast_to(
            squeeze_or_expand_to_same_rank(_array(sample_weight, np.float64), y_pred)[0], y_pred.shape)
        pred = y_pred.reshape(-1)[None, :] > self.thresholds[:, None]
        truth = y_true.reshape(-1)[None, :]
        w = weight.reshape(-1)[None, :]
        for variable, mask in ((self.true_positives, pred & truth), (self.false_positives, pred & ~truth),
                               (self.true_negatives, ~pred & ~truth), (self.false_negatives, ~pred & truth)):
            variable.assign(variable._value + np.sum(mask * w, axis=1).astype(self._dtype))

    def result(self):
        tp = self.true_positives._value.astype(np.float64)
        fp = self.false_positives._value.astype(np.float64)
        tn = self.true_negatives._value.astype(np.float64)
        fn = self.false_negatives._value.astype(np.float64)

        def ratio(a, b):
            return np.divide(a, b, out=np.zeros_like(a), where=b != 0)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._scalar(self._interpolated_pr_auc(tp, fp, fn))
        if self.curve == "ROC":
            x, y = ratio(fp, fp + tn), ratio(tp, tp + fn)
        else:
            x, y = ratio(tp, tp + fn), ratio(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return self._scalar(np.sum((x[:-1] - x[1:]) * heights))

    @staticmethod
    def _interpolated_pr_auc(tp, fp, fn):
        """Davis & Goadrich (2006): between thresholds, precision is interpolated along true positives."""
        positives = tp + fp
        total = 0.0
        for i in range(len(tp) - 1):
            d_tp = tp[i] - tp[i + 1]
            d_p = positives[i] - positives[i + 1]
            if tp[i + 1] + fn[i + 1] <= 0:
                continue
            slope = d_tp / d_p if d_p > 0 else 0.0
            intercept = tp[i + 1] - slope * positives[i + 1]
            if positives[i] > 0 and positives[i + 1] > 0:
                log_ratio = np.log(positives[i] / positives[i + 1])
            else:
                log_ratio = 0.0
            total += slope * (d_tp + intercept * log_ratio) / (tp[i + 1] + fn[i + 1])
        return total

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
