"""A digits classifier trained with the Keras API: compile, fit (with progress bars), evaluate,
then save in Keras's `.keras` format, reload, and continue training from the saved optimizer state.

Only the import differs from the Keras version of this script.
Data: UCI ML hand-written digits (Alpaydin & Kaynak, 1998; CC BY 4.0), 8x8 images, in examples/data/digits.npz.
"""
import os

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


def build_model():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(64,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ], name="digits")


def main(epochs=20, seed=0, verbose=1, save_dir=os.path.join(HERE, "output")):
    tf.keras.utils.set_random_seed(seed)
    (x_train, y_train), (x_test, y_test) = load_digits(seed)
    model = build_model()
    model.summary()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=epochs, validation_split=0.1, verbose=verbose,
              callbacks=[tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=5,
                                                          restore_best_weights=True)])
    loss, accuracy = model.evaluate(x_test, y_test, verbose=verbose)
    print(f"test loss {loss:.4f}, test accuracy {accuracy:.4f}")
    if save_dir is not None:
        save_and_reload(model, save_dir, (x_train, y_train), x_test, verbose)
    return accuracy


def save_and_reload(model, save_dir, train, x_test, verbose):
    """model.save / load_model round trip: same predictions, and training goes on where it stopped."""
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "digits.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    same = np.array_equal(model.predict(x_test, verbose=0), restored.predict(x_test, verbose=0))
    print(f"saved to {os.path.relpath(path)} ({os.path.getsize(path) / 1024:.0f} KiB) and reloaded: "
          f"predictions identical: {same}; optimizer at step {int(restored.optimizer.iterations)}")
    if not same:
        raise RuntimeError("the reloaded model predicts differently")
    print("one more epoch from the reloaded model:")
    restored.fit(*train, batch_size=32, epochs=1, verbose=verbose)
    return restored


if __name__ == "__main__":
    main()
