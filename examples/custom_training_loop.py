"""A digits classifier trained with a hand-written loop: tf.GradientTape + optimizer.apply_gradients.

The loop of the Keras guide "Writing a training loop from scratch", with tapeflow.
Data: UCI ML hand-written digits (Alpaydin & Kaynak, 1998; CC BY 4.0), 8x8 images, in examples/data/digits.npz.
"""
import os
import time

import numpy as np

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def load_digits(seed=0, test_fraction=0.2):
    data = np.load(os.path.join(HERE, "data", "digits.npz"))
    x = data["images"].reshape(-1, 64).astype(np.float32) / 16.0
    y = data["labels"].astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (x[train], y[train]), (x[test], y[test])


def main(epochs=15, batch_size=32, seed=0):
    tf.keras.utils.set_random_seed(seed)
    (x_train, y_train), (x_test, y_test) = load_digits(seed)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(64,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
    train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
    test_acc = tf.keras.metrics.SparseCategoricalAccuracy()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc.update_state(y, logits)
        return loss

    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        start = time.time()
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(0, len(order), batch_size):
            batch = order[i:i + batch_size]
            losses.append(float(train_step(tf.constant(x_train[batch]), tf.constant(y_train[batch]))))
        test_acc.update_state(y_test, model(x_test, training=False))
        print(f"epoch {epoch + 1:2d}  loss {np.mean(losses):.4f}  train acc {float(train_acc.result()):.4f}  "
              f"test acc {float(test_acc.result()):.4f}  ({time.time() - start:.2f}s)")
        train_acc.reset_state()
        test_acc.reset_state()
    accuracy = float(np.mean(np.argmax(model.predict(x_test, verbose=0), axis=1) == y_test))
    print(f"final test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
