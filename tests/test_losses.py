"""Losses: the values the spec verified against Keras 3.15, reductions, sample weights,
the logits shortcut after softmax/sigmoid, and gradients."""
import json

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
L = K.losses


def close(value, expected, tol=1e-6):
    return np.allclose(np.asarray(value.numpy() if hasattr(value, "numpy") else value), expected, atol=tol)


def test_mean_squared_error_reductions_and_sample_weight():
    y, p = [[0.0, 1.0], [2.0, 3.0]], [[0.5, 1.0], [1.0, 5.0]]
    assert close(L.MeanSquaredError()(y, p), 1.3125)
    assert close(L.MeanSquaredError(reduction="none")(y, p), [0.125, 2.5])
    assert close(L.MeanSquaredError(reduction=None)(y, p), [0.125, 2.5])
    assert close(L.MeanSquaredError(reduction="sum")(y, p), 2.625)
    assert close(L.MeanSquaredError()(y, p, sample_weight=[1, 0.5]), 0.6875)
    assert close(L.MeanSquaredError(reduction="mean_with_sample_weight")(y, p, sample_weight=[1, 0.5]), 0.91666669)
    assert close(L.mean_squared_error(y, p), [0.125, 2.5])
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        L.MeanSquaredError(reduction="average")


def test_binary_crossentropy_values():
    assert close(L.BinaryCrossentropy()([0.0, 1.0, 1.0], [0.1, 0.8, 1.0]), 0.10950140)
    assert close(L.BinaryCrossentropy(from_logits=True)([0.0, 1.0, 1.0], [-2.0, 1.5, 30.0]), 0.10944710)
    assert close(L.BinaryCrossentropy(label_smoothing=0.1)([0.0, 1.0, 1.0], [0.1, 0.8, 1.0]), 0.43493319, 1e-5)


def test_categorical_crossentropy_values():
    y = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    p = [[0.05, 0.9, 0.05], [0.1, 0.8, 0.1]]
    logits = [[1.0, 3.0, 0.0], [2.0, 1.0, 0.5]]
    assert close(L.CategoricalCrossentropy()(y, p), 1.20397282)
    assert close(L.CategoricalCrossentropy(from_logits=True)(y, logits), 1.06710744)
    assert close(L.CategoricalCrossentropy(label_smoothing=0.1)(y, p), 1.26566124, 1e-5)


def test_sparse_categorical_crossentropy_values():
    p = [[0.05, 0.9, 0.05], [0.1, 0.8, 0.1]]
    logits = [[1.0, 3.0, 0.0], [2.0, 1.0, 0.5]]
    assert close(L.SparseCategoricalCrossentropy()([1, 2], p), 1.20397282)
    assert close(L.SparseCategoricalCrossentropy(from_logits=True)([1, 2], logits), 1.06710744)
    assert close(L.SparseCategoricalCrossentropy()([[1], [2]], p), 1.20397282)
    assert close(L.SparseCategoricalCrossentropy()(np.array([1.0, 2.0], np.float32), p), 1.20397282)
    with pytest.raises(ValueError, match=r"Received a label value of 3 which is outside the valid range of \[0, 3\)"):
        L.SparseCategoricalCrossentropy()([1, 3], p)


def test_sparse_ignore_class_masks_entries():
    logits = np.array([[1.0, 3.0, 0.0], [2.0, 1.0, 0.5], [0.0, 0.0, 4.0]], np.float32)
    full = L.SparseCategoricalCrossentropy(from_logits=True, reduction="none")([1, 2, 2], logits).numpy()
    masked = L.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)([1, -1, 2], logits)
    assert np.isclose(float(masked), (full[0] + full[2]) / 2, atol=1e-5)


def test_huber_and_mae_against_numpy():
    y = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    p = np.array([[0.5, 3.0], [1.0, 5.5]], np.float32)
    err = np.abs(p - y)
    huber = np.where(err <= 1.0, 0.5 * err ** 2, err - 0.5).mean(-1).mean()
    assert close(L.Huber()(y, p), huber)
    huber2 = np.where(err <= 2.0, 0.5 * err ** 2, 2 * err - 2.0).mean(-1).mean()
    assert close(L.Huber(delta=2.0)(y, p), huber2)
    assert close(L.MeanAbsoluteError()(y, p), err.mean())
    assert L.Huber().name == "huber_loss" and L.MeanAbsoluteError().name == "mean_absolute_error"


def test_other_regression_and_divergence_losses():
    y = np.array([[0.2, 0.8], [0.6, 0.4]], np.float32)
    p = np.array([[0.3, 0.7], [0.5, 0.5]], np.float32)
    assert close(L.KLDivergence()(y, p), np.mean(np.sum(y * np.log(y / p), -1)))
    assert close(L.Poisson()(y, p), np.mean(np.mean(p - y * np.log(p + 1e-7), -1)))
    assert close(L.LogCosh()(y, p), np.mean(np.mean(np.log(np.cosh(p - y)), -1)))
    assert close(L.MeanAbsolutePercentageError()(y, p), np.mean(100 * np.abs((y - p) / y)), 1e-4)
    assert close(L.Hinge()([[1.0, 0.0]], [[0.3, -0.4]]), np.mean(np.maximum(1 - np.array([1, -1]) * [0.3, -0.4], 0)))


def test_crossentropy_after_softmax_uses_the_logits():
    """Like Keras on TensorFlow: CE of a softmax output is computed from its logits, exactly."""
    logits = tf.constant([[30.0, -30.0, 0.0], [1.0, 2.0, 3.0]])
    probs = K.activations.softmax(logits)
    exact = L.CategoricalCrossentropy(from_logits=True)([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], logits)
    via_probs = L.CategoricalCrossentropy()([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], probs)
    assert float(exact) > 25 and np.isclose(float(via_probs), float(exact), rtol=1e-6)  # clipping would give ~8.1
    assert np.isclose(float(L.SparseCategoricalCrossentropy()([1, 0], probs)), float(exact), rtol=1e-6)
    # A plain probability tensor (not a softmax output) is clipped at 1e-7 as in Keras.
    clipped = L.CategoricalCrossentropy()([[0.0, 1.0, 0.0]], tf.constant([[1.0, 0.0, 0.0]]))
    assert np.isclose(float(clipped), -np.log(1e-7), rtol=1e-5)
    sig_logits = tf.constant([[40.0], [-3.0]])
    assert np.isclose(float(L.BinaryCrossentropy()([[0.0], [1.0]], K.activations.sigmoid(sig_logits))),
                      float(L.BinaryCrossentropy(from_logits=True)([[0.0], [1.0]], sig_logits)), rtol=1e-6)


def test_loss_gradients_match_the_closed_forms():
    logits = tf.constant(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    labels = np.array([0, 2, 1, 2])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = L.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    probs = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(1, keepdims=True)
    assert np.allclose(tape.gradient(loss, logits).numpy(), (probs - np.eye(3)[labels]) / 4, atol=1e-6)
    pred = tf.constant([[0.5, 1.0], [1.0, 5.0]])
    with tf.GradientTape() as tape:
        tape.watch(pred)
        loss = L.MeanSquaredError()([[0.0, 1.0], [2.0, 3.0]], pred)
    assert np.allclose(tape.gradient(loss, pred).numpy(), 2 * (pred.numpy() - [[0, 1], [2, 3]]) / 4)


def test_get_serialize_and_deserialize():
    assert L.get("mse") is L.mean_squared_error
    assert isinstance(L.get("MeanSquaredError"), L.MeanSquaredError)
    loss = L.SparseCategoricalCrossentropy(from_logits=True, name="scce")
    config = json.loads(json.dumps(L.serialize(loss)))
    assert config["module"] == "keras.losses" and config["class_name"] == "SparseCategoricalCrossentropy"
    clone = L.deserialize(config)
    assert isinstance(clone, L.SparseCategoricalCrossentropy) and clone.name == "scce"
    assert clone.get_config() == loss.get_config()
    with pytest.raises(ValueError, match="Could not interpret loss identifier: msee"):
        L.get("msee")


def test_to_categorical_feeds_categorical_crossentropy():
    labels = np.array([1, 2])
    one_hot = K.utils.to_categorical(labels, 3)
    assert one_hot.dtype == np.float64 and np.array_equal(one_hot, [[0, 1, 0], [0, 0, 1]])
    p = [[0.05, 0.9, 0.05], [0.1, 0.8, 0.1]]
    assert np.isclose(float(L.CategoricalCrossentropy()(one_hot, p)),
                      float(L.SparseCategoricalCrossentropy()(labels, p)), rtol=1e-6)


def test_a_loss_of_a_variable_is_differentiable_in_it():
    # y_pred given as a tf.Variable (not a Tensor) used to be read as a constant: a None gradient.
    v = tf.Variable([[0.2, 0.8]])
    y = tf.constant([[0.0, 1.0]])
    cases = [(tf.keras.losses.MeanSquaredError(), [[0.2, -0.2]]),                 # (v - y) * 2 / 2
             (tf.keras.losses.CategoricalCrossentropy(), [[1.0, -0.25]]),         # 1/sum(v) - y/v
             (tf.keras.losses.BinaryCrossentropy(), [[0.625, -0.625]])]           # mean of 1/(1-p), -1/p
    for loss, expected in cases:
        with tf.GradientTape() as tape:
            value = loss(y, v)
        np.testing.assert_allclose(tape.gradient(value, v).numpy(), expected, rtol=1e-5)
