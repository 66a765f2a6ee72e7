"""Keras 3.15 semantics that keras.io examples rely on (found by replaying them; observed on Keras 3.15 + TF 2.21)."""
import numpy as np

import tapeflow as tf
from tapeflow import keras


def test_dense_activation_set_to_none_is_skipped():
    # grad_cam: `model.layers[-1].activation = None` to read the logits
    inp = keras.Input((3,))
    dense = keras.layers.Dense(2, activation="softmax")
    model = keras.Model(inp, dense(inp))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    dense.activation = None
    logits = model.predict(x, verbose=0)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(logits, x @ kernel + bias, rtol=1e-6)


class _SquaredErrorModel(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.dense(x)


def test_compute_loss_override_without_training_argument():
    # knowledge_distillation: compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False)
    class Distiller(_SquaredErrorModel):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
            return keras.ops.mean((y - y_pred) ** 2)

    model = Distiller()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x, y = np.ones((4, 2), "float32"), np.full((4, 1), 3.0, "float32")
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0).history
    assert history["loss"] == [1.0]     # (3 - 2)^2 at the initial weights
    # one SGD step: prediction 2 + 0.1 * 2 * (1 + 1 + 1) = 2.6
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), 0.4 ** 2, rtol=1e-5)


def test_compute_loss_gets_training_only_when_it_names_it():
    seen = []

    class WithTraining(_SquaredErrorModel):
        def compute_loss(self, x, y, y_pred, sample_weight, training=None):
            seen.append(("training", training))
            return keras.ops.mean((y - y_pred) ** 2)

    class WithKwargs(_SquaredErrorModel):
        def compute_loss(self, *args, **kwargs):
            seen.append((len(args), sorted(kwargs)))
            return keras.ops.mean((args[1] - args[2]) ** 2)

    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    for cls in (WithTraining, WithKwargs):
        model = cls()
        model.compile(optimizer="sgd", run_eagerly=True)
        model.fit(x, y, batch_size=4, verbose=0)
        model.evaluate(x, y, verbose=0)
    # observed in Keras 3.15: True/False for the first; four positional arguments and no keyword for the second
    assert seen == [("training", True), ("training", False), (4, []), (4, [])]


def test_train_and_test_on_batch_report_their_batch_alone():
    # Keras resets the metrics at each train_on_batch / test_on_batch; predict leaves them alone
    x = np.zeros((96, 2), "float32")
    y = np.r_[np.zeros(32), np.ones(64)].astype("float32")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid",
                                                                     kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)     # accuracy over the epoch: 1/3
    assert model.test_on_batch(x[:32], y[:32], return_dict=True)["accuracy"] == 1.0
    assert model.test_on_batch(x[32:64], y[32:64], return_dict=True)["accuracy"] == 0.0
    assert model.train_on_batch(x[:32], y[:32], return_dict=True)["accuracy"] == 1.0
    assert model.train_on_batch(x[32:64], y[32:64], return_dict=True)["accuracy"] == 0.0
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    model.predict(x[:32], verbose=0)
    model.predict_on_batch(x[:32])
    np.testing.assert_allclose(model.get_metrics_result()["accuracy"], 1 / 3, rtol=1e-6)
