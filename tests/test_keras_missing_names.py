"""Names keras.io examples use that tapeflow lacked (QA F1): confusion-count metrics, categorical hinge and focal
losses, UpSampling2D's resize interpolations, the image utils (img_to_array, array_to_img, load_img, save_img),
keras.preprocessing and plot_model's missing-pydot error. Expected numbers come from real Keras 3.15 on TensorFlow 2.21
(tests/fixtures/keras3_missing_names/make_fixtures.py), and the counts are also recomputed here from their
definition."""
import json
import os
import sys

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


CONSTRAINED = ("SensitivityAtSpecificity", "SpecificityAtSensitivity", "PrecisionAtRecall", "RecallAtPrecision")


@pytest.mark.parametrize("cls", CONSTRAINED)
@pytest.mark.parametrize("num_thresholds", [1, 2, 5, 200])
@pytest.mark.parametrize("class_id", [None, 1])
def test_rate_at_rate_metrics_match_keras(cls, num_thresholds, class_id):
    data, fix = FIX["confusion"], FIX["constrained"]
    expected = fix["metrics"][f"{cls}/{num_thresholds}/{class_id}"]
    metric = getattr(K.metrics, cls)(expected["target"], num_thresholds=num_thresholds, class_id=class_id)
    if class_id is None:
        y_true, y_pred, weight = (np.array(data[k], "float32") for k in ("y_true", "y_pred", "weight"))
        metric.update_state(y_true[0], y_pred[0])
        metric.update_state(y_true[1:], y_pred[1:], sample_weight=weight[1:])
    else:
        metric.update_state(np.array(fix["multi_true"], "float32"), np.array(fix["multi_pred"], "float32"))
    for variable, counts in zip(metric.variables, expected["counts"]):
        np.testing.assert_allclose(variable.numpy(), counts, rtol=1e-6)
    np.testing.assert_allclose(float(metric.result()), expected["result"], rtol=1e-6)
    config = {k: v for k, v in metric.get_config().items() if k != "name"}
    assert config == {k: v for k, v in expected["config"].items() if k != "name"}


@pytest.mark.parametrize("cls", CONSTRAINED)
def test_rate_at_rate_metrics_unreachable_target_and_bad_arguments(cls):
    data = FIX["confusion"]
    metric = getattr(K.metrics, cls)(1.0, num_thresholds=5)
    metric.update_state(np.array(data["y_true"], "float32")[1:], np.array(data["y_pred"], "float32")[1:])
    np.testing.assert_allclose(float(metric.result()), FIX["constrained"]["metrics"][f"{cls}/target_1"]["result"],
                               rtol=1e-6)
    with pytest.raises(ValueError, match=r"must be in the range \[0, 1\]"):
        getattr(K.metrics, cls)(1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        getattr(K.metrics, cls)(0.5, num_thresholds=0)


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


UPSAMPLING = [(interpolation, size, data_format) for interpolation in ("bilinear", "bicubic", "area", "nearest")
              for size in ((2, 2), (3, 2)) for data_format in ("channels_last", "channels_first")]


@pytest.mark.parametrize("interpolation,size,data_format", UPSAMPLING)
def test_upsampling2d_interpolations_match_keras(interpolation, size, data_format):
    data = FIX["upsampling"]
    images = np.array(data["images"], "float32")
    layer = K.layers.UpSampling2D(size, data_format=data_format, interpolation=interpolation)
    expected = np.array(data["results"][f"{interpolation}/{size[0]}x{size[1]}/{data_format}"], "float32")
    out = layer(images)
    assert tuple(out.shape) == expected.shape == layer.compute_output_shape(images.shape)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_upsampling2d_bilinear_formula_gradient_and_errors():
    # Half-pixel centres in numpy: output row i samples input row (i + 0.5) / 2 - 0.5, clamped at the edges.
    x = np.array([[0.0, 4.0, 8.0]], "float32").reshape(1, 1, 3, 1)
    out = K.layers.UpSampling2D((1, 2), interpolation="bilinear")(x).numpy().ravel()
    src = np.clip((np.arange(6) + 0.5) / 2 - 0.5, 0, 2)
    np.testing.assert_allclose(out, np.interp(src, [0, 1, 2], [0.0, 4.0, 8.0]), rtol=1e-6)
    from gradcheck import check_gradients
    check_gradients(lambda t: K.layers.UpSampling2D((2, 3), interpolation="bilinear")(t),
                    np.random.default_rng(0).standard_normal((1, 2, 3, 2)).astype("float32"), atol=2e-3, rtol=2e-3,
                    eps=1e-2)
    with pytest.raises(ValueError, match="interpolation=gaussian"):
        K.layers.UpSampling2D(interpolation="gaussian")
    with pytest.raises(NotImplementedError, match="lanczos3"):
        K.layers.UpSampling2D(interpolation="lanczos3")
    layer = K.layers.UpSampling2D(interpolation="bicubic")
    assert K.layers.UpSampling2D.from_config(layer.get_config()).interpolation == "bicubic"


IMAGE_DIR = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_missing_names")


@pytest.mark.parametrize("key", [k for k in FIX["image_utils"] if k.startswith("array_to_img/")])
def test_array_to_img_and_back_match_keras(key):
    case = FIX["image_utils"][key]
    img = K.utils.array_to_img(np.array(case["x"]), **case["kwargs"])
    assert img.mode == case["mode"] and list(img.size) == case["size"]
    np.testing.assert_array_equal(np.asarray(img), case["pixels"])
    back = K.utils.img_to_array(img)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, case["img_to_array"])
    np.testing.assert_array_equal(K.utils.img_to_array(img, data_format="channels_first"), case["img_to_array_cf"])


@pytest.mark.parametrize("key", [k for k in FIX["image_utils"] if k.startswith("load_img/")])
def test_load_img_matches_keras(key):
    case = FIX["image_utils"][key]
    kwargs = dict(case["kwargs"])
    if "target_size" in kwargs:
        kwargs["target_size"] = tuple(kwargs["target_size"])
    img = K.utils.load_img(os.path.join(IMAGE_DIR, "rgb_7x10.png"), **kwargs)
    assert img.mode == case["mode"]
    np.testing.assert_array_equal(K.utils.img_to_array(img), case["array"])


def test_image_utils_round_trip_errors_and_aliases(tmp_path):
    from tapeflow.keras.preprocessing.image import array_to_img, img_to_array, load_img, save_img
    x = np.random.default_rng(1).integers(0, 256, (5, 4, 3)).astype("float32")
    save_img(tmp_path / "a.png", x, scale=False)
    np.testing.assert_array_equal(img_to_array(load_img(tmp_path / "a.png")), x)
    with open(tmp_path / "a.png", "rb") as f:
        np.testing.assert_array_equal(img_to_array(load_img(f)), x)
    assert array_to_img is K.utils.array_to_img and load_img is K.utils.load_img
    with pytest.raises(ValueError, match="rank 3"):
        array_to_img(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="Unsupported channel number: 2"):
        array_to_img(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="color_mode"):
        load_img(tmp_path / "a.png", color_mode="cmyk")
    with pytest.raises(ValueError, match="Invalid interpolation method"):
        load_img(tmp_path / "a.png", target_size=(2, 2), interpolation="cubic")
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(OSError, match="bad.png"):
        load_img(tmp_path / "bad.png")


def test_image_utils_without_pillow_name_the_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"use of `load_img` requires PIL"):
        K.utils.load_img("whatever.png")
    with pytest.raises(ImportError, match=r"use of `array_to_img` requires PIL"):
        K.utils.array_to_img(np.zeros((2, 2, 3)))


def test_plot_model_without_pydot_raises_keras_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydot", None)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2)])
    # Keras 3.15's message, verbatim.
    with pytest.raises(ImportError, match=r"^You must install pydot \(`pip install pydot`\) for `plot_model` to work\.$"):
        K.utils.plot_model(model)
    from tapeflow.keras.utils import model_to_dot, plot_model  # noqa: F401


def test_preprocessing_namespace_as_keras_3():
    from tapeflow.keras.preprocessing.sequence import pad_sequences
    np.testing.assert_array_equal(pad_sequences([[1, 2], [3]]), [[1, 2], [0, 3]])
    assert pad_sequences is K.utils.pad_sequences
    assert K.preprocessing.timeseries_dataset_from_array is K.utils.timeseries_dataset_from_array
    assert K.preprocessing.image_dataset_from_directory is K.utils.image_dataset_from_directory
    assert K.preprocessing.text_dataset_from_directory is K.utils.text_dataset_from_directory
