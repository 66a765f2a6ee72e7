"""The backward pass skips its dependency sweep when the sources are the tape's watched
roots; every other choice of sources sweeps. Both give TensorFlow's answers."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import backprop


def _values(grads):
    return [None if g is None else float(g) for g in grads]


@pytest.fixture
def sweeps(monkeypatch):
    """Counts the calls that had to sweep the records."""
    calls = []
    original = backprop._dependents

    def counting(tape, sources):
        if not tape.roots <= sources <= tape.ids:
            calls.append(len(sources))
        return original(tape, sources)
    monkeypatch.setattr(backprop, "_dependents", counting)
    return calls


def test_sources_equal_to_the_watched_roots_need_no_sweep(sweeps):
    x, w = tf.constant(3.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * w + tf.sin(x)
    assert _values(tape.gradient(y, [x, w])) == pytest.approx([2.0 + np.cos(3.0), 3.0])
    assert sweeps == []


def test_a_subset_of_the_roots_sweeps_and_prunes(sweeps):
    x, w = tf.Variable(3.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x + w * w * w
    assert _values(tape.gradient(y, [w])) == pytest.approx([12.0])
    assert _values(tape.gradient(y, [x])) == pytest.approx([6.0])
    assert _values(tape.gradient(y, [x, w])) == pytest.approx([6.0, 12.0])
    assert len(sweeps) == 2


def test_an_unwatched_source_used_by_a_recorded_op_gets_its_gradient_as_in_tensorflow(sweeps):
    x, c = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
        z = c * c  # not recorded: no input is watched
    assert _values(tape.gradient(y, [x, c])) == [2.0, 3.0]
    assert _values(tape.gradient(z, [x, c])) == [None, None]
    assert sweeps


def test_a_tensor_watched_after_use_flows_through_later_ops_only():
    x, w = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * w          # recorded (x is watched); w becomes a root afterwards
        tape.watch(w)
        z = y + w * w
    gx, gw = tape.gradient(z, [x, w])
    # TensorFlow: dz/dw through y (recorded because of x) and through w*w.
    assert (float(gx), float(gw)) == (2.0, 3.0 + 4.0)


def test_gradient_inside_a_persistent_recording_tape_gives_higher_order_derivatives():
    x = tf.constant(1.5)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 3
        dy = tape.gradient(y, x)        # recorded on the same tape while it runs
        d2y = tape.gradient(dy, x)
    assert float(dy) == pytest.approx(3 * 1.5 ** 2)
    assert float(d2y) == pytest.approx(6 * 1.5)
    assert float(tape.gradient(d2y, x)) == pytest.approx(6.0)


def test_intermediate_sources_and_targets_on_both_paths():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = h * x
    # sources beyond the roots (h is computed): no sweep needed, and y's gradient stops at h
    assert _values(tape.gradient(y, [x, h])) == [12.0, 2.0]
    assert _values(tape.gradient(y, [h])) == [2.0]
    assert _values(tape.gradient([y, h], [x])) == [12.0 + 4.0]


def test_an_op_without_gradient_is_not_looked_up_when_only_its_output_is_a_source():
    from tapeflow.framework.recording import execute, register_op
    register_op("TestOnlyNoGradientIdentity")(lambda x: x.copy())
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = execute("TestOnlyNoGradientIdentity", (x,))
        loss = tf.reduce_sum(y * y)
    np.testing.assert_array_equal(tape.gradient(loss, y).numpy(), [2.0, 4.0])
    with pytest.raises(LookupError, match="TestOnlyNoGradientIdentity"):
        tape.gradient(loss, x)   # through the op it is an error, as in TensorFlow
