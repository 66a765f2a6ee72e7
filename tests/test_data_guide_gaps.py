"""tf.data features from TensorFlow's tf.data guide: unknown-rank generator elements in a tf.function,
counter, sample/choose_from_datasets, text and CSV files, py_function, iterator checkpoints."""
import numpy as np
import pytest

import tapeflow as tf


def test_function_loops_over_generator_of_unknown_shapes():
    @tf.function
    def total(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss
    ds = tf.data.Dataset.from_generator(lambda: [(1, 5), (2, 2), (7, 3)], (tf.int32, tf.int32))
    assert ds.element_spec[0].shape.rank is None
    assert int(total(ds)) == 8
    assert int(total(ds)) == 8     # a second call pulls a fresh pass
