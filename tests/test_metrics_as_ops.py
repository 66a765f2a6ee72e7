"""Metrics and BatchNormalization's moving statistics are ops: a traced step runs exactly what the
eager step runs (same variables, same results, bit for bit), its graph holds no Python-call node,
and it saves and reloads in a fresh process that then updates the reloaded state identically."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.recording import forward_of
from tapeflow.function import VARIABLE_ASSIGN, VARIABLE_READ

K = tf.keras
M = K.metrics
BATCH, FEATURES, CLASSES, STEPS = 16, 4, 3, 5
SIGNATURE = [tf.TensorSpec([BATCH, FEATURES], tf.float32), tf.TensorSpec([BATCH], tf.int64),
             tf.TensorSpec([BATCH], tf.float32)]


def batches(seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32) * 2 + 1,
             rng.integers(0, CLASSES, BATCH).astype(np.int64),
             rng.random(BATCH).astype(np.float32) * 2) for _ in range(STEPS)]


class Training:
    """A custom training loop's state: a model with BatchNormalization, four metrics, and a plain SGD
    step written with assign_sub (no Python-call node, unlike the optimizers for now)."""

    def __init__(self):
        K.utils.set_random_seed(3)
        self.model = K.Sequential([K.Input((FEATURES,)), K.layers.Dense(8, activation="relu"),
                                   K.layers.BatchNormalization(momentum=0.9),
                                   K.layers.Dense(CLASSES, activation="softmax")])
        self.loss_fn = K.losses.SparseCategoricalCrossentropy()
        self.mean_loss = M.Mean()
        self.accuracy = M.SparseCategoricalAccuracy()
        self.auc = M.AUC(num_thresholds=50)
        self.weighted_accuracy = M.SparseCategoricalAccuracy(name="weighted")
        self.metrics = [self.mean_loss, self.accuracy, self.auc, self.weighted_accuracy]

    def step(self, x, y, w):
        with tf.GradientTape() as tape:
            probs = self.model(x, training=True)
            loss = self.loss_fn(y, probs)
        grads = tape.gradient(loss, self.model.trainable_variables)
        for variable, grad in zip(self.model.trainable_variables, grads):
            variable.assign_sub(0.1 * grad)
        self.mean_loss.update_state(loss)
        self.accuracy.update_state(y, probs)
        self.auc.update_state(tf.cast(tf.equal(y, 0), tf.float32), probs[:, 0])
        self.weighted_accuracy.update_state(y, probs, sample_weight=w)
        return [m.result() for m in self.metrics]

    def state(self):
        return list(self.model.variables) + [v for m in self.metrics for v in m.variables]


def assert_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape and np.array_equal(a, e), (a, e)


def values(variables):
    return [v.numpy() for v in variables]


def run_eagerly(data):
    training = Training()
    results = [[r.numpy() for r in training.step(*map(tf.constant, b))] for b in data]
    return training, results


def test_a_traced_training_step_updates_metrics_and_moving_statistics_exactly_as_the_eager_one():
    data = batches()
    eager, eager_results = run_eagerly(data)
    traced = Training()
    step = tf.function(traced.step, input_signature=SIGNATURE)
    traced_results = [[r.numpy() for r in step(*map(tf.constant, b))] for b in data]
    for mine, theirs in zip(traced_results, eager_results):
        assert_same(mine, theirs)
    assert_same(values(traced.state()), values(eager.state()))
    bn = traced.model.layers[1]
    assert not np.array_equal(bn.moving_mean.numpy(), np.zeros(8))   # the statistics did move
    assert float(traced.mean_loss.count.numpy()) == STEPS and float(traced.accuracy.count.numpy()) == STEPS * BATCH
    graph = step.get_concrete_function().graph
    for node in graph.nodes:   # every node is data: a registered op or a variable read/assign
        assert node[0] in (VARIABLE_READ, VARIABLE_ASSIGN) or forward_of(node[0])
    assert step.experimental_get_tracing_count() == 1


def test_the_recorded_replay_under_a_tape_runs_the_same_updates():
    data = batches(1)
    eager, eager_results = run_eagerly(data)
    traced = Training()
    step = tf.function(traced.step, input_signature=SIGNATURE)
    for b, expected in zip(data, eager_results):
        with tf.GradientTape():   # replay op by op through execute, assigns through Variable methods
            assert_same([r.numpy() for r in step(*map(tf.constant, b))], expected)
    assert_same(values(traced.state()), values(eager.state()))


def test_a_saved_training_step_updates_the_reloaded_state_in_a_fresh_process(tmp_path):
    data = batches(2)
    eager, eager_results = run_eagerly(data)
    traced = Training()
    module = tf.Module()
    module.step = tf.function(traced.step, input_signature=SIGNATURE)
    module.state = traced.state()
    for b in data[:2]:
        module.step(*map(tf.constant, b))
    tf.saved_model.save(module, str(tmp_path / "model"))
    np.savez(tmp_path / "batches.npz", **{f"{name}{i}": array for i, b in enumerate(data[2:])
                                           for name, array in zip("xyw", b)})
    script = textwrap.dedent(f"""
        import numpy as np
        import tapeflow as tf
        data = np.load({str(tmp_path / "batches.npz")!r})
        loaded = tf.saved_model.load({str(tmp_path / "model")!r})
        results = []
        for i in range({len(data) - 2}):
            results += [r.numpy() for r in loaded.step(*(tf.constant(data[n + str(i)]) for n in "xyw"))]
        np.savez({str(tmp_path / "after.npz")!r}, *([v.numpy() for v in loaded.state] + results))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "after.npz") as after:
        arrays = [after[f"arr_{i}"] for i in range(len(after.files))]
    n_state = len(eager.state())
    assert_same(arrays[:n_state], values(eager.state()))
    assert_same(arrays[n_state:], [r for step_results in eager_results[2:] for r in step_results])
    # the original objects stayed where the save left them: two steps
    assert float(traced.mean_loss.count.numpy()) == 2


def _metric_cases():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, (2, 12))
    probs = rng.dirichlet(np.ones(3), (2, 12)).astype(np.float32)
    binary = rng.integers(0, 2, (2, 12, 1)).astype(np.float32)
    scores = rng.random((2, 12, 1)).astype(np.float32)
    regression = rng.standard_normal((2, 2, 12, 3)).astype(np.float32)
    weights = rng.random((2, 12)).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[labels]
    sparse, dense, scored, regressed = (labels, probs), (onehot, probs), (binary, scores), tuple(regression)
    return [
        (M.Accuracy, {}, (labels, np.argmax(probs, -1))), (M.BinaryAccuracy, {"threshold": 0.3}, scored),
        (M.CategoricalAccuracy, {}, dense), (M.SparseCategoricalAccuracy, {}, sparse),
        (M.TopKCategoricalAccuracy, {"k": 2}, dense), (M.SparseTopKCategoricalAccuracy, {"k": 2}, sparse),
        (M.MeanSquaredError, {}, regressed), (M.MeanAbsoluteError, {}, regressed),
        (M.MeanAbsolutePercentageError, {}, regressed), (M.RootMeanSquaredError, {}, regressed),
        (M.BinaryCrossentropy, {}, scored), (M.CategoricalCrossentropy, {"label_smoothing": 0.1}, dense),
        (M.SparseCategoricalCrossentropy, {}, sparse), (M.Precision, {"thresholds": [0.2, 0.6]}, scored),
        (M.Recall, {}, scored), (M.Precision, {"class_id": 1, "thresholds": 0.3}, dense),
        (M.AUC, {"num_thresholds": 30}, scored), (M.AUC, {"curve": "PR"}, scored),
        (M.AUC, {"curve": "PR", "summation_method": "majoring"}, scored),
        (M.AUC, {"summation_method": "minoring", "from_logits": True}, scored),
    ], weights


@pytest.mark.parametrize("weighted", [False, True])
def test_every_metric_gives_inside_tf_function_what_it_gives_eagerly(weighted):
    cases, weights = _metric_cases()
    for cls, kwargs, (y_true, y_pred) in cases:
        eager, traced = cls(**kwargs), cls(**kwargs)

        @tf.function
        def update_and_read(y_true, y_pred, sample_weight):
            traced.update_state(y_true, y_pred, sample_weight=sample_weight if weighted else None)
            return traced.result()

        for i in range(2):
            eager.update_state(y_true[i], y_pred[i], sample_weight=weights[i] if weighted else None)
            inside = update_and_read(tf.constant(y_true[i]), tf.constant(y_pred[i]), tf.constant(weights[i]))
            assert_same([inside.numpy()], [eager.result().numpy()])
        assert_same(values(traced.variables), values(eager.variables))
        assert all(np.any(v != 0) for v in values(eager.variables)), cls   # every count moved


def test_reset_state_inside_tf_function_is_a_graph_assignment():
    mean = M.Mean()

    @tf.function
    def restart_with(x):
        mean.reset_state()
        mean.update_state(x)
        return mean.result()

    mean.update_state([10.0, 20.0])
    assert [float(restart_with(tf.constant([v, v + 2]))) for v in (1.0, 5.0)] == [2.0, 6.0]
    assert float(mean.count.numpy()) == 2.0


def test_batch_normalization_on_a_middle_axis_moves_its_statistics_identically_when_traced():
    x = np.random.default_rng(5).standard_normal((4, 3, 5)).astype(np.float32)
    eager, traced = (K.layers.BatchNormalization(axis=1, momentum=0.8) for _ in range(2))
    step = tf.function(lambda inputs: traced(inputs, training=True))
    for scale in (1.0, 3.0, -2.0):
        assert_same([step(tf.constant(x * scale)).numpy()], [eager(x * scale, training=True).numpy()])
    assert_same(values(traced.variables), values(eager.variables))
    # Keras's arithmetic: moving = moving * momentum + batch * (1 - momentum), in float32
    expected = np.zeros(3, np.float32)
    for scale in (1.0, 3.0, -2.0):
        expected = expected * np.float32(0.8) + (x * scale).mean(axis=(0, 2)) * np.float32(1 - 0.8)
    assert np.allclose(traced.moving_mean.numpy(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("metric", [M.AUC(), M.Precision(), M.Recall()], ids=lambda m: m.name)
def test_confusion_metrics_refuse_labels_that_do_not_match_the_predictions(metric):
    with pytest.raises(ValueError, match=r"needs one label per prediction: y_true has shape \(8,\) and y_pred "
                                         r"has shape \(8, 3\)"):
        metric.update_state(np.zeros(8), np.full((8, 3), 0.5, np.float32))
    assert all(not np.any(v.numpy()) for v in metric.variables)
