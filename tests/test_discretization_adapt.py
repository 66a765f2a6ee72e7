"""Discretization.adapt: boundaries from ``num_bins`` as Keras 3.15 (TF 2.21) computes them.

Every expected list below was printed by real Keras 3.15 (``layer.bin_boundaries`` after the same adapt call),
to the last bit of its float32 values.
"""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
POWERS = (2.0 ** np.arange(20)).astype("float32")


def adapted(data, **kwargs):
    layer = keras.layers.Discretization(**kwargs)
    layer.adapt(data)
    return layer


@pytest.mark.parametrize("data, num_bins, epsilon, expected", [
    (np.arange(20, dtype="float32"), 4, 0.01, [4.0, 9.0, 14.0]),
    (np.arange(7, dtype="float32"), 4, 0.01, [0.7499999403953552, 2.5, 4.25]),
    (POWERS[:7], 2, 0.3, [4.999999523162842]),
    (POWERS, 2, 0.3, [1039.9998779296875]),
    (POWERS, 3, 0.3, [32.0, 2047.9998779296875]),
    (POWERS, 4, 0.3, [32.0, 2048.0]),     # the summary is too small to compress: fewer boundaries, as Keras
    (POWERS, 3, 0.1, [63.99998474121094, 6143.99951171875]),
    (POWERS, 4, 0.1, [19.999998092651367, 512.0, 20479.9921875]),
    (POWERS, 3, 0.01, [53.33333206176758, 5461.3349609375]),
    (POWERS[:7], 2, 0.25, [5.999999523162842]),
    (POWERS[:10], 2, 0.15, [18.66666603088379]),
    (POWERS[:3], 2, 0.9, []),
    (np.array([1, 1, 1, 2, 2, 3, 9, 9, 9, 9], "float32"), 4, 0.01, [1.0, 2.0, 9.0]),
    (np.array([[1.0, np.nan], [2.0, 3.0]]), 4, 0.01, [1.0, 2.0, 3.0]),
])
def test_adapt_gives_keras_boundaries(data, num_bins, epsilon, expected):
    assert adapted(data, num_bins=num_bins, epsilon=epsilon).bin_boundaries == expected


def test_adapt_merges_dataset_batches_as_keras():
    batches = tf.data.Dataset.from_tensor_slices(POWERS).batch(7)
    assert adapted(batches, num_bins=3, epsilon=0.1).bin_boundaries == [73.1428451538086, 6261.03759765625]
    batches = tf.data.Dataset.from_tensor_slices(np.array([5.0, 1, 3, 2, 4, 0, 9, 7])).batch(3)
    assert adapted(batches, num_bins=3).bin_boundaries == [1.6666666269302368, 4.333333492279053]


def test_adapt_starts_afresh_and_the_layer_bins_with_what_it_learned():
    layer = adapted(np.arange(5.0), num_bins=2)
    layer.adapt(np.arange(100.0, 110.0))
    assert layer.bin_boundaries == [104.0]
    layer = adapted(np.array([[1.0, np.nan], [2.0, 3.0]]), num_bins=4)
    np.testing.assert_array_equal(layer(np.array([0.0, 1, 2, 3, 4])).numpy(), [0, 1, 2, 3, 3])
    inputs = keras.Input((1,))
    model = keras.Model(inputs, keras.layers.Dense(1)(adapted(np.arange(20.0), num_bins=4, output_mode="one_hot")(inputs)))
    assert model.output_shape == (None, 1)
    assert model.layers[1].get_config()["bin_boundaries"] == [4.0, 9.0, 14.0]


def test_adapt_errors_name_the_problem():
    with pytest.raises(ValueError, match="initialized with `bin_boundaries`"):
        keras.layers.Discretization(bin_boundaries=[1.0]).adapt(np.arange(3.0))
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        keras.layers.Discretization().adapt(np.arange(3.0))
    with pytest.raises(TypeError, match="numeric data"):
        keras.layers.Discretization(num_bins=2).adapt(np.array(["a", "b"]))
