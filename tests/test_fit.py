"""compile / fit / evaluate / predict: the golden Keras trace, log keys and return
conventions, validation_split, train_step overrides, progress output, and bad input
that must fail before any weight changes."""
import io
import os
import re
import sys

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def fresh_session():
    K.backend.clear_session()
    yield


def golden_model(trace):
    model = K.Sequential([K.Input(shape=(4,)), K.layers.Dense(5, activation="relu"), K.layers.BatchNormalization(),
                          K.layers.Dense(3, activation="softmax")], name="seq")
    model.set_weights([trace["W1"], trace["b1"], np.ones(5, np.float32), np.zeros(5, np.float32),
                       np.zeros(5, np.float32), np.ones(5, np.float32), trace["W2"], trace["b2"]])
    return model


def test_fit_reproduces_the_keras_golden_trace():
    trace = np.load(os.path.join(HERE, "fixtures", "golden_fit_trace.npz"))
    model = golden_model(trace)
    model.compile(optimizer=K.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(trace["X"], trace["Y"], batch_size=4, epochs=3, shuffle=False, verbose=0)
    assert list(history.history) == ["accuracy", "loss"]
    assert np.allclose(history.history["loss"], trace["keras_loss"], atol=1e-4)
    assert np.allclose(history.history["accuracy"], trace["keras_acc"], atol=1e-6)
    finals = ["final_dense_kernel", "final_dense_bias", "final_bn_gamma", "final_bn_beta", "final_bn_moving_mean",
              "final_bn_moving_variance", "final_dense_1_kernel", "final_dense_1_bias"]
    for name, value in zip(finals, model.get_weights()):
        assert np.allclose(value, trace[name], atol=1e-4), name
    assert int(model.optimizer.iterations.numpy()) == 9
    assert history.epoch == [0, 1, 2] and history.params == {"verbose": 0, "epochs": 3, "steps": 3}
    assert model.history is history


def regression_data(n=40, features=3):
    x = rng.standard_normal((n, features)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def test_history_keys_are_sorted_then_val_keys():
    x, y = regression_data()
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae", K.metrics.RootMeanSquaredError()])
    history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=0)
    assert list(history.history) == ["loss", "mae", "root_mean_squared_error", "val_loss", "val_mae",
                                     "val_root_mean_squared_error"]
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    clf = K.Sequential([K.Input((3,)), K.layers.Dense(2, activation="softmax")])
    clf.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    labels = (x[:, 0] > 0).astype(np.int64)
    history = clf.fit(x, labels, epochs=2, validation_data=(x, labels), verbose=0,
                      callbacks=[K.callbacks.LearningRateScheduler(lambda epoch, lr: lr)])
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss", "learning_rate"]


def test_validation_split_uses_the_last_fraction_before_shuffling():
    x, y = regression_data(n=10)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(learning_rate=0.0), "mse")
    history = model.fit(x, y, epochs=1, batch_size=3, validation_split=0.35, shuffle=True, verbose=0)
    split = int(np.floor(10 * (1 - 0.35)))  # 6 training samples, 4 for validation
    assert history.params["steps"] == 2
    pred = model.predict(x, verbose=0)
    assert np.isclose(history.history["loss"][0], np.mean((pred[:split] - y[:split]) ** 2), rtol=1e-5)
    assert np.isclose(history.history["val_loss"][0], np.mean((pred[split:] - y[split:]) ** 2), rtol=1e-5)
    with pytest.raises(ValueError, match="not sufficient to split"):
        model.fit(x[:1], y[:1], validation_split=0.5, verbose=0)


def test_epoch_loss_is_the_batch_size_weighted_mean():
    x, y = regression_data(n=10)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(learning_rate=0.0), "mse")
    seen = []
    history = model.fit(x, y, batch_size=4, shuffle=False, verbose=0,
                        callbacks=[K.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(logs))])
    errors = (model.predict(x, verbose=0) - y) ** 2
    batch_losses = [errors[0:4].mean(), errors[4:8].mean(), errors[8:10].mean()]
    assert np.isclose(history.history["loss"][0], errors.mean(), rtol=1e-5)
    assert np.isclose(history.history["loss"][0], np.average(batch_losses, weights=[4, 4, 2]), rtol=1e-5)
    # Batch logs are running means: after batch 2 the mean over the first 8 samples.
    assert np.isclose(seen[1]["loss"], errors[:8].mean(), rtol=1e-5)


def test_shuffle_false_keeps_the_order_and_shuffle_true_follows_the_global_seed():
    x = np.arange(12, dtype=np.float32).reshape(12, 1)
    y = np.zeros((12, 1), np.float32)
    order = []

    class Spy(K.Model):
        def train_step(self, data):
            order.append(data[0].numpy().ravel().tolist())
            return {}
    inp = K.Input((1,))
    model = Spy(inp, K.layers.Dense(1)(inp))
    model.compile("sgd", "mse", run_eagerly=True)   # the step reads batches with .numpy(): eager, as in Keras
    model.fit(x, y, batch_size=5, shuffle=False, verbose=0)
    assert order == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
    runs = []
    for _ in range(2):
        order.clear()
        tf.random.set_seed(3)
        model.fit(x, y, batch_size=12, epochs=2, shuffle=True, verbose=0)
        runs.append([list(o) for o in order])
    # Keras 3.15 on TensorFlow shuffles with the same seeds every epoch (tests/test_keras_seeding.py)
    assert runs[0] == runs[1] and runs[0][0] == runs[0][1]
    assert sorted(runs[0][0]) == list(range(12)) and runs[0][0] != list(range(12))


def test_return_conventions_of_evaluate_and_the_batch_methods():
    x, y = regression_data(n=12)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile("sgd", "mse")
    loss = model.evaluate(x, y, verbose=0)
    assert isinstance(loss, float)
    assert np.isclose(loss, np.mean((model.predict(x, verbose=0) - y) ** 2), rtol=1e-5)
    assert isinstance(model.test_on_batch(x, y), float)
    assert isinstance(model.train_on_batch(x, y), float)
    model.compile("sgd", "mse", metrics=["mae"])
    result = model.evaluate(x, y, verbose=0)
    assert isinstance(result, list) and len(result) == 2
    pred = model.predict(x, verbose=0)
    assert np.allclose(result, [np.mean((pred - y) ** 2), np.mean(np.abs(pred - y))], rtol=1e-5)
    as_dict = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(as_dict) == ["loss", "mae"] and np.isclose(as_dict["mae"], result[1])
    assert model.train_on_batch(x, y, return_dict=True).keys() == {"loss", "mae"}
    assert model.metrics_names == ["loss", "compile_metrics"]


def test_predict_concatenates_batches_and_matches_call():
    x, _ = regression_data(n=37)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2)])
    out = model.predict(x, batch_size=8, verbose=0)
    assert isinstance(out, np.ndarray) and out.shape == (37, 2)
    assert np.allclose(out, model(x).numpy(), atol=1e-6)
    assert np.allclose(model.predict_on_batch(x), out, atol=1e-6)


def test_sample_weight_and_class_weight():
    x, y = regression_data(n=8)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(0.0), "mse")
    weights = np.array([1, 0, 2, 0, 1, 1, 0, 3], np.float32)
    errors = ((model.predict(x, verbose=0) - y) ** 2).ravel()
    loss = model.test_on_batch(x, y, sample_weight=weights)
    assert np.isclose(loss, np.sum(errors * weights) / 8, rtol=1e-5)  # sum_over_batch_size
    clf = K.Sequential([K.Input((3,)), K.layers.Dense(2, activation="softmax")])
    clf.compile(K.optimizers.SGD(0.0), "sparse_categorical_crossentropy")
    labels = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    probs = clf.predict(x, verbose=0)
    per_sample = -np.log(probs[np.arange(8), labels])
    history = clf.fit(x, labels, batch_size=8, class_weight={0: 1.0, 1: 3.0}, verbose=0)
    assert np.isclose(history.history["loss"][0], np.mean(per_sample * np.where(labels == 1, 3.0, 1.0)), rtol=1e-5)


def test_regularization_losses_are_added_to_the_training_loss():
    x, y = regression_data(n=8)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_regularizer=K.regularizers.L2(0.5))])
    model.compile(K.optimizers.SGD(0.0), "mse")
    history = model.fit(x, y, batch_size=8, verbose=0)
    mse = np.mean((model.predict(x, verbose=0) - y) ** 2)
    assert np.isclose(history.history["loss"][0], mse + 0.5 * np.sum(model.layers[0].kernel.numpy() ** 2),
                      rtol=1e-5)


def test_multi_output_model_sums_the_losses():
    inp = K.Input((3,))
    h = K.layers.Dense(4, activation="relu")(inp)
    model = K.Model(inp, [K.layers.Dense(1, name="reg")(h), K.layers.Dense(2, activation="softmax", name="cls")(h)])
    model.compile(K.optimizers.SGD(0.0), loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                  loss_weights={"reg": 2.0, "cls": 1.0}, metrics={"cls": ["accuracy"]})
    x, y = regression_data(n=10)
    labels = (x[:, 0] > 0).astype(np.int64)
    logs = model.evaluate(x, [y, labels], verbose=0, return_dict=True)
    reg, probs = model.predict(x, verbose=0)
    mse = np.mean((reg - y) ** 2)
    ce = np.mean(-np.log(probs[np.arange(10), labels]))
    assert np.isclose(logs["reg_loss"], mse, rtol=1e-5) and np.isclose(logs["cls_loss"], ce, rtol=1e-5)
    assert np.isclose(logs["loss"], 2 * mse + ce, rtol=1e-5)
    assert np.isclose(logs["cls_accuracy"], np.mean(probs.argmax(1) == labels))


def test_train_step_override_as_in_the_keras_guide():
    class CustomModel(K.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply_gradients(zip(gradients, trainable_vars))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}
    x, y = regression_data(n=64)
    inputs = K.Input(shape=(3,))
    model = CustomModel(inputs, K.layers.Dense(1)(inputs))
    model.compile(optimizer=K.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=20, verbose=0)
    assert list(history.history) == ["loss", "mae"]
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.5


def test_train_step_override_with_own_metrics_and_logs():
    loss_tracker = K.metrics.Mean(name="loss")

    class Own(K.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = tf.reduce_mean(tf.square(y_pred - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            loss_tracker.update_state(loss)
            return {"loss": loss_tracker.result(), "steps": self.optimizer.iterations}

        @property
        def metrics(self):
            return [loss_tracker]
    inputs = K.Input((3,))
    model = Own(inputs, K.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd")  # no loss: the step computes its own
    x, y = regression_data(n=20)
    history = model.fit(x, y, batch_size=10, epochs=2, verbose=0)
    assert history.history["steps"] == [2.0, 4.0]
    assert history.history["loss"][1] < history.history["loss"][0]


# ------------------------------------------------------------ progress ---
LINE = re.compile(r"^3/3 ━{20} \d+s \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}$")


def small_classifier():
    model = K.Sequential([K.Input((4,)), K.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, rng.standard_normal((10, 4)).astype(np.float32), rng.integers(0, 3, 10)


def test_verbose_1_without_a_terminal_prints_one_clean_line_per_epoch(capsys):
    model, x, y = small_classifier()
    model.fit(x, y, batch_size=4, epochs=2, verbose=1)
    out = capsys.readouterr().out
    lines = out.rstrip("\n").split("\n")
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    assert LINE.match(lines[1]) and LINE.match(lines[3]), lines
    assert not any(c in out for c in "\x1b\r\b")
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=1)
    (line,) = capsys.readouterr().out.rstrip("\n").split("\n")  # one epoch: no "Epoch 1/1" line
    assert line.endswith(f"accuracy: {history.history['accuracy'][0]:.4f} - loss: {history.history['loss'][0]:.4f}")


def test_verbose_2_and_verbose_0(capsys):
    model, x, y = small_classifier()
    model.fit(x, y, batch_size=4, epochs=2, verbose=2, validation_data=(x, y))
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert lines[0] == "Epoch 1/2"
    assert re.match(r"^3/3 - \d+s - \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4} - "
                    r"val_accuracy: \d\.\d{4} - val_loss: \d\.\d{4}$", lines[1]), lines[1]
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    assert capsys.readouterr().out == ""


def test_evaluate_and_predict_progress_lines(capsys):
    model, x, y = small_classifier()
    logs = model.evaluate(x, y, batch_size=4, verbose=1, return_dict=True)
    line = capsys.readouterr().out.rstrip("\n")
    assert re.match(r"^3/3 ━{20} \d+s \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}$", line)
    assert line.endswith(f"loss: {logs['loss']:.4f}")
    model.predict(x, verbose=1)
    assert re.match(r"^1/1 ━{20} \d+s \d+(us|ms|s)/step$", capsys.readouterr().out.rstrip("\n"))


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_verbose_1_on_a_terminal_redraws_a_colored_bar(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    model, x, y = small_classifier()
    history = model.fit(x, y, batch_size=1, epochs=1, verbose=1)
    out = terminal.getvalue()
    assert "\r" in out and "\x1b[32m" in out and "\x1b[1m" in out
    final = re.sub(r"\x1b\[[0-9;]*m", "", out.rstrip("\n").split("\r")[-1]).rstrip()
    assert re.match(r"^10/10 ━{20} \d+s \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}$", final), final
    assert final.endswith(f"loss: {history.history['loss'][0]:.4f}")


def test_progbar_formats():
    from tapeflow.layers.utils.progbar import Progbar, format_eta, format_time_per_unit, format_value
    assert format_value(0.52) == "0.5200" and format_value(0.0005) == "5.0000e-04"
    assert format_time_per_unit(0.009) == "9ms/step" and format_time_per_unit(2.4) == "2s/step"
    assert format_time_per_unit(4e-5) == "40us/step"
    assert format_eta(17) == "17s" and format_eta(75) == "1:15" and format_eta(3700) == "1:01:40"
    stream = io.StringIO()
    bar = Progbar(4, stream=stream)
    for step, value in enumerate([1.0, 0.5, 0.25, 0.125], start=1):
        bar.update(step, [("loss", value)], finalize=False)
    assert stream.getvalue() == ""  # nothing while running when not on a terminal
    bar.update(4, [("loss", 0.3)], finalize=True)
    assert stream.getvalue().endswith(" - loss: 0.3000\n")  # the final line shows the exact epoch value


# ------------------------------------------------------------ bad input ---
def weights_of(model):
    return [w.copy() for w in model.get_weights()]


def assert_unchanged(before, model):
    for a, b in zip(before, model.get_weights()):
        assert np.array_equal(a, b)


def bn_classifier():
    model = K.Sequential([K.Input((4,)), K.layers.Dense(5, activation="relu"), K.layers.BatchNormalization(),
                          K.layers.Dense(3, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_wrong_input_shape_fails_before_any_weight_changes():
    model = bn_classifier()
    before = weights_of(model)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4, but received input with "
                                         r"shape \(None, 5\)"):
        model.fit(np.ones((8, 5), np.float32), np.zeros(8, np.int64), verbose=0)
    assert_unchanged(before, model)


def test_mismatched_x_and_y_lengths_fail_before_any_weight_changes():
    model = bn_classifier()
    before = weights_of(model)
    with pytest.raises(ValueError, match="Data cardinality is ambiguous. Make sure all arrays contain the same "
                                         "number of samples.'x' sizes: 10\n'y' sizes: 9"):
        model.fit(np.ones((10, 4), np.float32), np.zeros(9, np.int64), verbose=0)
    assert_unchanged(before, model)


def test_labels_out_of_range_fail_before_any_weight_changes():
    model = bn_classifier()
    before = weights_of(model)
    labels = np.array([0, 1, 2, 7, 1, 0, 2, 1])
    with pytest.raises(ValueError, match=r"Received a label value of 7 which is outside the valid range of \[0, 3\)"):
        model.fit(rng.standard_normal((8, 4)).astype(np.float32), labels, batch_size=4, verbose=0)
    assert_unchanged(before, model)  # includes the BatchNormalization moving statistics
    assert int(model.optimizer.iterations.numpy()) == 0
    with pytest.raises(ValueError, match="Received a label value of -1"):
        model.evaluate(np.ones((2, 4), np.float32), np.array([0, -1]), verbose=0)


def test_one_hot_labels_with_a_sparse_loss_and_vice_versa_are_clear_errors():
    model = bn_classifier()
    before = weights_of(model)
    with pytest.raises(ValueError, match="same shape up until the last dimension"):
        model.fit(np.ones((4, 4), np.float32), np.eye(3, dtype=np.float32)[[0, 1, 2, 0]], verbose=0)
    model.compile("adam", "categorical_crossentropy")
    with pytest.raises(ValueError, match="use loss='sparse_categorical_crossentropy'"):
        model.fit(np.ones((4, 4), np.float32), np.array([0, 1, 2, 0]), verbose=0)
    assert_unchanged(before, model)


def test_unknown_strings_in_compile_are_rejected_at_compile_time():
    model = bn_classifier()
    with pytest.raises(ValueError, match="Could not interpret loss identifier: sparse_crossentropy"):
        model.compile("adam", "sparse_crossentropy")
    with pytest.raises(ValueError, match="adamm"):
        model.compile("adamm", "mse")
    with pytest.raises(ValueError, match="Could not interpret metric identifier: acuracy"):
        model.compile("adam", "mse", metrics=["acuracy"])
        model.fit(np.ones((2, 4), np.float32), np.zeros((2, 3), np.float32), verbose=0)
    with pytest.raises(ValueError, match="Expected `metrics` argument to be a list, tuple, or dict"):
        model.compile("adam", "mse", metrics="accuracy")


def test_fit_before_compile_is_a_clear_error():
    model = K.Sequential([K.Input((2,)), K.layers.Dense(1)])
    with pytest.raises(RuntimeError, match="You must call `compile\\(\\)` before using the model"):
        model.fit(np.ones((2, 2)), np.ones((2, 1)), verbose=0)


def test_generator_input_and_steps_per_epoch():
    x, y = regression_data(n=20)

    def batches():
        while True:
            for i in range(0, 20, 5):
                yield x[i:i + 5], y[i:i + 5]
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(0.0), "mse")
    history = model.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
    assert history.params["steps"] == 4
    assert np.isclose(history.history["loss"][0], np.mean((model.predict(x, verbose=0) - y) ** 2), rtol=1e-5)


def test_labels_out_of_range_on_a_subclassed_model():
    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.hidden = K.layers.Dense(4, activation="relu")
            self.norm = K.layers.BatchNormalization()
            self.out = K.layers.Dense(3)

        def call(self, x, training=False):
            return self.out(self.norm(self.hidden(x), training=training))
    model = Net()
    model.compile("adam", K.losses.SparseCategoricalCrossentropy(from_logits=True))
    model(np.ones((2, 4), np.float32))
    before = weights_of(model)
    with pytest.raises(ValueError, match=r"label value of 3 which is outside the valid range of \[0, 3\)"):
        model.fit(rng.standard_normal((6, 4)).astype(np.float32), np.array([0, 1, 2, 3, 0, 1]), verbose=0)
    assert_unchanged(before, model)
    history = model.fit(rng.standard_normal((6, 4)).astype(np.float32), np.array([0, 1, 2, 2, 0, 1]), verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_weight_constraints_are_applied_after_each_update():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(2, kernel_constraint=K.constraints.NonNeg(),
                                                        bias_constraint=K.constraints.MaxNorm(0.5))])
    model.compile(K.optimizers.SGD(0.5), "mse")
    model.fit(rng.random((16, 3)), -5 * rng.random((16, 2)), epochs=3, verbose=0)
    dense = model.layers[0]
    assert dense.kernel.numpy().min() >= 0
    assert np.linalg.norm(dense.bias.numpy()) <= 0.5 + 1e-6


def test_initial_epoch_and_validation_freq(capsys):
    x, y = regression_data(n=8)
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(x, y, epochs=4, initial_epoch=2, verbose=2, validation_data=(x, y), validation_freq=2)
    assert history.epoch == [2, 3]
    assert "val_loss" not in history.history or len(history.history["val_loss"]) == 1
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "Epoch 3/4" and "val_loss" not in lines[1]
    assert lines[2] == "Epoch 4/4" and "val_loss" in lines[3]
