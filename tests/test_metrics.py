"""Metrics: the docstring values the spec verified, state accumulation and reset,
sample weights, AUC against an exact rank computation, and compile-time resolution."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.layers.trainers.compile_utils import CompileMetrics

K = tf.keras
M = K.metrics
rng = np.random.default_rng(11)


def test_accuracy_metrics_docstring_values():
    m = M.Accuracy()
    m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])
    assert np.isclose(float(m.result()), 0.75)
    m = M.BinaryAccuracy()
    m.update_state([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
    assert np.isclose(float(m.result()), 0.75)
    m = M.CategoricalAccuracy()
    m.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
    assert np.isclose(float(m.result()), 0.5)
    m = M.SparseCategoricalAccuracy()
    m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
    assert np.isclose(float(m.result()), 0.5)


def test_state_accumulates_across_updates_and_resets():
    m = M.SparseCategoricalAccuracy()
    m.update_state([0, 1], [[0.9, 0.1], [0.8, 0.2]])
    m.update_state([1, 1, 1], [[0.1, 0.9], [0.2, 0.8], [0.7, 0.3]])
    assert np.isclose(float(m.result()), 3 / 5)
    assert [v.path for v in m.variables] == ["sparse_categorical_accuracy/total", "sparse_categorical_accuracy/count"]
    assert np.isclose(float(m.total.numpy()), 3) and np.isclose(float(m.count.numpy()), 5)
    m.reset_state()
    assert float(m.count.numpy()) == 0 and float(m.result()) == 0.0


def test_weighted_mean_and_sum():
    m = M.Mean()
    m.update_state([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 3.0])
    assert np.isclose(float(m.result()), (1 + 9) / 4)
    m.update_state(4.0, sample_weight=2.0)  # a scalar loss weighted by a batch size, as fit's loss tracker
    assert np.isclose(float(m.result()), (1 + 9 + 8) / 6)
    s = M.Sum()
    s.update_state([[1.0, 2.0], [3.0, 4.0]])
    assert np.isclose(float(s.result()), 10.0)
    acc = M.BinaryAccuracy()
    acc.update_state([[1], [0], [1]], [[0.9], [0.8], [0.2]], sample_weight=[2.0, 1.0, 1.0])
    assert np.isclose(float(acc.result()), 0.5)


def test_regression_metrics():
    y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    p = np.array([[1.5, 2.0], [2.0, 6.0]], np.float32)
    for metric, expected in ((M.MeanSquaredError(), np.mean((y - p) ** 2)), (M.MeanAbsoluteError(),
                             np.mean(np.abs(y - p))), (M.RootMeanSquaredError(), np.sqrt(np.mean((y - p) ** 2)))):
        metric.update_state(y, p)
        assert np.isclose(float(metric.result()), expected, rtol=1e-6), metric.name


def test_top_k_accuracy():
    m = M.SparseTopKCategoricalAccuracy(k=2)
    m.update_state([2, 0], [[0.1, 0.6, 0.3], [0.2, 0.5, 0.3]])
    assert np.isclose(float(m.result()), 0.5)
    m = M.TopKCategoricalAccuracy(k=1)
    m.update_state([[0, 1, 0]], [[0.2, 0.7, 0.1]])
    assert float(m.result()) == 1.0


def exact_roc_auc(y, s):
    pos, neg = s[y == 1], s[y == 0]
    return np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))


def test_auc_roc_matches_the_rank_statistic():
    y = rng.integers(0, 2, 400)
    s = np.clip(y * 0.3 + rng.random(400) * 0.7, 0, 1)
    m = M.AUC(num_thresholds=1000)
    m.update_state(y[:200], s[:200])
    m.update_state(y[200:], s[200:])
    assert abs(float(m.result()) - exact_roc_auc(y, s)) < 2e-3
    perfect = M.AUC()
    perfect.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert np.isclose(float(perfect.result()), 1.0)
    pr = M.AUC(curve="PR")
    pr.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert np.isclose(float(pr.result()), 1.0, atol=1e-6)
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        M.AUC(curve="XY")


def test_precision_and_recall():
    y = [0, 1, 1, 1, 0]
    p = [0.7, 0.6, 0.2, 0.9, 0.1]
    precision, recall = M.Precision(), M.Recall()
    precision.update_state(y, p)
    recall.update_state(y, p)
    assert np.isclose(float(precision.result()), 2 / 3) and np.isclose(float(recall.result()), 2 / 3)


def test_accuracy_string_is_resolved_from_the_shapes():
    def resolved(y_true, y_pred):
        cm = CompileMetrics(["accuracy"], None)
        cm.update_state(tf.constant(y_true), tf.constant(y_pred))
        (metric,) = cm.metrics
        return metric.name, metric._fn.__name__, float(metric.result())
    assert resolved(np.array([[1.0], [0.0]], np.float32), np.array([[0.9], [0.3]], np.float32)) == (
        "accuracy", "binary_accuracy", 1.0)
    assert resolved(np.array([2, 0]), np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1]], np.float32)) == (
        "accuracy", "sparse_categorical_accuracy", 0.5)
    assert resolved(np.array([[2], [1]]), np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1]], np.float32))[1] == \
        "sparse_categorical_accuracy"
    assert resolved(np.array([[0, 0, 1.0], [1.0, 0, 0]], np.float32),
                    np.array([[0.1, 0.2, 0.7], [0.1, 0.8, 0.1]], np.float32)) == (
        "accuracy", "categorical_accuracy", 0.5)


def test_get_and_config_round_trip():
    assert isinstance(M.get("AUC"), M.AUC) and isinstance(M.get("auc"), M.AUC)
    assert M.get("mae") is M.mean_absolute_error
    metric = M.BinaryAccuracy(threshold=0.7, name="acc70")
    clone = M.deserialize(M.serialize(metric))
    assert isinstance(clone, M.BinaryAccuracy) and clone.get_config() == metric.get_config()
    clone.update_state([[1.0]], [[0.65]])
    assert float(clone.result()) == 0.0
    with pytest.raises(ValueError, match="Could not interpret metric identifier: acc_x"):
        M.get("acc_x")


def test_metric_updates_inside_tf_function_run_on_every_call():
    """The Keras guide's pattern: update_state inside a tf.function train step, result() read outside."""
    model = K.Sequential([K.Input((3,)), K.layers.Dense(4)])
    loss_fn = K.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = K.optimizers.SGD(0.1)
    accuracy = M.SparseCategoricalAccuracy()
    mean_loss = M.Mean()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        accuracy.update_state(y, logits)
        mean_loss.update_state(loss)
        return loss
    batches = [(rng.standard_normal((8, 3)).astype(np.float32), rng.integers(0, 4, 8)) for _ in range(3)]
    expected_hits, losses = 0, []
    for x, y in batches:
        logits = model(x).numpy()  # the step's forward pass sees the same weights
        expected_hits += np.sum(np.argmax(logits, 1) == y)
        losses.append(float(train_step(tf.constant(x), tf.constant(y))))
    assert np.isclose(float(accuracy.result()), expected_hits / 24)
    assert np.isclose(float(mean_loss.result()), np.mean(losses), rtol=1e-6)
    assert int(optimizer.iterations.numpy()) == 3


def test_metric_result_inside_tf_function_is_computed_at_each_call():
    mean = tf.keras.metrics.Mean()
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def step(value, labels, probabilities):
        mean.update_state(value)
        return mean.result(), accuracy(labels, probabilities)

    probabilities = tf.constant([[0.1, 0.9]])
    results = [step(tf.constant(v), tf.constant([label]), probabilities) for v, label in ((1.0, 1), (3.0, 0))]
    assert [(float(m), float(a)) for m, a in results] == [(1.0, 1.0), (2.0, 0.5)]
    with tf.GradientTape():  # the op-by-op replay that tapes see agrees
        m, a = step(tf.constant(5.0), tf.constant([1]), probabilities)
    assert float(m) == 3.0 and np.isclose(float(a), 2.0 / 3.0)


def test_a_function_updating_a_metric_and_returning_its_result_saves_and_reloads(tmp_path):
    """update_state and result() are graph ops, not Python calls: the function saves, and the loaded
    copy updates the loaded variables (starting from the saved state), not the original metric."""
    mean = tf.keras.metrics.Mean()
    module = tf.Module()
    module.f = tf.function(lambda x: (mean.update_state(x), mean.result())[1],
                           input_signature=[tf.TensorSpec([], tf.float32)])
    assert float(module.f(tf.constant(2.0))) == 2.0
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert [float(loaded.f(tf.constant(v))) for v in (4.0, 9.0)] == [3.0, 5.0]
    assert float(mean.result()) == 2.0 and float(mean.count.numpy()) == 1.0


def test_a_result_built_from_tf_ops_stays_a_plain_graph_computation(tmp_path):
    class Ratio(M.Metric):
        def __init__(self):
            super().__init__(name="ratio")
            self.total = self.add_variable((), name="total")
            self.count = self.add_variable((), name="count")

        def update_state(self, x):
            self.total.assign_add(tf.reduce_sum(x))
            self.count.assign_add(tf.cast(tf.size(x), tf.float32))

        def result(self):
            return tf.math.divide_no_nan(self.total, self.count)

    module = tf.Module()
    module.metric = Ratio()
    module.get = tf.function(lambda: module.metric.result(), input_signature=[])
    module.metric.update_state(tf.constant([1.0, 2.0]))
    assert float(module.get()) == 1.5
    module.metric.update_state(tf.constant([5.0]))
    assert float(module.get()) == pytest.approx(8.0 / 3.0)
    tf.saved_model.save(module, str(tmp_path / "ratio"))   # no Python node: it can be saved
    assert float(tf.saved_model.load(str(tmp_path / "ratio")).get()) == pytest.approx(8.0 / 3.0)


def test_results_built_on_a_parent_result_work_inside_tf_function():
    class Percent(M.Mean):
        def result(self, scale=100.0):
            return super().result() * scale

    metric = Percent()

    @tf.function
    def step(x):
        metric.update_state(x)
        return metric.result()

    assert [float(step(tf.constant(v))) for v in (1.5, 4.0)] == [150.0, 275.0]
    assert float(metric.result(2.0)) == 5.5   # extra arguments pass through


def test_a_result_read_as_a_python_number_inside_tf_function_raises_as_in_tensorflow():
    class AsNumber(M.Mean):
        def result(self):
            return tf.constant(float(super().result()) * 100.0)

    metric = AsNumber()
    metric.update_state(1.5)
    assert float(metric.result()) == 150.0    # eagerly the value is there
    with pytest.raises(TypeError, match="Converting it to a Python float is not allowed for a symbolic"):
        tf.function(lambda x: (metric.update_state(x), metric.result())[1])(tf.constant(2.0))
