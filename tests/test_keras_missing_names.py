"""Names keras.io examples use that tapeflow lacked (QA F1): confusion-count metrics, categorical hinge and focal
losses. Expected numbers come from real Keras 3.15 on TensorFlow 2.21
(tests/fixtures/keras3_missing_names/make_fixtures.py), and the counts are also recomputed here from their
definition."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
with open(os.path.join(os.path.dirname(__file__), "fixtures", "keras3_missing_names", "fixtures.json")) as f:
    FIX = json.load(f)

CELLS = {"TruePositives": (True, True), "FalsePositives": (True, False), "TrueNegatives": (False, False),
         "FalseNegatives": (False, True)}
THRESHOLDS = {"default": None, "scalar": 0.3, "list": [0.0, 0.25, 0.5, 0.75, 1.0]}


@pytest.mark.parametrize("cls", list(CELLS))
@pytest.mark.parametrize("key", list(THRESHOLDS))
def test_confusion_counts_match_keras(cls, key):
    data = FIX["confusion"]
    y_true, y_pred, weight = (np.array(data[k], "float32") for k in ("y_true", "y_pred", "weight"))
    metric = getattr(K.metrics, cls)(thresholds=THRESHOLDS[key])
    metric.update_state(y_true[0], y_pred[0])
    metric.update_state(y_true[1:], y_pred[1:], sample_weight=weight[1:])
    expected = data["metrics"][f"{cls}/{key}"]
    np.testing.assert_allclose(metric.result().numpy(), expected["result"], rtol=1e-6)
    # Keras numbered the names of the later metrics it made (true_positives_1, ...); the rest must agree.
    config = {k: v for k, v in metric.get_config().items() if k != "name"}
    assert config == {k: v for k, v in expected["config"].items() if k != "name"}
    # The definition: a prediction is positive when strictly above the threshold.
    predicted, actual = CELLS[cls]
    w = np.concatenate([np.ones(8, "float32"), weight[1:].ravel()])
    counts = [np.sum(w * (((y_pred.ravel() > t) == predicted) & ((y_true.ravel() > 0) == actual)))
              for t in np.atleast_1d(0.5 if THRESHOLDS[key] is None else THRESHOLDS[key])]
    np.testing.assert_allclose(np.atleast_1d(metric.result().numpy()), counts, rtol=1e-6)


def test_confusion_counts_reset_compile_and_lookup():
    metric = K.metrics.get("true_positives")
    assert isinstance(metric, K.metrics.TruePositives)
    metric.update_state([1, 1, 0], [0.9, 0.2, 0.7])
    assert float(metric.result()) == 1.0
    metric.reset_state()
    assert float(metric.result()) == 0.0
    assert [v.name for v in metric.variables] == ["accumulator"]
    clone = K.metrics.FalseNegatives.from_config(K.metrics.FalseNegatives(thresholds=[0.2, 0.7]).get_config())
    clone.update_state([1, 1, 0], [0.9, 0.2, 0.7])
    np.testing.assert_array_equal(clone.result().numpy(), [1.0, 1.0])

    model = K.Sequential([K.Input((2,)), K.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=[K.metrics.TruePositives(name="tp"),
                                                          K.metrics.FalseNegatives(name="fn")])
    x = np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, -0.2], [2.0, 1.0]], "float32")
    y = np.array([[1.0], [0.0], [1.0], [1.0]], "float32")
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    positive = model.predict(x, verbose=0)[:, 0] > 0.5
    assert logs["tp"] == np.sum(positive & (y[:, 0] == 1)) and logs["fn"] == np.sum(~positive & (y[:, 0] == 1))


def _loss_inputs():
    data = FIX["losses"]
    return {k: np.array(v, "float32") for k, v in data.items() if k != "results"}, data["results"]


def _check(name, loss, y, p, **call):
    expected = _loss_inputs()[1][name]
    np.testing.assert_allclose(np.asarray(loss(y, p, **call)), expected["value"], rtol=2e-6, atol=1e-7)
    assert loss.get_config() == expected["config"]


def test_categorical_hinge_matches_keras():
    x, results = _loss_inputs()
    _check("CategoricalHinge", K.losses.CategoricalHinge(), x["one_hot"], x["soft"])
    _check("CategoricalHinge/raw_scores", K.losses.CategoricalHinge(reduction="none"), x["one_hot"], x["logits"])
    np.testing.assert_allclose(K.losses.categorical_hinge(x["one_hot"], x["logits"]).numpy(),
                               results["categorical_hinge"]["value"], rtol=1e-6)
    # The documented formula, in numpy.
    pos = np.sum(x["one_hot"] * x["logits"], -1)
    neg = np.max((1 - x["one_hot"]) * x["logits"], -1)
    np.testing.assert_allclose(K.losses.categorical_hinge(x["one_hot"], x["logits"]).numpy(),
                               np.maximum(neg - pos + 1, 0), rtol=1e-6)


FOCAL = {"default": {}, "balanced": {"apply_class_balancing": True, "alpha": 0.4}, "gamma": {"gamma": 3.5},
         "smoothing": {"label_smoothing": 0.2, "apply_class_balancing": True}}


@pytest.mark.parametrize("key", list(FOCAL))
def test_binary_focal_crossentropy_matches_keras(key):
    x, results = _loss_inputs()
    kwargs = FOCAL[key]
    _check(f"BinaryFocalCrossentropy/{key}", K.losses.BinaryFocalCrossentropy(**kwargs), x["labels"], x["probs"])
    _check(f"BinaryFocalCrossentropy/{key}/logits", K.losses.BinaryFocalCrossentropy(from_logits=True, **kwargs),
           x["labels"], x["logits"], sample_weight=x["sample_weight"])
    np.testing.assert_allclose(
        K.losses.binary_focal_crossentropy(x["labels"], x["logits"], from_logits=True, **kwargs).numpy(),
        results[f"binary_focal_crossentropy/{key}/logits"]["value"], rtol=2e-6, atol=1e-7)


def test_binary_focal_crossentropy_of_a_sigmoid_output_uses_its_logits():
    # Keras on TF computes the crossentropy term from the logits of a keras sigmoid output (saturated here).
    x, results = _loss_inputs()
    sig = K.activations.sigmoid(tf.constant(x["logits"]))
    np.testing.assert_allclose(K.losses.binary_focal_crossentropy(x["labels"], sig).numpy(),
                               results["binary_focal_crossentropy/sigmoid_output"]["value"], rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("key,kwargs", [("default", {}), ("alpha_gamma", {"alpha": 0.6, "gamma": 1.5}),
                                        ("smoothing", {"label_smoothing": 0.1})])
def test_categorical_focal_crossentropy_matches_keras(key, kwargs):
    x, _ = _loss_inputs()
    _check(f"CategoricalFocalCrossentropy/{key}", K.losses.CategoricalFocalCrossentropy(**kwargs),
           x["one_hot"], x["soft"])
    _check(f"CategoricalFocalCrossentropy/{key}/logits",
           K.losses.CategoricalFocalCrossentropy(from_logits=True, reduction="none", **kwargs),
           x["one_hot"], x["logits"])


def test_focal_losses_are_differentiable():
    from gradcheck import check_gradients
    x, _ = _loss_inputs()
    labels = tf.constant(x["labels"][:2, :3].astype("float64"))
    check_gradients(lambda p: K.losses.binary_focal_crossentropy(labels, p, apply_class_balancing=True),
                    x["probs"][:2, :3].astype("float64"))
    one_hot = tf.constant(x["one_hot"][:2].astype("float64"))
    check_gradients(lambda z: K.losses.categorical_focal_crossentropy(one_hot, z, from_logits=True),
                    x["logits"][:2].astype("float64") / 6)
