"""The Keras "Simple MNIST convnet" example, on the hand-written digits shipped with tapeflow.

The model is the example's: Conv2D 32 3x3 relu, MaxPooling 2, Conv2D 64 3x3 relu,
MaxPooling 2, Flatten, Dropout 0.5, Dense softmax, trained with Adam and
categorical cross-entropy (batches of 32 for 20 epochs: the 1,300 training digits at
the example's batch of 128 would give 11 steps per epoch, MNIST's 60,000 give 469).
It reaches about 98% test accuracy. The digits are 8x8 (UCI ML hand-written digits,
Alpaydin & Kaynak, 1998; CC BY 4.0), so each image is upsampled 3x to 24x24
and padded to the example's 28x28. Only the import differs from the Keras version.

    python examples/convnet.py [--epochs N]
"""
import argparse
import os

import numpy as np

from tapeflow import keras
from tapeflow.keras import layers

HERE = os.path.dirname(os.path.abspath(__file__))
NUM_CLASSES = 10
INPUT_SHAPE = (28, 28, 1)


def load_digits(seed=0, test_fraction=0.2):
    data = np.load(os.path.join(HERE, "data", "digits.npz"))
    images = data["images"].astype("float32") / 16.0                    # (n, 8, 8), values in [0, 1]
    images = np.kron(images, np.ones((1, 3, 3), "float32"))             # 24x24, each pixel a 3x3 block
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))[..., None]        # 28x28x1, as MNIST
    labels = data["labels"].astype("int64")
    order = np.random.default_rng(seed).permutation(len(images))
    n_test = int(len(images) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return (images[train], labels[train]), (images[test], labels[test])


def build_model():
    return keras.Sequential([
        keras.Input(shape=INPUT_SHAPE),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(NUM_CLASSES, activation="softmax"),
    ])


def main(epochs=20, batch_size=32, seed=0, verbose=1, save_dir=os.path.join(HERE, "output")):
    keras.utils.set_random_seed(seed)
    (x_train, y_train), (x_test, y_test) = load_digits(seed)
    y_train = keras.utils.to_categorical(y_train, NUM_CLASSES)
    y_test = keras.utils.to_categorical(y_test, NUM_CLASSES)
    model = build_model()
    if verbose:
        model.summary()
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1, verbose=verbose)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"Test loss: {loss:.4f}, test accuracy: {accuracy:.4f}")

    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "digits_convnet.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    same = np.array_equal(restored.predict(x_test, verbose=0), model.predict(x_test, verbose=0))
    print(f"saved to {os.path.relpath(path)} and reloaded: predictions identical: {same}")
    return accuracy, same


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    main(epochs=parser.parse_args().epochs)
