"""GradientTape semantics, as TensorFlow 2.21 behaves (spec section 1)."""
import numpy as np
import pytest

import tapeflow as tf


def test_enter_returns_self_and_reenter_active_tape_fails():
    tape = tf.GradientTape()
    with tape as t:
        assert t is tape
        with pytest.raises(ValueError, match="Tape is still recording, This can happen if you try to re-enter"):
            tape.__enter__()


def test_exception_inside_block_leaves_tape_usable():
    x = tf.constant(3.0)
    tape = tf.GradientTape()
    with pytest.raises(ZeroDivisionError):
        with tape:
            tape.watch(x)
            y = x * x
            1 / 0
    assert float(tape.gradient(y, x)) == 6.0


def test_reentering_persistent_tape_continues_recording():
    x = tf.constant(3.0)
    g = tf.GradientTape(persistent=True)
    with g:
        g.watch(x)
        y = x * x
    with g:
        z = y * x
    assert float(g.gradient(z, x)) == 27.0


def test_reentering_consumed_non_persistent_tape_starts_fresh():
    x = tf.constant(2.0)
    g = tf.GradientTape()
    with g:
        g.watch(x)
        y = x * x
    assert float(g.gradient(y, x)) == 4.0
    with g:
        g.watch(x)
        z = x * x * x
    assert float(g.gradient(z, x)) == 12.0


def test_never_entered_tape():
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to compute one set"):
        tf.GradientTape(persistent=True).gradient(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError, match="not active"):
        tf.GradientTape().watch(tf.constant(1.0))


def test_second_use_of_non_persistent_tape():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    for call in (lambda: t.gradient(y, x), lambda: t.jacobian(y, x)):
        with pytest.raises(RuntimeError, match=r"can only be used to compute one set of gradients \(or jacobians\)"):
            call()


# ------------------------------------------------------------------- watch ---
@pytest.mark.parametrize("bad, text", [
    (2.0, "Passed in object 2.0 of type 'float', not tf.Tensor or tf.Variable or ExtensionType."),
    ([2.0], "Passed in object 2.0 of type 'float', not tf.Tensor or tf.Variable or ExtensionType."),
    (np.float32(2.0), "Passed in object 2.0 of type 'float32', not tf.Tensor or tf.Variable or ExtensionType."),
    (np.array([1.0, 2.0]), "Passed in object [1. 2.] of type 'ndarray', not tf.Tensor or tf.Variable"),
    (None, "Passed in object None of type 'NoneType', not tf.Tensor or tf.Variable or ExtensionType."),
])
def test_watch_rejects_non_tensors(bad, text):
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError) as info:
            tape.watch(bad)
    assert text in str(info.value)


def test_watch_nested_structure():
    a, b, c = tf.constant(1.0), tf.constant([1.0, 2.0]), tf.constant(3.0)
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch({'a': a, 'l': [b, (c, v)]})
        y = a * tf.reduce_sum(b) * c * v
    assert tape.watched_variables() == (v,)
    ga, gb, gc, gv = tape.gradient(y, [a, b, c, v])
    assert float(ga) == 18.0 and list(gb.numpy()) == [6.0, 6.0] and float(gc) == 6.0 and float(gv) == 9.0


def test_watch_non_float_warns_five_times_per_line_and_gives_none(capfd):
    x = tf.constant(3)
    with tf.GradientTape() as tape:
        for _ in range(8):
            tape.watch(x)
        y = x * x
    err = capfd.readouterr().err
    assert err.count("WARNING:tapeflow:The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32") == 5
    assert tape.gradient(y, x) is None


def test_ops_before_watch_are_not_recorded():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        y = x * x
        g.watch(x)
    assert g.gradient(y, x) is None


# ------------------------------------------------------- variable watching ---
def test_accessed_trainable_variables_are_watched_in_creation_order():
    v1, v2, v3 = tf.Variable(1.0, name='v1'), tf.Variable(2.0, name='v2'), tf.Variable(3.0, name='v3')
    with tf.GradientTape() as tape:
        y = v3 * v2 * v1
    assert [v.name for v in tape.watched_variables()] == ['v1:0', 'v2:0', 'v3:0']
    tape.gradient(y, [v1])
    assert len(tape.watched_variables()) == 3  # a snapshot survives the release


@pytest.mark.parametrize("access", [
    lambda v: v * v, lambda v: tf.identity(v), lambda v: v.value(), lambda v: v.numpy(),
    lambda v: v.read_value(), lambda v: v.assign(2.0)])
def test_what_counts_as_access(access):
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        access(v)
    assert tape.watched_variables() == (v,)


def test_creating_a_variable_is_not_access():
    with tf.GradientTape() as tape:
        tf.Variable(1.0)
    assert tape.watched_variables() == ()


def test_non_trainable_variable_needs_explicit_watch():
    v = tf.Variable(2.0, trainable=False)
    with tf.GradientTape(persistent=True) as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = v ** 3
    assert float(tape.gradient(y, v)) == 12.0


def test_integer_variable_is_watched_silently_but_has_no_gradient(capfd):
    v = tf.Variable(3)
    assert v.trainable
    with tf.GradientTape(persistent=True) as tape:
        y = v * v
    assert tape.watched_variables() == (v,)
    assert capfd.readouterr().err == ""
    assert tape.gradient(y, v) is None
    zero = tape.gradient(y, v, unconnected_gradients='zero')
    assert zero.dtype == tf.int32 and int(zero) == 0


def test_watch_accessed_variables_false():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = a * b
    assert tape.watched_variables() == ()
    assert tape.gradient(y, [a, b]) == [None, None]


def test_gradient_sums_over_reads_and_sees_assign_add():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * 2.0 + v * v
    assert float(tape.gradient(y, v)) == 8.0
    with tf.GradientTape() as tape:
        v.assign_add(2.0)
        y = v * v
    assert float(tape.gradient(y, v)) == 10.0


def test_assign_is_not_differentiable():
    x = tf.constant(2.0)
    v = tf.Variable(0.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        v.assign(x * x)
        y = v * 1.0
    assert tape.gradient(y, x) is None
    assert float(tape.gradient(y, v)) == 1.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        w = tf.Variable(x * 2)
        z = w * 1.0
    assert tape.gradient(z, x) is None


def test_numpy_round_trip_cuts_the_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.constant(x.numpy()) * x
    assert float(tape.gradient(y, x)) == 3.0


def test_reads_are_snapshots():
    v = tf.Variable([1.0, 2.0])
    before = v.value()
    view = tf.reshape(v, [2, 1])
    v.assign([5.0, 6.0])
    assert list(before.numpy()) == [1.0, 2.0]
    assert view.numpy().ravel().tolist() == [1.0, 2.0]


# ------------------------------------------------------- sources/targets ---
def _setup():
    x, w, b = tf.constant(3.0), tf.Variable(2.0), tf.Variable([1.0, 2.0])
    tape = tf.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = x * w + tf.reduce_sum(b * b)
    return tape, x, w, b, y


def test_result_has_the_structure_of_sources():
    tape, x, w, b, y = _setup()
    assert float(tape.gradient(y, w)) == 3.0
    gx, gw, gb = tape.gradient(y, [x, w, b])
    assert (float(gx), float(gw), gb.numpy().tolist()) == (2.0, 3.0, [2.0, 4.0])
    assert isinstance(tape.gradient(y, [w]), list) and len(tape.gradient(y, [w])) == 1
    assert isinstance(tape.gradient(y, (x,)), tuple)
    d = tape.gradient(y, {'x': x, 'w': w})
    assert set(d) == {'x', 'w'} and float(d['w']) == 3.0
    nested = tape.gradient(y, {'a': [x, {'b': b}], 'w': (w,)})
    assert float(nested['a'][0]) == 2.0 and nested['a'][1]['b'].numpy().tolist() == [2.0, 4.0]
    assert isinstance(nested['w'], tuple) and float(nested['w'][0]) == 3.0
    assert [float(g) for g in tape.gradient(y, [x, x])] == [2.0, 2.0]
    assert tape.gradient(y, []) == []


def test_bad_sources_and_targets():
    tape, x, w, b, y = _setup()
    with pytest.raises(TypeError, match="Cannot convert the argument `type_value`: None to a TensorFlow DType."):
        tape.gradient(y, [x, None])
    with pytest.raises(TypeError, match="sources must be tf.Tensor or tf.Variable"):
        tape.gradient(y, 2.0)
    with pytest.raises(TypeError, match=r"Argument `target` should be a list or nested structure.*received None"):
        tape.gradient(None, x)
    with pytest.raises(TypeError, match="targets must be tf.Tensor or tf.Variable"):
        tape.gradient(2.0, x)
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'ZERO'"):
        tape.gradient(y, x, unconnected_gradients='ZERO')


def test_intermediate_source():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = 3 * h
    assert float(tape.gradient(y, h)) == 3.0
    assert [float(g) for g in tape.gradient(y, [x, h])] == [18.0, 3.0]


def test_nested_targets_are_summed():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y1, y2 = x * x, 3 * x
    assert float(tape.gradient([y1, y2], x)) == 9.0
    assert float(tape.gradient({'a': y1, 'b': y2}, x)) == 9.0
    assert float(tape.gradient((y1, [y2, y2]), x)) == 12.0
    assert tape.gradient([], x) is None


def test_target_equals_source_gives_ones():
    x = tf.constant([1.0, 2.0])
    v = tf.Variable(5.0)
    with tf.GradientTape() as tape:
        pass
    assert tape.gradient(x, x).numpy().tolist() == [1.0, 1.0]
    with tf.GradientTape() as tape:
        pass
    assert float(tape.gradient(v, v)) == 1.0


def test_non_scalar_target_uses_implicit_ones():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.stack([x * x, x * x]) * 2.0
    assert tape.gradient(y, x).numpy().tolist() == [8.0, 16.0, 24.0]


def test_unconnected_gradients():
    x, z = tf.constant(3.0), tf.constant([1.0, 2.0])
    w = tf.Variable([1.0, 1.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * x
    assert tape.gradient(y, [x, z])[1] is None
    gx, gz, gw = tape.gradient(y, [x, z, w], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert float(gx) == 6.0 and gz.numpy().tolist() == [0.0, 0.0] and gw.numpy().tolist() == [0.0, 0.0]
    assert repr(tf.UnconnectedGradients.ZERO) == "<UnconnectedGradients.ZERO: 'zero'>"


def test_integer_paths_carry_no_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y_int = tf.cast(x * x, tf.int32)
        y_float = x * x
        back = tf.cast(tf.cast(x, tf.int32), tf.float32)
    assert tape.gradient(y_int, x) is None
    assert float(tape.gradient(y_int, x, unconnected_gradients='zero')) == 0.0
    assert float(tape.gradient([y_float, y_int], x)) == 6.0
    assert tape.gradient(back, x) is None


def test_output_gradients():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x, output_gradients=tf.constant([1.0, 0.0, 2.0])).numpy().tolist() == [2.0, 0.0, 12.0]
    assert tape.gradient(y, x, output_gradients=2.0).numpy().tolist() == [4.0, 8.0, 12.0]
    assert tape.gradient(y, x, output_gradients=np.array([1.0, 1.0, 1.0], np.float32)).numpy().tolist() == [2, 4, 6]
    # Fewer output gradients than targets: the rest default to ones; None means ones.
    assert tape.gradient([y, y], x, output_gradients=[tf.constant([1.0, 0.0, 2.0])]).numpy().tolist() == [4, 4, 18]
    assert tape.gradient([y, y], x, output_gradients=[None, tf.constant([1.0, 0.0, 2.0])]).numpy().tolist() == [4, 4, 18]
    with pytest.raises(ValueError, match="output_gradients\\[0\\] has dtype float64 but target 0 has dtype float32"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0, 1.0], tf.float64))
    with pytest.raises(ValueError):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 0.0]))


def test_gradient_dtype_follows_source():
    x = tf.constant(2.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(x, tf.float32) ** 2
    g = tape.gradient(y, x)
    assert g.dtype == tf.float64 and float(g) == 4.0


def test_complex_gradient_uses_the_conjugate_convention():
    x = tf.constant(1 + 2j, tf.complex64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        r = tf.math.real(x * tf.math.conj(x))
    assert complex(tape.gradient(y, x).numpy()) == 2 - 4j
    assert complex(tape.gradient(r, x).numpy()) == 2 + 4j


# ------------------------------------------------ recording control ---
def test_non_persistent_gradient_inside_context_stops_recording():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        g = tape.gradient(y, x)
        z = g * x  # not recorded any more; the later __exit__ is a no-op
    assert float(g) == 6.0
    with pytest.raises(RuntimeError):
        tape.gradient(z, x)


def test_persistent_gradient_inside_context_records_and_warns(capfd):
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    d2y = tape.gradient(dy, x)
    assert (float(dy), float(d2y)) == (12.0, 12.0)
    assert "Calling GradientTape.gradient on a persistent tape inside its context" in capfd.readouterr().err


def test_stop_recording_only_affects_its_tape_and_errors():
    x = tf.constant(3.0)
    with tf.GradientTape() as g1, tf.GradientTape() as g2:
        g1.watch(x)
        g2.watch(x)
        with g1.stop_recording():
            y = x * x
    assert float(g2.gradient(y, x)) == 6.0
    assert g1.gradient(y, x) is None
    with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not recording."):
        with tf.GradientTape().stop_recording():
            pass
    t = tf.GradientTape(persistent=True)
    with t:
        with t.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording."):
                with t.stop_recording():
                    pass
    with pytest.raises(ValueError, match="Tape is not recording."):
        with t.stop_recording():
            pass


def test_reset():
    x = tf.constant(3.0)
    v = tf.Variable(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        v * 2.0
        y = x * x
        assert t.watched_variables() == (v,)
        t.reset()
        assert t.watched_variables() == ()
        z = x * x * x
    assert t.gradient(z, x) is None
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        z = y * x
    assert float(t.gradient(z, x)) == 9.0
    with pytest.raises(ValueError, match="Tape is not recording."):
        t.reset()


def test_nested_tapes_any_order():
    x = tf.constant(5.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (500.0, 300.0, 120.0)


def test_only_inner_or_only_outer_watching():
    x = tf.constant(5.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            y = x * x
        assert inner.gradient(y, x) is None
    assert float(outer.gradient(y, x)) == 10.0
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        dy = inner.gradient(y, x)
    assert float(dy) == 10.0 and outer.gradient(dy, x) is None


def test_multiple_tapes_in_one_with():
    x = tf.constant(2.0)
    v = tf.Variable(1.0)
    with tf.GradientTape() as t1, tf.GradientTape(persistent=True) as t2:
        t1.watch(x)
        y = x * x * v
        z = y * y
    assert float(t1.gradient(y, x)) == 4.0
    assert t2.gradient(z, x) is None
    assert t2.watched_variables() == (v,) and float(t2.gradient(z, v)) == 32.0


def test_no_gradient_registered_raises_lookup_error_at_gradient_time():
    @tf.RegisterGradient("TapeTestNoGradOp_registered_none")
    def _unused(op, grad):
        return grad
    from tapeflow.framework.recording import execute, register_op
    register_op("TapeTestOpWithoutGradient")(lambda x: x * 2)
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = execute("TapeTestOpWithoutGradient", (x,))
    with pytest.raises(LookupError, match=r"No gradient defined for operation 'TapeTestOpWithoutGradient' "
                                          r"\(op type: TapeTestOpWithoutGradient\)"):
        tape.gradient(y, x)


def test_register_gradient_rules():
    with pytest.raises(TypeError, match="op_type must be a string"):
        tf.RegisterGradient(3)
    with pytest.raises(KeyError, match="Registering two gradient with name 'Square'"):
        tf.RegisterGradient("Square")(lambda op, g: g)
    with pytest.raises(KeyError):
        tf.no_gradient("Mul")


def test_register_gradient_for_a_new_op_and_no_gradient():
    from tapeflow.framework.recording import execute, register_op
    register_op("TapeTestCube")(lambda x: x ** 3)

    @tf.RegisterGradient("TapeTestCube")
    def _cube_grad(op, grad):
        return grad * 3.0 * op.inputs[0] * op.inputs[0]

    register_op("TapeTestConst")(lambda x: x + 1)
    tf.no_gradient("TapeTestConst")
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = execute("TapeTestCube", (x,))
        z = execute("TapeTestConst", (x,))
    assert float(tape.gradient(y, x)) == 12.0
    assert tape.gradient(z, x) is None
    # A user gradient knows nothing of stacked cotangents: jacobian still works (row by row).
    xs = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(xs)
        ys = execute("TapeTestCube", (xs,))
    np.testing.assert_allclose(tape.jacobian(ys, xs).numpy(), np.diag([3.0, 12.0]))


def test_wrong_number_of_gradients_from_a_registered_function():
    from tapeflow.framework.recording import execute, register_op
    register_op("TapeTestTwoGrads")(lambda x: x * 1)
    tf.RegisterGradient("TapeTestTwoGrads")(lambda op, grad: (grad, grad))
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = execute("TapeTestTwoGrads", (x,))
    with pytest.raises(ValueError, match="Num gradients 2 generated for op name: 'TapeTestTwoGrads' do not match num inputs 1"):
        tape.gradient(y, x)


def test_stop_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.stop_gradient(x * x) * x
        s = tf.stop_gradient(x)
    assert float(tape.gradient(y, x)) == 9.0
    assert tape.gradient(s, x) is None
    assert float(tape.gradient(s, x, unconnected_gradients='zero')) == 0.0
    assert tf.stop_gradient([x, x]).numpy().tolist() == [3.0, 3.0]
    assert float(tf.stop_gradient(2.0)) == 2.0


def test_no_recording_without_an_active_tape():
    from tapeflow.framework import recording
    x = tf.constant(2.0)
    y = x * x + tf.sin(x)
    assert not recording.active_tapes() and float(y) == pytest.approx(4 + np.sin(2.0), rel=1e-6)


def test_scalar_output_gradients_broadcast_to_the_target_for_any_op():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x + 1.0
        r = tf.reshape(x, [3, 1])
    assert tape.gradient(y, x, output_gradients=2.0).numpy().tolist() == [2.0, 2.0, 2.0]
    assert tape.gradient(r, x, output_gradients=3.0).numpy().tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(ValueError, match=r"output_gradients\[0\] has shape \(2,\), which does not broadcast"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0]))


def test_a_gradient_function_returning_the_wrong_shape_is_named():
    from tapeflow.framework.recording import execute, register_op
    register_op("TapeTestBadShapeGrad")(lambda x: x * 1)
    tf.RegisterGradient("TapeTestBadShapeGrad")(lambda op, grad: tf.ones([5]))
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = execute("TapeTestBadShapeGrad", (x,))
    with pytest.raises(ValueError, match=r"The gradient function of 'TapeTestBadShapeGrad' returned a gradient of "
                                         r"shape \(5,\) for an input of shape \(2,\)"):
        tape.gradient(y, x)
