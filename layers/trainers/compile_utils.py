"""What ``compile(loss=..., metrics=...)`` turns into: CompileLoss and CompileMetrics.

Both are resolved lazily, on the first batch, because Keras 3 picks the
accuracy (and cross-entropy) variant from the shapes of ``y_true`` and
``y_pred``: a last axis of 1 in the prediction means binary; labels of lower
rank, or a last axis of 1 against several classes, mean sparse categorical;
otherwise categorical.
"""
import numpy as np

from tapeflow.framework.tensor import host_array
from tapeflow.ops import math_ops

from .. import losses as losses_module
from .. import metrics as metrics_module
from ..utils import tree


def _shape(x):
    return tuple(np.shape(host_array(x)))


def _is_sparse(y_true, y_pred):
    t, p = _shape(y_true), _shape(y_pred)
    return len(t) < len(p) or (len(t) == len(p) and t and t[-1] == 1 and p[-1] > 1)


def get_metric(identifier, y_true, y_pred):
    """A Metric object for one compile() entry, named as the user wrote it."""
    if identifier is None:
        return None
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        p = _shape(y_pred)
        if p and p[-1] == 1:
            fn = metrics_module.binary_accuracy
        elif _is_sparse(y_true, y_pred):
            fn = metrics_module.sparse_categorical_accuracy
        else:
            fn = metrics_module.categorical_accuracy
        metric = metrics_module.MeanMetricWrapper(fn)
    elif isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
        metric = metrics_module.MeanMetricWrapper(_crossentropy_fn(y_true, y_pred))
    else:
        metric = metrics_module.get(identifier)
        if not isinstance(metric, metrics_module.Metric):
            metric = metrics_module.MeanMetricWrapper(metric)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def _crossentropy_fn(y_true, y_pred):
    p = _shape(y_pred)
    if p and p[-1] == 1:
        return losses_module.binary_crossentropy
    if _is_sparse(y_true, y_pred):
        return losses_module.sparse_categorical_crossentropy
    return losses_module.categorical_crossentropy


def get_loss(identifier, y_true, y_pred):
    """A Loss object for one compile() entry."""
    if identifier is None:
        return None
    if isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
        return losses_module.LossFunctionWrapper(_crossentropy_fn(y_true, y_pred), name=identifier)
    loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        loss = losses_module.LossFunctionWrapper(loss, name=getattr(loss, "__name__", None))
    return loss


def _per_output(value, output_names, what):
    """Spreads a compile() argument over the model outputs: a list per output, a dict by name, or shared."""
    n = len(output_names)
    if isinstance(value, dict):
        unknown = set(value) - set(output_names)
        if unknown:
            raise ValueError(f"In the dict argument `{what}`, key(s) {sorted(unknown)} do not correspond to any model "
                             f"output. Received: {what}={value}; model outputs: {output_names}")
        return [value.get(name) for name in output_names]
    if isinstance(value, (list, tuple)) and n > 1:
        if len(value) != n:
            raise ValueError(f"For a model with {n} outputs, when providing the `{what}` argument as a list, it should "
                             f"have as many entries as the model has outputs. Received: {what}={value} of length "
                             f"{len(value)} whereas the model has {n} outputs.")
        return list(value)
    return [value] * n


def by_output(value, output_names, what="y"):
    """A dict keyed by output names (``y``, ``sample_weight``, a dict-output model's predictions) as the
    list in the model's output order, as Keras takes them; any other value as it is."""
    if not isinstance(value, dict) or not output_names:
        return value
    unknown = set(value) - set(output_names)
    if unknown:
        raise ValueError(f"In the dict `{what}`, key(s) {sorted(unknown)} do not correspond to any model output. "
                         f"Model outputs: {output_names}")
    return [value.get(name) for name in output_names]


def _validate_loss(loss):
    """Unknown loss names fail at compile time, before any training."""
    if isinstance(loss, str):
        if loss.lower() not in ("crossentropy", "ce"):
            losses_module.get(loss)
    elif isinstance(loss, (list, tuple)):
        for item in loss:
            _validate_loss(item)
    elif isinstance(loss, dict):
        for item in loss.values():
            _validate_loss(item)
    elif loss is not None and not callable(loss):
        raise ValueError(f"Could not interpret loss identifier: {loss!r}")


class CompileLoss:
    """The compiled loss: the (weighted) sum of one loss per output."""

    def __init__(self, loss, loss_weights=None, output_names=None):
        if loss is None:
            raise ValueError("CompileLoss needs a loss.")
        _validate_loss(loss)
        self._user_loss = loss
        self._user_loss_weights = loss_weights
        self.output_names = output_names
        self.built = False
        self._losses = []
        self._weights = []
        self.metrics = []

    def build(self, y_true, y_pred):
        flat_pred = y_pred if isinstance(y_pred, (list, tuple)) else [y_pred]
        flat_true = y_true if isinstance(y_true, (list, tuple)) else [y_true]
        names = self.output_names or [f"output_{i}" for i in range(len(flat_pred))]
        if len(names) != len(flat_pred):
            names = [f"output_{i}" for i in range(len(flat_pred))]
        user = self._user_loss if len(flat_pred) > 1 or not isinstance(self._user_loss, (list, tuple)) else (
            self._user_loss[0] if len(self._user_loss) == 1 else self._user_loss)
        if len(flat_pred) == 1 and isinstance(user, (list, tuple)):
            raise ValueError(f"The model has 1 output, but `loss` is a list of {len(user)} losses: {user}")
        per_output = _per_output(user, names, "loss") if len(flat_pred) > 1 else [user]
        weights = self._user_loss_weights
        per_weight = ([1.0] * len(flat_pred) if weights is None else
                      _per_output(weights, names, "loss_weights") if len(flat_pred) > 1 else
                      [weights if not isinstance(weights, (list, tuple)) else weights[0]])
        if len(flat_true) != len(flat_pred):
            raise ValueError(f"The model has {len(flat_pred)} outputs, but `y` has {len(flat_true)} entries.")
        self._losses = [get_loss(loss, t, p) for loss, t, p in zip(per_output, flat_true, flat_pred)]
        self._weights = [1.0 if w is None else float(w) for w in per_weight]
        if len(flat_pred) > 1:
            self.metrics = [metrics_module.Mean(name=f"{name}_loss") if loss is not None else None
                            for name, loss in zip(names, self._losses)]
        self.built = True

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, sample_weight = (by_output(v, self.output_names, what) for v, what in (
            (y_true, "y"), (y_pred, "y_pred"), (sample_weight, "sample_weight")))
        if not self.built:
            self.build(y_true, y_pred)
        if len(self._losses) == 1:
            loss = self._losses[0](y_true, y_pred, sample_weight)
            return loss if self._weights[0] == 1.0 else math_ops.multiply(loss, self._weights[0])
        total = None
        weights = sample_weight if isinstance(sample_weight, (list, tuple)) else [sample_weight] * len(self._losses)
        for i, (loss_fn, weight) in enumerate(zip(self._losses, self._weights)):
            if loss_fn is None:
                continue
            if y_true[i] is None:
                raise ValueError(f"Output '{self.output_names[i] if self.output_names else i}' has a loss, but `y` "
                                 "has no target for it.")
            value = loss_fn(y_true[i], y_pred[i], weights[i])
            if self.metrics[i] is not None:
                self.metrics[i].update_state(value, sample_weight=_shape(tree.flatten(y_pred)[0])[0])
            value = math_ops.multiply(value, weight) if weight != 1.0 else value
            total = value if total is None else math_ops.add(total, value)
        return total

    def get_config(self):
        return {"loss": self._user_loss, "loss_weights": self._user_loss_weights}


class CompileMetrics(metrics_module.Metric):
    """All compiled metrics as one Metric named ``compile_metrics`` whose result is a dict."""

    def __init__(self, metrics, weighted_metrics, name="compile_metrics", output_names=None):
        super().__init__(name=name)
        for what, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value is not None and not isinstance(value, (list, tuple, dict)):
                raise ValueError(f"Expected `{what}` argument to be a list, tuple, or dict. Received instead: "
                                 f"{what}={value} of type {type(value)}")
        self._user_metrics = metrics
        self._user_weighted_metrics = weighted_metrics
        self.output_names = output_names
        self.built = False
        self._unweighted = []   # (output index, Metric)
        self._weighted = []

    def _resolve(self, user, y_true, y_pred, names):
        if user is None:
            return []
        n = len(y_pred)
        if n == 1:
            if isinstance(user, dict):  # {output_name: metrics} for the one output
                entries = [m for v in user.values() for m in (v if isinstance(v, (list, tuple)) else [v])]
            else:
                entries = list(user)
            return [(0, get_metric(m, y_true[0], y_pred[0])) for m in entries if m is not None]
        per_output = _per_output(user, names, "metrics")
        out = []
        for i, entries in enumerate(per_output):
            if entries is None:
                continue
            for m in (entries if isinstance(entries, (list, tuple)) else [entries]):
                metric = get_metric(m, y_true[i], y_pred[i])
                metric.name = f"{names[i]}_{metric.name}"
                out.append((i, metric))
        return out

    def build(self, y_true, y_pred):
        y_true = list(y_true) if isinstance(y_true, (list, tuple)) else [y_true]
        y_pred = list(y_pred) if isinstance(y_pred, (list, tuple)) else [y_pred]
        names = self.output_names or [f"output_{i}" for i in range(len(y_pred))]
        if len(names) != len(y_pred):
            names = [f"output_{i}" for i in range(len(y_pred))]
        self._unweighted = self._resolve(self._user_metrics, y_true, y_pred, names)
        self._weighted = self._resolve(self._user_weighted_metrics, y_true, y_pred, names)
        taken = {m.name for _, m in self._unweighted}
        for _, m in self._weighted:
            if m.name in taken:
                m.name = "weighted_" + m.name
        self.built = True

    @property
    def metrics(self):
        return [m for _, m in self._unweighted + self._weighted]

    @property
    def variables(self):
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, sample_weight = (by_output(v, self.output_names, what) for v, what in (
            (y_true, "y"), (y_pred, "y_pred"), (sample_weight, "sample_weight")))
        if not self.built:
            self.build(y_true, y_pred)
        y_true = y_true if isinstance(y_true, (list, tuple)) else [y_true]
        y_pred = y_pred if isinstance(y_pred, (list, tuple)) else [y_pred]
        for i, metric in self._unweighted:
            metric.update_state(y_true[i], y_pred[i])
        weights = sample_weight if isinstance(sample_weight, (list, tuple)) else [sample_weight] * len(y_pred)
        for i, metric in self._weighted:
            metric.update_state(y_true[i], y_pred[i], sample_weight=weights[i])

    def result(self):
        return {m.name: m.result() for m in self.metrics}

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def get_config(self):
        return {"metrics": self._user_metrics, "weighted_metrics": self._user_weighted_metrics}
