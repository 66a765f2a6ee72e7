"""Ftrl, Adafactor and Lamb against real Keras 3 (jax backend) over four steps
(tests/fixtures/keras3/make_optimizer_fixtures.py): values, optimizer variable paths, configs, .keras files."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf

_HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras3")
with open(os.path.join(_HERE, "optimizer_fixtures.json")) as f:
    FIXTURES = json.load(f)


def _ulps(a, b):
    return int(np.max(np.abs(np.asarray(a, np.float32).view(np.int32).astype(np.int64)
                             - np.asarray(b, np.float32).view(np.int32).astype(np.int64))))


# float32 ulps between tapeflow (numpy) and XLA: reductions sum in another order and XLA's pow is
# exp(y * log(x)); Ftrl's w = (clip(z) - z) / q cancels, which magnifies pow's last-bit differences.
_ULP_BUDGET = {"Ftrl": 100, "Adafactor": 2, "Lamb": 2}


@pytest.mark.parametrize("case", FIXTURES["cases"], ids=lambda c: f"{c['class']}-{len(c['kwargs'])}")
def test_matches_keras_steps(case):
    variables = [tf.Variable(np.asarray(w, np.float32), name=f"w{i}") for i, w in enumerate(FIXTURES["initial"])]
    optimizer = getattr(tf.keras.optimizers, case["class"])(**case["kwargs"])
    for grads, expected in zip(FIXTURES["gradients"], case["steps"]):
        optimizer.apply_gradients(zip([tf.constant(np.asarray(g, np.float32)) for g in grads], variables))
        for variable, values in zip(variables, expected):
            np.testing.assert_allclose(variable.numpy(), values, rtol=2e-5, atol=1e-7)
            assert _ulps(variable.numpy(), values) <= _ULP_BUDGET[case["class"]]
    keras_paths = [p.split("/", 1)[1] for p in case["optimizer_variables"]]
    assert [v.path.split("/", 1)[1] for v in optimizer.variables] == keras_paths
    config = optimizer.get_config()
    for key, value in case["config"].items():
        if key != "name":
            assert config[key] == pytest.approx(value) if isinstance(value, float) else config[key] == value, key
    clone = type(optimizer).from_config(config)
    assert clone.get_config() == config


def test_lamb_first_step_closed_form():
    # step 1: m_hat = g, v_hat = g^2, u = g / (|g| + eps) ~ sign(g), ratio = ||w|| / ||u||
    w0, g = np.array([3.0, -4.0], np.float32), np.array([0.5, 2.0], np.float32)
    w = tf.Variable(w0)
    tf.keras.optimizers.Lamb(learning_rate=0.1, epsilon=0.0).apply_gradients([(tf.constant(g), w)])
    np.testing.assert_allclose(w.numpy(), w0 - 0.1 * (5.0 / np.sqrt(2.0)) * np.sign(g), rtol=1e-6)


def test_ftrl_l1_zeroes_small_weights_and_argument_errors():
    w = tf.Variable(np.array([1.0, -1.0], np.float32))
    tf.keras.optimizers.Ftrl(learning_rate=0.1, l1_regularization_strength=10.0).apply_gradients(
        [(tf.constant([0.1, -0.2]), w)])
    np.testing.assert_array_equal(w.numpy(), [0.0, 0.0])   # |z| <= l1: the proximal step lands on 0
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.keras.optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.keras.optimizers.Ftrl(initial_accumulator_value=-1.0)


@pytest.mark.parametrize("name", ["ftrl", "adafactor", "lamb"])
def test_fit_save_and_resume(name, tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.random((16, 3)).astype("float32"), rng.random((16, 2)).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(name, "mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert type(loaded.optimizer) is type(model.optimizer)
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    model.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    loaded.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    for a, b in zip(loaded.weights, model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
