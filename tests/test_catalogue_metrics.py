"""F1Score, FBetaScore, R2Score and the IoU family against real Keras 3 results
(tests/fixtures/keras3/make_catalogue_fixtures.py), configs as Keras, and their life in a .keras file."""
import json
import os
import warnings

import numpy as np
import pytest

import tapeflow as tf

_FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3", "catalogue_fixtures.json")
with open(_FIXTURES) as f:
    METRIC_CASES = json.load(f)["metrics"]


def _run(case):
    metric = getattr(tf.keras.metrics, case["class"])(**case["kwargs"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y_true, y_pred, weight in case["batches"]:
            metric.update_state(np.asarray(y_true), np.asarray(y_pred), None if weight is None else np.asarray(weight))
    return metric


@pytest.mark.parametrize("case", METRIC_CASES, ids=lambda c: f"{c['class']}-{c['kwargs']}")
def test_matches_keras(case):
    metric = _run(case)
    np.testing.assert_allclose(np.asarray(metric.result()), case["result"], rtol=2e-6, atol=1e-7)
    config = metric.get_config()
    assert config.pop("dtype") == "float32"
    expected = dict(case["config"])
    assert config.pop("name").split("_1")[0] == expected.pop("name").split("_1")[0]
    assert config == expected
    clone = type(metric).from_config(metric.get_config())
    assert clone.get_config() == metric.get_config()
    metric.reset_state()
    again = _run({**case, "kwargs": case["kwargs"]})
    for y_true, y_pred, weight in case["batches"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric.update_state(np.asarray(y_true), np.asarray(y_pred), None if weight is None else np.asarray(weight))
    np.testing.assert_array_equal(np.asarray(metric.result()), np.asarray(again.result()))


def test_f1_closed_form_and_errors():
    # one class, 2 true positives, 1 false positive, 1 false negative: precision = recall = 2/3
    metric = tf.keras.metrics.F1Score(threshold=0.5)
    metric.update_state(np.array([[1.0], [1.0], [0.0], [1.0]]), np.array([[0.9], [0.6], [0.7], [0.1]]))
    np.testing.assert_allclose(metric.result().numpy(), [2 / 3], rtol=1e-6)
    with pytest.raises(ValueError, match="average"):
        tf.keras.metrics.F1Score(average="samples")
    with pytest.raises(ValueError, match="2D"):
        tf.keras.metrics.F1Score().update_state(np.ones(3), np.ones(3))


def test_iou_drops_out_of_range_ids_and_ignored_class():
    metric = tf.keras.metrics.MeanIoU(num_classes=2, ignore_class=255)
    metric.update_state(np.array([0, 1, 255, 1]), np.array([0, 1, 1, 7]))
    # counted: (0,0) and (1,1); 255 is ignored and the prediction 7 is out of range
    np.testing.assert_allclose(metric.result().numpy(), 1.0)
    np.testing.assert_array_equal(metric.total_cm.numpy(), [[1, 0], [0, 1]])


def test_r2_perfect_and_constant_target():
    metric = tf.keras.metrics.R2Score()
    metric.update_state(np.array([[1.0], [2.0], [4.0]]), np.array([[1.0], [2.0], [4.0]]))
    np.testing.assert_allclose(metric.result().numpy(), 1.0)
    constant = tf.keras.metrics.R2Score()
    constant.update_state(np.array([3.0, 3.0]), np.array([1.0, 2.0]))  # zero variance: Keras reads -inf as 0
    assert constant.result().numpy() == 0.0


def test_fit_and_keras_file_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((24, 4)).astype("float32")
    y = np.eye(3, dtype="float32")[np.arange(24) % 3]
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile("sgd", "categorical_crossentropy",
                  metrics=[tf.keras.metrics.FBetaScore(average="weighted", beta=0.5), tf.keras.metrics.R2Score(),
                           tf.keras.metrics.OneHotIoU(3, [0, 2]), tf.keras.metrics.F1Score(average="micro")])
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    expected = model.evaluate(x, y, verbose=0, return_dict=True)
    assert loaded.evaluate(x, y, verbose=0, return_dict=True) == expected
    f1 = tf.keras.metrics.F1Score(average="micro")
    f1.update_state(y, model.predict(x, verbose=0))
    np.testing.assert_allclose(expected["f1_score"], f1.result().numpy(), rtol=1e-6)
    for metric in (tf.keras.metrics.IoU(4, [1, 3], ignore_class=0), tf.keras.metrics.MeanIoU(3),
                   tf.keras.metrics.BinaryIoU([1], threshold=0.3), tf.keras.metrics.OneHotMeanIoU(5),
                   tf.keras.metrics.R2Score(class_aggregation=None, num_regressors=1)):
        clone = tf.keras.metrics.deserialize(tf.keras.metrics.serialize(metric))
        assert type(clone) is type(metric) and clone.get_config() == metric.get_config()
    assert isinstance(tf.keras.metrics.get("F1Score"), tf.keras.metrics.F1Score)
