"""Keras 3 behaviours used by the Keras guides (checked against Keras 3.15 with the jax backend)."""
import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def _two_input_model():
    a = keras.Input((2,), name="a")
    b = keras.Input((3,), name="b")
    return keras.Model([a, b], keras.layers.Dense(1)(keras.layers.concatenate([a, b])))


def test_list_input_model_takes_a_dict_keyed_by_input_names():
    model = _two_input_model()
    xa, xb = np.random.rand(4, 2).astype("float32"), np.random.rand(4, 3).astype("float32")
    expected = model([xa, xb]).numpy()
    np.testing.assert_array_equal(model({"b": xb, "a": xa}).numpy(), expected)
    np.testing.assert_array_equal(model({"a": xa, "b": xb, "unused": xb}).numpy(), expected)
    np.testing.assert_array_equal(model.predict({"b": xb, "a": xa}, verbose=0), expected)
    assert model({"b": keras.Input((3,)), "a": keras.Input((2,))}).shape == (None, 1)
    model.compile("sgd", "mse")
    loss = model.evaluate({"b": xb, "a": xa}, np.ones((4, 1)), verbose=0)
    np.testing.assert_allclose(loss, np.mean((expected - 1) ** 2), rtol=1e-6)
    model.fit({"a": xa, "b": xb}, np.ones((4, 1)), verbose=0)
    with pytest.raises(ValueError, match='Missing data for input "b"'):
        model({"a": xa})


def test_single_input_model_takes_a_dict():
    a = keras.Input((2,), name="a")
    model = keras.Model(a, keras.layers.Dense(1)(a))
    x = np.random.rand(3, 2).astype("float32")
    np.testing.assert_array_equal(model({"a": x}).numpy(), model(x).numpy())
    with pytest.raises(ValueError, match="Expected the following keys: \\['a'\\]"):
        model({"z": x})


def test_rank_one_data_fed_to_an_input_of_one_feature_becomes_a_column():
    i = keras.Input((1,))
    model = keras.Model(i, keras.layers.Dense(1)(i))
    x = np.array([1.0, 2.0, 3.0], "float32")
    expected = model(x[:, None]).numpy()
    np.testing.assert_array_equal(model(x).numpy(), expected)
    np.testing.assert_array_equal(model.predict(x, verbose=0), expected)
    model.compile("sgd", "mse")
    np.testing.assert_allclose(model.evaluate(x, x, verbose=0), np.mean((expected[:, 0] - x) ** 2), rtol=1e-6)
    seq = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    np.testing.assert_array_equal(seq(x).numpy(), seq(x[:, None]).numpy())
    # A trailing axis of 1 is squeezed the other way; other ranks are rejected as before.
    j = keras.Input((2,))
    flat = keras.Model(j, keras.layers.Dense(1)(j))
    y = np.random.rand(3, 2).astype("float32")
    np.testing.assert_array_equal(flat(y[..., None]).numpy(), flat(y).numpy())
    k = keras.Input((3,))
    with pytest.raises(ValueError, match="min_ndim=2"):
        keras.Model(k, keras.layers.Dense(1)(k))(np.ones(3, "float32"))


def test_inputs_are_cast_to_the_input_dtype():
    i = keras.Input((1,), dtype="int32")
    assert keras.Model(i, i * 2)(np.array([[1.0], [2.0]])).dtype == tf.int32
    j = keras.Input((1,))
    out = keras.Model(j, keras.layers.Dense(1)(j))(np.array([[1], [2]]))
    assert out.dtype == tf.float32


def test_one_hot_of_float_indices_matches_keras():
    # Keras 3.15 (jax): a whole-number float selects its class, any other value none; multi_hot truncates.
    x = np.array([1.0, 2.7, -1.0, 5.0, -0.5, 0.5, 2.0], "float32")
    expected = np.zeros((7, 3), "float32")
    expected[0, 1] = expected[6, 2] = 1
    np.testing.assert_array_equal(keras.ops.one_hot(x, 3).numpy(), expected)
    np.testing.assert_array_equal(keras.ops.multi_hot(np.array([[1.0, 2.7, -0.5]], "float32"), 3).numpy(),
                                  [[1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="bool"):
        keras.ops.one_hot(np.array([True, False]), 3)


def test_normalization_exposes_mean_and_variance_in_the_broadcast_shape():
    layer = keras.layers.Normalization()
    assert layer.mean is None
    layer.adapt(np.array([[1.0], [3.0]]))
    np.testing.assert_array_equal(layer.mean.numpy(), [[2.0]])
    np.testing.assert_array_equal(layer.variance.numpy(), [[1.0]])
    given = keras.layers.Normalization(mean=2.0, variance=4.0)
    given.build((None, 3))
    np.testing.assert_array_equal(given.mean.numpy(), [[2.0, 2.0, 2.0]])
    assert given.variance.dtype == tf.float32
    flat = keras.layers.Normalization(axis=None)
    flat.adapt(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(flat.variance.numpy(), [2.0 / 3.0], rtol=1e-7)


@pytest.mark.parametrize("schedule", [
    keras.optimizers.schedules.InverseTimeDecay(0.001, 3, 1, staircase=True),
    keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5),
    keras.optimizers.schedules.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
    keras.optimizers.schedules.PolynomialDecay(0.1, 5, 0.01, power=2.0, cycle=True),
    keras.optimizers.schedules.CosineDecay(0.0, 5, alpha=0.1, warmup_target=0.2, warmup_steps=3),
    keras.optimizers.schedules.CosineDecayRestarts(0.1, 3),
])
def test_schedule_of_a_tensor_of_steps_is_elementwise(schedule):
    steps = np.arange(12).reshape(3, 4)
    rates = schedule(tf.constant(steps))
    assert rates.shape == (3, 4) and rates.dtype == tf.float32
    for index, step in np.ndenumerate(steps):
        assert rates.numpy()[index] == schedule(int(step)).numpy()
    # The Keras guide's staircase example: 0.001 until step 3, then 0.0005.
    if isinstance(schedule, keras.optimizers.schedules.InverseTimeDecay):
        np.testing.assert_array_equal(schedule(np.linspace(0, 3, 2)).numpy(), np.float32([0.001, 0.0005]))


def test_keras_mask_attribute_on_eager_outputs():
    out = keras.layers.Embedding(10, 2, mask_zero=True)(np.array([[1, 0, 3]]))
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, False, True]])
    assert not hasattr(keras.layers.Dense(2)(np.ones((1, 2), "float32")), "_keras_mask")
    fresh = tf.ones((1, 2))
    fresh._keras_mask = tf.constant([[True, False]])
    np.testing.assert_array_equal(fresh._keras_mask.numpy(), [[True, False]])
    # A mask set by hand reaches the next layer that reads masks.
    pooled = keras.layers.GlobalAveragePooling1D()(tf.reshape(fresh, (1, 2, 1)) * 1.0)
    assert pooled.shape == (1, 1)
    masked = keras.layers.Masking()(np.array([[[1.0], [0.0]]], "float32"))
    assert hasattr(keras.layers.Dropout(0.5)(masked), "_keras_mask")
    assert not hasattr(keras.layers.GlobalAveragePooling1D()(masked), "_keras_mask")  # consumed, as in Keras


def test_keras_mask_attribute_on_keras_tensors():
    inputs = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(inputs)
    assert not hasattr(inputs, "_keras_mask")
    assert (x._keras_mask.shape, x._keras_mask.dtype) == ((None, None), "bool")
    assert keras.layers.Dense(3)(x)._keras_mask.shape == (None, None)
    assert not hasattr(keras.layers.LSTM(3)(x), "_keras_mask")
    fixed = keras.layers.Masking()(keras.Input((5, 3)))
    assert fixed._keras_mask.shape == (None, 5)

    class NeedsMask(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.supports_masking = True

        def call(self, inputs, mask=None):
            assert mask is not None
            return inputs * tf.cast(mask, inputs.dtype)[..., None]

    model = keras.Model(inputs, NeedsMask()(x))
    out = model(np.array([[1, 0, 2]]))
    assert np.all(out.numpy()[0, 1] == 0) and np.any(out.numpy()[0, 0] != 0)


def test_export_writes_a_saved_model_whose_serve_endpoint_is_the_model(tmp_path, capsys):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    path = str(tmp_path / "missing_parent" / "exported")
    model.export(path)
    assert "Endpoint 'serve'" in capsys.readouterr().out
    x = np.random.rand(4, 3).astype("float32")
    np.testing.assert_array_equal(tf.saved_model.load(path).serve(tf.constant(x)).numpy(), model(x).numpy())
    layer = keras.layers.TFSMLayer(path, call_endpoint="serve")
    np.testing.assert_array_equal(layer(x).numpy(), model(x).numpy())
    assert sorted(tuple(w.shape) for w in layer.weights) == sorted(tuple(w.shape) for w in model.weights)
    with pytest.raises(ValueError, match="endpoint 'nope'"):
        keras.layers.TFSMLayer(path, call_endpoint="nope")
    two = _two_input_model()
    two.export(str(tmp_path / "two"), verbose=False)
    xa, xb = np.ones((2, 2), "float32"), np.ones((2, 3), "float32")
    served = tf.saved_model.load(str(tmp_path / "two")).serve(tf.constant(xa), tf.constant(xb))
    np.testing.assert_array_equal(served.numpy(), two([xa, xb]).numpy())
    with pytest.raises(ValueError, match="format='tf_saved_model'"):
        model.export(str(tmp_path / "x"), format="onnx")


def test_subclassed_model_export_needs_a_signature(tmp_path):
    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(1)

        def call(self, x):
            return self.d(x)
    model = Sub()
    model(np.ones((1, 4), "float32"))
    with pytest.raises(ValueError, match="input_signature"):
        model.export(str(tmp_path / "sub"), verbose=False)
    model.export(str(tmp_path / "sub"), input_signature=[tf.TensorSpec((None, 4), tf.float32)], verbose=False)
    x = np.random.rand(2, 4).astype("float32")
    np.testing.assert_array_equal(tf.saved_model.load(str(tmp_path / "sub")).serve(x).numpy(), model(x).numpy())


def test_missing_directories_on_save_as_keras(tmp_path):
    # Keras 3.15: a legacy .h5 model file gets its parent directories; .keras and .weights.h5 do not.
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    with pytest.warns(UserWarning, match="legacy"):
        model.save(str(tmp_path / "a" / "b" / "m.h5"))
    assert (tmp_path / "a" / "b" / "m.h5").is_file()
    with pytest.raises(FileNotFoundError):
        model.save(str(tmp_path / "c" / "m.keras"))
    with pytest.raises(FileNotFoundError):
        model.save_weights(str(tmp_path / "d" / "m.weights.h5"))
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()


FIXTURES = __import__("os").path.join(__import__("os").path.dirname(__file__), "fixtures", "keras3_encoding")


def test_category_encoding_and_discretization_load_from_keras_and_match_its_outputs(tmp_path):
    import os
    model = keras.models.load_model(os.path.join(FIXTURES, "encodings.keras"))
    data = np.load(os.path.join(FIXTURES, "encodings_data.npz"))
    predictions = model.predict([data["ids"], data["values"]], verbose=0)
    for i, prediction in enumerate(predictions):
        np.testing.assert_array_equal(prediction, data[f"pred_{i}"])
        assert prediction.dtype == data[f"pred_{i}"].dtype
    model.save(str(tmp_path / "again.keras"))
    again = keras.models.load_model(str(tmp_path / "again.keras"))
    for a, b in zip(again.predict([data["ids"], data["values"]], verbose=0), predictions):
        np.testing.assert_array_equal(a, b)


def test_category_encoding_modes_and_shapes():
    layer = keras.layers.CategoryEncoding(4, output_mode="count")
    out = layer(np.array([[0, 1], [0, 0]]), count_weights=np.array([[0.1, 0.2], [0.1, 0.4]]))
    np.testing.assert_allclose(out.numpy(), [[0.1, 0.2, 0, 0], [0.5, 0, 0, 0]], rtol=1e-6)
    one_hot = keras.layers.CategoryEncoding(4, output_mode="one_hot")
    assert one_hot(np.array([[3], [2]])).shape == (2, 4)
    assert one_hot(np.array([3, 2, 0])).shape == (3, 4)
    assert one_hot(keras.Input((3,), dtype="int32")).shape == (None, 3, 4)
    np.testing.assert_array_equal(keras.layers.CategoryEncoding(4)(np.array([0, 1, 1])).numpy(), [1, 1, 0, 0])
    with pytest.raises(ValueError, match="num_tokens must be set"):
        keras.layers.CategoryEncoding()
    with pytest.raises(ValueError, match="Unknown arg for output_mode: tf_idf"):
        keras.layers.CategoryEncoding(4, output_mode="tf_idf")


def test_discretization_bins_and_errors():
    layer = keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, np.nan]], "float32")
    np.testing.assert_array_equal(layer(x).numpy(), [[0, 2, 3, 1], [1, 3, 2, 3]])  # Keras: NaN -> last bin
    assert layer(keras.Input((3,))).dtype == "int32"
    np.testing.assert_array_equal(keras.layers.Discretization(bin_boundaries=[1, 2])(np.array([0, 1, 2, 3])).numpy(),
                                  [0, 1, 2, 2])
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries`"):
        keras.layers.Discretization(bin_boundaries=[0.0], num_bins=2)
    with pytest.raises(ValueError, match="initialized with `bin_boundaries`"):
        keras.layers.Discretization(bin_boundaries=[1.0]).adapt(np.arange(10.0))


def _nested_cell_class():
    ops = keras.ops

    class NestedCell(keras.layers.Layer):  # the "Working with RNNs" guide's cell
        def __init__(self, unit_1, unit_2, unit_3, **kwargs):
            self.unit_1, self.unit_2, self.unit_3 = unit_1, unit_2, unit_3
            self.state_size = [unit_1, [unit_2, unit_3]]
            self.output_size = [unit_1, [unit_2, unit_3]]
            super().__init__(**kwargs)

        def build(self, input_shapes):
            i1, i2, i3 = input_shapes[0][1], input_shapes[1][1], input_shapes[1][2]
            self.kernel_1 = self.add_weight(shape=(i1, self.unit_1), initializer="uniform", name="kernel_1")
            self.kernel_2_3 = self.add_weight(shape=(i2, i3, self.unit_2, self.unit_3), initializer="uniform",
                                              name="kernel_2_3")

        def call(self, inputs, states):
            input_1, input_2 = keras.tree.flatten(inputs)
            s1, s2 = states
            output_1 = ops.matmul(input_1, self.kernel_1)
            output_2_3 = ops.einsum("bij,ijkl->bkl", input_2, self.kernel_2_3)
            return (output_1, output_2_3), (s1 + output_1, s2 + output_2_3)
    return NestedCell


def test_rnn_runs_a_cell_with_nested_inputs_outputs_and_states():
    # Keras 3.15 itself fails on this guide section (its RNN builds the cell with the first sequence only);
    # the cell is linear, so the expected values have a closed form.
    rng = np.random.default_rng(0)
    x1 = rng.random((2, 4, 3)).astype("float32")
    x2 = rng.random((2, 4, 2, 3)).astype("float32")
    rnn = keras.layers.RNN(_nested_cell_class()(2, 3, 4), return_sequences=True, return_state=True)
    (seq_1, seq_2_3), state_1, state_2_3 = rnn((x1, x2))
    k1, k23 = rnn.cell.kernel_1.numpy(), rnn.cell.kernel_2_3.numpy()
    expected_1 = np.einsum("bti,ij->btj", x1, k1)
    expected_2_3 = np.einsum("btij,ijkl->btkl", x2, k23)
    np.testing.assert_allclose(seq_1.numpy(), expected_1, rtol=1e-5)
    np.testing.assert_allclose(seq_2_3.numpy(), expected_2_3, rtol=1e-5)
    np.testing.assert_allclose(state_1.numpy(), expected_1.sum(1), rtol=1e-5)
    np.testing.assert_allclose(state_2_3.numpy(), expected_2_3.sum(1), rtol=1e-5)

    input_1, input_2 = keras.Input((None, 3)), keras.Input((None, 2, 3))
    last = keras.layers.RNN(_nested_cell_class()(2, 3, 4))
    outputs = last((input_1, input_2))
    assert [tuple(o.shape) for o in outputs] == [(None, 2), (None, 3, 4)]
    model = keras.Model([input_1, input_2], outputs)
    out_1, out_2_3 = model.predict([x1, x2], verbose=0)
    np.testing.assert_allclose(out_1, x1[:, -1] @ last.cell.kernel_1.numpy(), rtol=1e-5)
    np.testing.assert_allclose(out_2_3, np.einsum("bij,ijkl->bkl", x2[:, -1], last.cell.kernel_2_3.numpy()),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="expects inputs of shape"):
        keras.layers.SimpleRNN(2)([x1, x1[:, 0]])


def test_hashing_matches_the_examples_of_keras_documentation():
    inp = [["A"], ["B"], ["C"], ["D"], ["E"]]
    hashing = keras.layers.Hashing
    np.testing.assert_array_equal(hashing(num_bins=3)(inp).numpy().ravel(), [1, 0, 1, 1, 2])
    np.testing.assert_array_equal(hashing(num_bins=3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]]).numpy().ravel(),
                                  [1, 1, 0, 2, 2])
    np.testing.assert_array_equal(hashing(num_bins=3, salt=[133, 137])(inp).numpy().ravel(), [1, 2, 1, 0, 2])
    np.testing.assert_array_equal(hashing(num_bins=3, salt=133)(inp).numpy().ravel(), [0, 0, 2, 1, 0])
    assert hashing(num_bins=3)(inp).dtype == tf.int64
    encoded = keras.layers.CategoryEncoding(64, output_mode="multi_hot")(
        hashing(num_bins=64, salt=1337)(np.random.randint(0, 100000, size=(50, 1))))
    assert encoded.shape == (50, 64) and np.all(encoded.numpy().sum(1) == 1)
    with pytest.raises(ValueError, match="strings or integers"):
        hashing(num_bins=3)(np.ones((2, 1), "float32"))


def test_siphash_reference_vector():
    from tapeflow.layers.preprocessing.siphash import siphash24
    # The SipHash paper's test vector: key 00..0f, message 00..0e.
    assert siphash24(bytes(range(15)), 0x0706050403020100, 0x0f0e0d0c0b0a0908) == 0xa129ca6149be45e5
