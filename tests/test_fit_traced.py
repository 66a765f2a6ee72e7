"""fit / evaluate / predict run their steps traced by default, as Keras 3 does on TensorFlow.

What the tests hold to was observed with Keras 3.15 on TensorFlow 2.21: a custom
step's Python code runs when the step is traced (once for a whole fit, batch
dimension None), tf.print at every batch; compile(run_eagerly=True) runs the
step at every batch; predict traces the first batch's shape, then (None, ...)
for a shorter one; compile() makes new step functions, setting run_eagerly
later does not.
"""
import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


def regression(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)).astype(np.float32), rng.normal(size=(n, 1)).astype(np.float32)


def counting_model(runs):
    """A functional model whose steps note each run of their Python code in ``runs``."""
    class Counting(K.Model):
        def train_step(self, data):
            runs.append("train")
            print("tracing train_step", tuple(data[0].shape))
            tf.print("train batch")
            return super().train_step(data)

        def test_step(self, data):
            runs.append("test")
            print("tracing test_step", tuple(data[0].shape))
            return super().test_step(data)

        def predict_step(self, data):
            runs.append("predict")
            print("tracing predict_step", tuple(data.shape))   # predict(x) hands the step x itself, as Keras
            return super().predict_step(data)
    K.utils.set_random_seed(1)
    inputs = K.Input((3,))
    return Counting(inputs, K.layers.Dense(1)(inputs))


def test_a_steps_python_code_runs_once_per_trace_and_tf_print_at_every_batch(capfd):
    x, y = regression(12)
    runs = []
    model = counting_model(runs)
    model.compile("sgd", "mse")
    assert model.run_eagerly is False and model.jit_compile is False
    model.fit(x, y, batch_size=4, epochs=3, validation_data=(x, y), verbose=0)
    model.evaluate(x, y, batch_size=4, verbose=0)
    out, err = capfd.readouterr()
    assert runs == ["train", "test"]      # once each for 3 epochs of 3 batches and 4 evaluations
    assert out.count("tracing train_step (None, 3)") == 1
    assert (out + err).count("train batch") == 9
    assert model._step_functions["train"].experimental_get_tracing_count() == 1


def test_run_eagerly_runs_the_steps_at_every_batch(capfd):
    x, y = regression(12)
    runs = []
    model = counting_model(runs)
    model.compile("sgd", "mse", run_eagerly=True)
    assert model.run_eagerly is True
    model.fit(x, y, batch_size=4, epochs=3, validation_data=(x, y), verbose=0)
    model.predict(x, batch_size=4, verbose=0)
    out, err = capfd.readouterr()
    assert runs == (["train"] * 3 + ["test"] * 3) * 3 + ["predict"] * 3
    assert out.count("tracing train_step (4, 3)") == 9 and (out + err).count("train batch") == 9


def test_run_eagerly_set_after_compile_counts_until_the_step_functions_are_made(capfd):
    x, y = regression(8)
    runs = []
    model = counting_model(runs)
    model.compile("sgd", "mse")
    model.run_eagerly = True                       # before the first fit: the fit runs eagerly
    model.fit(x, y, batch_size=4, verbose=0)
    assert runs == ["train", "train"]
    model.run_eagerly = False                      # the step functions are made: as Keras, no effect ...
    model.fit(x, y, batch_size=4, verbose=0)
    assert runs == ["train"] * 4
    model.compile("sgd", "mse")                    # ... until compile() makes new ones
    model.fit(x, y, batch_size=4, verbose=0)
    assert runs == ["train"] * 5


def test_the_short_last_batch_uses_the_one_trace_and_gives_the_eager_numbers(capfd):
    x, y = regression(10)

    def fit(**options):
        runs = []
        model = counting_model(runs)
        model.compile(K.optimizers.Adam(0.05), "mse", metrics=["mae"], **options)
        history = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
        return model, history.history
    eager, eager_history = fit(run_eagerly=True)
    capfd.readouterr()
    traced, traced_history = fit()
    out, _ = capfd.readouterr()
    assert out.count("tracing train_step") == 1          # batches of 4, 4 and 2: one trace, as Keras
    np.testing.assert_allclose([traced_history[k] for k in sorted(traced_history)],
                               [eager_history[k] for k in sorted(eager_history)], rtol=1e-6)
    for a, b in zip(eager.weights, traced.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_a_step_whose_graph_depends_on_the_batch_size_gets_a_graph_per_size():
    x, y = regression(10)

    def fit(**options):
        K.utils.set_random_seed(2)
        model = K.Sequential([K.Input((3,)), K.layers.Dense(4), K.layers.Reshape((2, 2)),  # a static-shape op
                              K.layers.Flatten(), K.layers.Dense(1)])
        model.compile("sgd", "mse", **options)
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        return model
    eager, traced = fit(run_eagerly=True), fit()
    for a, b in zip(eager.weights, traced.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_eager_and_traced_fits_agree_with_dropout_batchnorm_validation_and_sample_weights():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6)).astype(np.float32)
    y = rng.integers(0, 3, 50)
    weights = rng.uniform(0.5, 2.0, 50).astype(np.float32)

    def fit(**options):
        K.utils.set_random_seed(3)
        model = K.Sequential([K.Input((6,)), K.layers.Dense(8, activation="relu"), K.layers.BatchNormalization(),
                              K.layers.Dropout(0.3), K.layers.Dense(3, activation="softmax")])
        model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"], **options)
        history = model.fit(x, y, sample_weight=weights, batch_size=16, epochs=2, validation_split=0.2, verbose=0)
        return model, history.history
    eager, eager_history = fit(run_eagerly=True)
    traced, traced_history = fit()
    assert sorted(traced_history) == sorted(eager_history)
    for key in eager_history:
        np.testing.assert_allclose(traced_history[key], eager_history[key], rtol=1e-6)
    for a, b in zip(eager.weights, traced.weights):    # moving mean and variance included
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert not np.allclose(traced.get_layer(index=1).moving_mean.numpy(), 0.0)


def test_learning_rate_changes_between_epochs_and_steps_take_effect_in_the_traced_step():
    x, y = regression(16)

    class HalveEachBatch(K.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.model.optimizer.learning_rate = float(self.model.optimizer.learning_rate) * 0.5

    def fit(callbacks, **options):
        K.utils.set_random_seed(4)
        model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
        model.compile(K.optimizers.SGD(0.1), "mse", **options)
        history = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0, callbacks=callbacks)
        return model.get_weights(), history.history
    schedule = [K.callbacks.LearningRateScheduler(lambda epoch, lr: 0.2 / (epoch + 1))]
    eager, eager_history = fit(schedule, run_eagerly=True)
    traced, traced_history = fit(schedule)
    constant, _ = fit([])
    np.testing.assert_allclose(traced_history["learning_rate"], [0.2, 0.1, 0.2 / 3], rtol=1e-6)
    for a, b, c in zip(eager, traced, constant):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert not np.allclose(traced[0], constant[0], atol=1e-4)
    eager, _ = fit([HalveEachBatch()], run_eagerly=True)
    traced, _ = fit([HalveEachBatch()])
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_evaluate_and_predict_are_traced_and_give_the_eager_numbers(capfd):
    x, y = regression(10)
    runs = []
    model = counting_model(runs)
    model.compile("sgd", "mse", metrics=["mae"])
    traced_eval = model.evaluate(x, y, batch_size=4, verbose=0)
    model.evaluate(x, y, batch_size=3, verbose=0)
    traced_pred = model.predict(x, batch_size=4, verbose=0)
    model.predict(x, batch_size=4, verbose=0)
    out, _ = capfd.readouterr()
    # One trace prints for both evaluations. A graph holds its batch size (gradients and loss means are
    # built on the trace's shapes), so each other batch size is traced again, silently: at most once per size
    # (4, 2, 3, 1), not at each of the 7 batches.
    assert out.count("tracing test_step (None, 3)") == 1 and runs.count("test") <= 4
    # predict: the first batch's shape, then (None, 3) for the short batch, as Keras
    assert out.count("tracing predict_step") == 2
    assert out.index("tracing predict_step (4, 3)") < out.index("tracing predict_step (None, 3)")
    model.compile("sgd", "mse", metrics=["mae"], run_eagerly=True)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=4, verbose=0), traced_eval, rtol=1e-6)
    np.testing.assert_allclose(model.predict(x, batch_size=4, verbose=0), traced_pred, rtol=1e-6)
    np.testing.assert_allclose(traced_pred, x @ model.get_weights()[0] + model.get_weights()[1], rtol=1e-5)


def test_the_batch_methods_trace_their_own_functions(capfd):
    x, y = regression(8)
    runs = []
    model = counting_model(runs)
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=4, verbose=0)
    for rows in (4, 4, 3):
        model.train_on_batch(x[:rows], y[:rows])
    out, _ = capfd.readouterr()
    # fit's trace, then train_on_batch's (4, 3) and (None, 3), as Keras prints them
    assert [line for line in out.splitlines() if line.startswith("tracing")] == [
        "tracing train_step (None, 3)", "tracing train_step (4, 3)", "tracing train_step (None, 3)"]
    assert runs.count("train") <= 4               # and a silent check of the relaxed trace; eagerly: 5 runs
    before = model.get_weights()[0].copy()
    model.train_on_batch(x[:4], y[:4])
    assert not np.allclose(model.get_weights()[0], before)


def test_jit_compile_with_run_eagerly_warns_and_runs_eagerly():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    with pytest.warns(UserWarning, match="`jit_compile` cannot also be True"):
        model.compile("sgd", "mse", jit_compile=True, run_eagerly=True)
    assert model.jit_compile is False and model.run_eagerly is True
    model.compile("sgd", "mse", jit_compile="auto")
    assert model.jit_compile is False and model.get_compile_config()["jit_compile"] is False


def test_numpy_inside_a_traced_step_raises_and_runs_eagerly():
    x, y = regression(8)

    class ReadsIterations(K.Model):
        def train_step(self, data):
            logs = super().train_step(data)
            logs["steps"] = float(self.optimizer.iterations.numpy())
            return logs
    inputs = K.Input((3,))
    model = ReadsIterations(inputs, K.layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    with pytest.raises(NotImplementedError, match="only available when eager execution is enabled"):
        model.fit(x, y, batch_size=4, verbose=0)
    model.compile("sgd", "mse", run_eagerly=True)
    assert model.fit(x, y, batch_size=4, epochs=2, verbose=0).history["steps"] == [2.0, 4.0]


def test_a_layer_computing_on_host_values_runs_at_every_call_of_a_traced_function():
    lookup = K.layers.StringLookup(vocabulary=["a", "b", "c"])
    f = tf.function(lambda s: lookup(s))
    np.testing.assert_array_equal(f(tf.constant(["a", "c", "z"])).numpy(), [1, 3, 0])
    np.testing.assert_array_equal(f(tf.constant(["b", "b", "a"])).numpy(), [2, 2, 1])
    assert f.experimental_get_tracing_count() == 1


def test_ops_shape_of_a_traced_batch_sizes_new_tensors():
    # The GAN/VAE pattern: batch_size = ops.shape(x)[0] inside a traced train_step, where x.shape[0] is None
    import tapeflow as tf
    keras = tf.keras
    sizes = []

    class Noise(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.seeds = keras.random.SeedGenerator(1)

        def train_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            z = keras.random.normal(shape=(keras.ops.shape(x)[0], 4), seed=self.seeds)
            sizes.append(tuple(z.shape))
            return {"m": keras.ops.mean(self.dense(z))}

    model = Noise()
    model.compile()
    history = model.fit(np.zeros((40, 3), "float32"), batch_size=32, epochs=1, verbose=0)
    assert np.isfinite(history.history["m"][0])
    assert (32, 4) in sizes and (8, 4) in sizes     # each trace's own batch (the short last one too)
