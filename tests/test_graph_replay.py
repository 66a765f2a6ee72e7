"""A traced function called with nothing recording replays on raw arrays; the results are
those of the op-by-op replay that tapes see."""
import numpy as np
import pytest

import tapeflow as tf


def _both_ways(fn, *args):
    eager_result = fn(*args)                 # no tape: the raw-array replay
    with tf.GradientTape():                  # an active tape: replay through execute
        recorded_result = fn(*args)
    return eager_result, recorded_result


def test_raw_and_recorded_replays_agree_on_nested_outputs_and_multi_output_ops():
    @tf.function
    def f(x):
        a, b = tf.split(x, 2, axis=1)
        return {"sum": tf.reduce_sum(a * b), "parts": [tf.nn.relu(a), b + 1.0], "tag": "ok"}

    x = tf.constant(np.arange(-4, 4, dtype=np.float32).reshape(2, 4))
    raw, recorded = _both_ways(f, x)
    assert raw["tag"] == recorded["tag"] == "ok"
    np.testing.assert_array_equal(raw["sum"].numpy(), recorded["sum"].numpy())
    for r, e in zip(raw["parts"], recorded["parts"]):
        assert isinstance(r, tf.Tensor)
        np.testing.assert_array_equal(r.numpy(), e.numpy())


def test_variable_reads_and_assignments_replay_in_order():
    v = tf.Variable(1.0)

    @tf.function
    def bump(x):
        before = v.read_value()
        v.assign_add(x)
        return before, v.read_value()

    before, after = bump(tf.constant(2.0))
    assert (float(before), float(after), float(v)) == (1.0, 3.0, 3.0)
    before, after = bump(tf.constant(0.5))
    assert (float(before), float(after), float(v)) == (3.0, 3.5, 3.5)


def test_traced_training_step_updates_variables_in_place_and_matches_eager():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(8, 3)).astype(np.float32))
    init = rng.normal(size=(3, 2)).astype(np.float32)
    w_traced, w_eager = tf.Variable(init), tf.Variable(init)
    opt_traced, opt_eager = tf.keras.optimizers.Adam(0.1), tf.keras.optimizers.Adam(0.1)

    def make_step(w, opt):
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(x @ w))
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            return loss
        return step

    traced, eager = tf.function(make_step(w_traced, opt_traced)), make_step(w_eager, opt_eager)
    traced(x), eager(x)
    array_id = id(w_traced._storage)
    for _ in range(3):
        np.testing.assert_allclose(float(traced(x)), float(eager(x)), rtol=1e-6)
    np.testing.assert_allclose(w_traced.numpy(), w_eager.numpy(), rtol=1e-6)
    # the replay dropped its reads of w before the optimizer ran: no copy-on-write was needed
    assert id(w_traced._storage) == array_id


def test_gradient_through_a_traced_function_uses_the_recorded_replay():
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.exp(x) * x)

    x = tf.constant([0.5, -1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    expected = np.exp(x.numpy()) * (1 + x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-6)


def test_split_and_unstack_into_one_piece_keep_their_shapes_on_both_paths():
    @tf.function
    def heads(x):
        return tf.stack([p * 2.0 for p in tf.split(x, 1, axis=-1)])

    @tf.function
    def first_row(x):
        (row,) = tf.unstack(x)
        return row + 1.0

    x = tf.constant([[1.0, 2.0]])
    for raw, recorded in (_both_ways(heads, x), _both_ways(first_row, x)):
        assert raw.shape == recorded.shape
        np.testing.assert_array_equal(raw.numpy(), recorded.numpy())
    assert heads(x).shape == (1, 1, 2) and first_row(x).shape == (2,)


def test_a_value_nothing_reads_does_not_force_a_copy_on_write():
    w = tf.Variable(np.ones((3, 2), np.float32))
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x):
        tf.convert_to_tensor(w)                 # a read whose result is never used
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(x @ w)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

    x = tf.constant(np.ones((2, 3), np.float32))
    step(x)
    array_id = id(w._storage)
    step(x)
    assert id(w._storage) == array_id
    np.testing.assert_allclose(w.numpy(), 1.0 - 2 * 0.1 * 2)


def test_an_output_count_that_changes_with_the_input_shape_is_a_clear_error():
    def rows(x):
        return tf.add_n(tf.unstack(x))

    concrete = tf.function(rows).get_concrete_function(tf.TensorSpec([None, 2], tf.float32))
    x = tf.constant(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="Unpack produced 3 outputs when the traced graph has 1"):
        concrete(x)                      # the raw-array replay
    with pytest.raises(ValueError, match="Unpack produced 3 outputs when the traced graph has 1"):
        with tf.GradientTape():
            concrete(x)                  # the recorded replay


def test_side_effects_of_a_function_called_inside_another_stay_deferred():
    mean = tf.keras.metrics.Mean()

    @tf.function
    def inner(x):
        mean.update_state(x)
        return mean.result()

    @tf.function
    def outer(x):
        return inner(x) * 2.0

    assert float(outer(tf.constant([1.0, 2.0]))) == 3.0
    assert float(outer(tf.constant([3.0, 5.0]))) == 5.5
    assert float(mean.result()) == 2.75
    with tf.GradientTape():   # the recorded replay runs the same calls
        assert float(outer(tf.constant([0.0]))) == pytest.approx(2 * 11.0 / 5)
