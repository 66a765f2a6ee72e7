"""examples/sequence_classification.py: a masked Bidirectional(GRU) review classifier on the documented rule."""
import os
import sys

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)

import sequence_classification as example  # noqa: E402


def test_the_labels_follow_the_documented_rule():
    good, bad, neutral, no = 2, 7, 12, example.NOT
    assert example.label_of([good, neutral]) == 1
    assert example.label_of([no, good, neutral]) == 0          # "not" flips the next word
    assert example.label_of([no, bad, bad, good]) == 1          # +1 - 1 + 1
    assert example.label_of([good, no, neutral, bad, good]) == 1  # "not" before a neutral word flips nothing
    assert example.label_of([good, bad]) is None                # ties are drawn again
    x, y = example.make_sentences(50, seed=3)
    lengths = (x != 0).sum(axis=1)
    assert lengths.min() >= 3 and np.all(x[:, 0] != 0)
    for row, label, n in zip(x, y, lengths):
        assert np.all(row[n:] == 0) and example.label_of(row[:n]) == label


def test_the_example_learns_ignores_padding_and_reloads_identically(tmp_path):
    accuracy, padding_free, identical = example.main(epochs=4, n_train=1000, n_test=300, verbose=0,
                                                     save_dir=str(tmp_path))
    assert accuracy >= 0.8 and padding_free and identical
