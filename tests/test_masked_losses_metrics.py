"""Losses and metrics honour the Keras mask on y_pred as Keras 3 does: numbers written by real Keras 3
(tests/fixtures/keras3_masks/make_fixtures.py, jax backend) for evaluate, eager Loss calls and fit."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.layers.layer import get_keras_mask, set_keras_mask

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_masks")
SCCE = tf.keras.losses.SparseCategoricalCrossentropy


def _load(name):
    return tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras")), \
        np.load(os.path.join(FIXTURES, f"{name}.npz"))


def _evaluate(model, x, y, **kwargs):
    return model.evaluate(x, y, verbose=0, return_dict=True, batch_size=len(x), **kwargs)


@pytest.fixture(scope="module")
def lstm():
    return _load("masked_lstm")


@pytest.mark.parametrize("run_eagerly", [False, True])
@pytest.mark.parametrize("tag", ["plain", "sw", "sw_col"])
def test_compiled_loss_and_metrics_use_the_output_mask(lstm, tag, run_eagerly):
    model, data = lstm
    model.compile("sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  weighted_metrics=["accuracy"], run_eagerly=run_eagerly)
    kwargs = {} if tag == "plain" else {"sample_weight": data[tag]}
    logs = _evaluate(model, data["x"], data["y"], **kwargs)
    np.testing.assert_allclose([logs["loss"], logs["accuracy"], logs["weighted_accuracy"]], data[f"eval_{tag}"],
                               rtol=2e-6)


def test_masked_numbers_differ_from_unmasked_ones(lstm):
    """The fixture discriminates: the unmasked mean of the per-step losses is another number."""
    model, data = lstm
    p = np.clip(model.predict(data["x"], verbose=0), 1e-7, 1 - 1e-7)
    per_step = -np.log(np.take_along_axis(p, data["y"][..., None], -1))[..., 0]
    mask = data["x"] != 0
    assert abs(per_step.mean() - data["eval_plain"][0]) > 1e-4   # 100 times the tolerance of the comparisons
    np.testing.assert_allclose(per_step[mask].mean(), data["eval_plain"][0], rtol=1e-5)


def test_sum_reduction_in_compile(lstm):
    model, data = lstm
    model.compile("sgd", loss=SCCE(reduction="sum"))
    np.testing.assert_allclose(_evaluate(model, data["x"], data["y"])["loss"], data["eval_sum"], rtol=2e-6)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight", "none"])
def test_eager_loss_call_reads_the_mask(lstm, reduction):
    model, data = lstm
    prediction = model(data["x"])
    assert get_keras_mask(prediction) is not None
    np.testing.assert_allclose(prediction.numpy(), data["prediction"], rtol=1e-5, atol=1e-6)
    got = SCCE(reduction=reduction)(data["y"], prediction).numpy()
    np.testing.assert_allclose(got, data[f"eager_{reduction}"], rtol=2e-6, atol=1e-7)


def test_eager_loss_with_weights_and_ignore_class(lstm):
    model, data = lstm
    prediction = model(data["x"])
    np.testing.assert_allclose(SCCE()(data["y"], prediction, sample_weight=data["sw"]).numpy(), data["eager_sw"],
                               rtol=2e-6)
    np.testing.assert_allclose(SCCE(ignore_class=1)(data["y"], prediction).numpy(), data["eager_ignore_class"],
                               rtol=2e-6)
    metric = tf.keras.metrics.SparseCategoricalAccuracy()
    metric.update_state(data["y"], prediction, sample_weight=data["sw"])
    np.testing.assert_allclose(metric.result().numpy(), data["eager_metric_sw"], rtol=2e-6)


def test_fit_with_a_masked_output_trains_as_keras():
    model, data = _load("masked_lstm")
    model.compile(tf.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(data["x"], data["y"], batch_size=3, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], data["fit_loss"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, data[f"fit_weight_{i}"], rtol=1e-4, atol=1e-6)


def test_fit_metrics_are_masked_as_evaluate_metrics_are():
    """Keras's TensorFlow train step computes the metrics on the masked y_pred, as evaluate does. (Keras on
    jax, which wrote the fixtures, loses the mask when y_pred leaves its jitted gradient function, so its fit
    accuracy there, kept in the fixture as fit_accuracy, is the unmasked one.)"""
    model, data = _load("masked_lstm")
    model.compile(tf.keras.optimizers.SGD(0.0), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(data["x"], data["y"], batch_size=6, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["accuracy"], data["eval_plain"][1], rtol=1e-6)
    np.testing.assert_allclose(history.history["loss"], data["eval_plain"][0], rtol=2e-6)


def test_masking_gru_regression_evaluates_and_trains_as_keras():
    model, data = _load("masked_gru")
    model.compile("sgd", loss="mse", metrics=["mae"])
    logs = _evaluate(model, data["x"], data["y"])
    np.testing.assert_allclose([logs["loss"], logs["mae"]], data["eval"], rtol=2e-6)
    model.compile(tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(data["x"], data["y"], batch_size=5, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], data["fit_loss"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, data[f"fit_weight_{i}"], rtol=1e-4, atol=1e-6)


def _masked(values, mask):
    values = tf.constant(values)
    set_keras_mask(values, tf.constant(mask))
    return values


def test_per_sample_weight_weighs_every_step_of_its_sample():
    """A (batch,) weight against a (batch, steps) mask: each sample's steps get its weight. With batch ==
    steps (3 here), broadcasting from the right, as Keras does, would weigh the steps by the wrong samples."""
    y_true = np.array([[0., 1., 1.], [1., 0., 0.], [0., 0., 1.]], "float32")[..., None]
    y_pred = np.array([[.2, .7, .1], [.9, .4, .3], [.5, .6, .8]], "float32")[..., None]
    mask = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1]], "float32")
    weights = np.array([1.0, 2.0, 0.5], "float32")
    errors = ((y_true - y_pred) ** 2)[..., 0]          # MSE reduces the trailing axis of 1
    per_step_weight = mask * weights[:, None]
    loss = tf.keras.losses.MeanSquaredError()(y_true, _masked(y_pred, mask.astype(bool)), sample_weight=weights)
    np.testing.assert_allclose(loss.numpy(), (errors * per_step_weight).sum() / mask.sum(), rtol=1e-6)
    metric = tf.keras.metrics.MeanSquaredError()
    metric.update_state(y_true, _masked(y_pred, mask.astype(bool)), sample_weight=weights)
    np.testing.assert_allclose(metric.result().numpy(), (errors * per_step_weight).sum() / per_step_weight.sum(),
                               rtol=1e-6)


def test_weights_of_shape_batch_steps_1_are_squeezed_to_the_mask():
    y_true = np.array([[1., 2.], [3., 4.]], "float32")[..., None]
    y_pred = _masked(np.array([[1.5, 2.], [0., 4.]], "float32")[..., None], np.array([[True, False], [True, True]]))
    weights = np.array([[2.], [1.], [3.], [1.]], "float32").reshape(2, 2, 1)
    metric = tf.keras.metrics.MeanAbsoluteError()
    metric.update_state(y_true, y_pred, sample_weight=weights)
    # valid entries: errors .5 (weight 2), 3 (weight 3), 0 (weight 1)
    np.testing.assert_allclose(metric.result().numpy(), (0.5 * 2 + 3 * 3 + 0) / 6, rtol=1e-6)
    loss = tf.keras.losses.MeanAbsoluteError()(y_true, y_pred, sample_weight=weights)
    np.testing.assert_allclose(loss.numpy(), (0.5 * 2 + 3 * 3 + 0) / 3, rtol=1e-6)   # over the 3 valid entries


def test_mean_metric_ignores_masks_as_keras_does():
    values = _masked(np.array([[1., 2.], [3., 4.]], "float32"), np.array([[True, False], [False, False]]))
    metric = tf.keras.metrics.Mean()
    metric.update_state(values)
    assert metric.result().numpy() == pytest.approx(2.5)
