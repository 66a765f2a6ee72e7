"""Input-gradient regularisation (Finlay & Oberman, 2019) on the digits, with and without the penalty.

Trains the same classifier twice, then reports for each: clean test accuracy,
the mean norm of the loss gradient with respect to each input, and accuracy
under a one-step FGSM attack (x + eps * sign(d loss / d x)).
Data: UCI ML hand-written digits (Alpaydin & Kaynak, 1998; CC BY 4.0).
"""
import os
import sys

import numpy as np

import tapeflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keras_fit import load_digits  # noqa: E402  (the same data split as the Keras example)


def build_model():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(64,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ], name="digits")


def per_example_input_gradients(model, x, y):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = loss_fn(y, model(x, training=False))
    return tape.gradient(loss, x).numpy()   # a sum of per-example losses: row i is d loss_i / d x_i


def evaluate(model, x, y, epsilon):
    logits = model.predict(x, verbose=0)
    clean = float(np.mean(np.argmax(logits, 1) == y))
    grads = per_example_input_gradients(model, x, y)
    x_adv = np.clip(x + epsilon * np.sign(grads), 0.0, 1.0).astype(np.float32)
    attacked = float(np.mean(np.argmax(model.predict(x_adv, verbose=0), 1) == y))
    return clean, float(np.mean(np.linalg.norm(grads, axis=1))), attacked


def train(weight, data, epochs, seed):
    tf.keras.utils.set_random_seed(seed)
    model = build_model()
    trainee = model if weight == 0 else tf.layers.InputGradientRegularizedModel(model, weight=weight)
    trainee.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    (x_train, y_train), _ = data
    trainee.fit(x_train, y_train, epochs=epochs, batch_size=32, verbose=0)
    return model


def main(weight=0.5, epochs=25, epsilon=0.1, seed=0):
    data = load_digits(seed)
    (_, _), (x_test, y_test) = data
    print(f"digits: {len(data[0][0])} training and {len(x_test)} test images; FGSM epsilon = {epsilon}")
    print(f"{'training':28s} {'clean acc':>9s} {'mean |dL/dx|':>13s} {'FGSM acc':>9s}")
    results = {}
    for name, w in [("plain", 0.0), (f"input-gradient penalty {weight}", weight)]:
        model = train(w, data, epochs, seed)
        clean, norm, attacked = evaluate(model, x_test, y_test, epsilon)
        results[name] = (clean, norm, attacked)
        print(f"{name:28s} {clean:9.3f} {norm:13.4f} {attacked:9.3f}")
    return results


if __name__ == "__main__":
    main()
