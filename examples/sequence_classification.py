"""Sequence classification with masking: a Bidirectional GRU reads variable-length "reviews".

The data is a synthetic text task generated from a documented rule (no real text
set ships with tapeflow). Sentences are 3 to 20 word ids long, padded with 0 to 20:

* words 1-5 are positive (+1), words 6-10 negative (-1), words 11-18 neutral (0);
* word 19 is "not": it flips the polarity of the word right after it;
* the label is 1 when the sentence's total polarity is positive, 0 when negative
  (sentences that total 0 are drawn again).

A bag of words cannot reach 100% ("not good" and "good" hold the same positive
word), so the model has to read order: Embedding(mask_zero=True) ->
Bidirectional(GRU) -> Dense(sigmoid), trained with fit. The padding is masked:
the GRU carries its state through the padded steps, so a sentence's prediction
does not depend on how much padding follows it (the script checks this). The
model is saved as .keras and reloaded with identical predictions.

    python examples/sequence_classification.py [--epochs N]
"""
import argparse
import os

import numpy as np

from tapeflow import keras
from tapeflow.keras import layers

HERE = os.path.dirname(os.path.abspath(__file__))
VOCABULARY = 20          # 0 is the padding
MAX_LENGTH = 20
NOT = 19
# sentiment words a little more frequent than neutral ones, and a "not" now and then
WORD_FREQUENCIES = np.array([3] * 10 + [2] * 8 + [4], float) / 50


def polarity(word):
    return 1 if 1 <= word <= 5 else -1 if 6 <= word <= 10 else 0


def label_of(sentence):
    total, flip = 0, 1
    for word in sentence:
        if word == NOT:
            flip = -flip
            continue
        total += flip * polarity(word)
        flip = 1
    return None if total == 0 else int(total > 0)


def make_sentences(n, seed, max_length=MAX_LENGTH):
    """``n`` padded sentences (int32, (n, max_length)) and their labels, drawn by the rule above."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, max_length), "int32")
    y = np.zeros((n,), "float32")
    i = 0
    while i < n:
        length = int(rng.integers(3, max_length + 1))
        sentence = rng.choice(np.arange(1, VOCABULARY), size=length, p=WORD_FREQUENCIES)
        label = label_of(sentence)
        if label is None:
            continue
        x[i, :length] = sentence
        y[i] = label
        i += 1
    return x, y


def build_model(units=16):
    return keras.Sequential([
        keras.Input(shape=(None,), dtype="int32"),
        layers.Embedding(VOCABULARY, 16, mask_zero=True),
        layers.Bidirectional(layers.GRU(units)),
        layers.Dense(1, activation="sigmoid"),
    ], name="review_classifier")


def main(epochs=12, n_train=2000, n_test=500, batch_size=32, seed=0, verbose=1,
         save_dir=os.path.join(HERE, "output")):
    keras.utils.set_random_seed(seed)
    x_train, y_train = make_sentences(n_train, seed)
    x_test, y_test = make_sentences(n_test, seed + 1)
    model = build_model()
    if verbose:
        model.summary()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1, verbose=verbose)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"Test loss: {loss:.4f}, test accuracy: {accuracy:.4f}")

    # Masking at work: the same sentences with 10 more padding steps get the same predictions.
    longer = np.pad(x_test, ((0, 0), (0, 10)))
    padding_free = np.allclose(model.predict(longer, verbose=0), model.predict(x_test, verbose=0), atol=1e-6)
    print(f"predictions unchanged by extra padding: {padding_free}")

    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "review_classifier.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    same = np.array_equal(restored.predict(x_test, verbose=0), model.predict(x_test, verbose=0))
    print(f"saved to {os.path.relpath(path)} and reloaded: predictions identical: {same}")
    return accuracy, padding_free, same


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    main(epochs=parser.parse_args().epochs)
