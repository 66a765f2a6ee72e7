"""tf.config, tf.device and tf.debugging (issue 14, smaller namespaces)."""
import numpy as np
import pytest

import tapeflow as tf


def test_the_cpu_is_the_only_device():
    cpus = tf.config.list_physical_devices("CPU")
    assert cpus == tf.config.list_physical_devices() and len(cpus) == 1
    assert cpus[0].device_type == "CPU" and cpus[0].name == "/physical_device:CPU:0"
    assert tf.config.list_physical_devices("GPU") == [] and tf.config.list_logical_devices("GPU") == []
    assert tf.config.list_logical_devices()[0].name == "/device:CPU:0"
    tf.config.set_visible_devices([], "GPU")               # hiding GPUs is fine
    with pytest.raises(ValueError, match="CPU cannot be hidden"):
        tf.config.set_visible_devices([], "CPU")
    with pytest.raises(ValueError, match="memory growth"):
        tf.config.experimental.set_memory_growth(cpus[0], True)


@pytest.mark.parametrize("spec", ["/CPU:0", "cpu:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0",
                                  "/GPU:0", "GPU", "/device:GPU:1"])
def test_device_scopes_run_on_the_cpu(spec):
    with tf.device(spec):
        y = tf.constant([1.0, 2.0]) * 2.0
    assert y.numpy().tolist() == [2.0, 4.0] and y.device.endswith("device:CPU:0")


def test_gpu_placement_without_soft_placement_is_a_clear_error():
    tf.config.set_soft_device_placement(False)
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not satisfy device specification '/GPU:0'"):
            with tf.device("/GPU:0"):
                pass
        with tf.device("/CPU:0"):
            pass
    finally:
        tf.config.set_soft_device_placement(True)
    with pytest.raises(ValueError, match="Unrecognized device specification"):
        with tf.device("/FPGA:0"):
            pass


def test_threading_limits_are_applied_and_reported():
    import numba
    before = numba.get_num_threads()
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        assert tf.config.threading.get_intra_op_parallelism_threads() == 1 and numba.get_num_threads() == 1
        from threadpoolctl import threadpool_info
        assert all(info["num_threads"] == 1 for info in threadpool_info() if info["user_api"] == "blas")
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(0)
    assert numba.get_num_threads() == before and tf.config.threading.get_intra_op_parallelism_threads() == 0


def test_run_functions_eagerly_runs_the_python_body_each_call():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return x + 1

    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        f(tf.constant(1)), f(tf.constant(2))
        assert len(calls) == 2
    finally:
        tf.config.run_functions_eagerly(False)
    f(tf.constant(1)), f(tf.constant(2))
    assert len(calls) == 3       # one trace serves both calls


# -- tf.debugging ---------------------------------------------------------------------------------
def test_value_assertions_pass_and_fail_with_tensorflows_error_type():
    tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))
    tf.debugging.assert_less(tf.constant([1.0]), 2.0)
    tf.debugging.assert_positive(tf.constant([0.5, 1.0]))
    tf.debugging.assert_near(tf.constant(1.0), tf.constant(1.0 + 1e-7))
    cases = [
        lambda: tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="mismatch"),
        lambda: tf.debugging.assert_greater(tf.constant([1.0, 3.0]), 2.0),
        lambda: tf.debugging.assert_non_negative(tf.constant([-1])),
        lambda: tf.debugging.assert_near(tf.constant(1.0), tf.constant(1.001)),
        lambda: tf.debugging.assert_all_finite(tf.constant([np.inf]), "finite please"),
    ]
    for case in cases:
        with pytest.raises(tf.errors.InvalidArgumentError):
            case()


def test_assertions_inside_a_function_check_every_call():
    @tf.function
    def safe_log(x):
        tf.debugging.assert_positive(x, message="log of a non-positive number")
        return tf.math.log(x)

    assert float(safe_log(tf.constant(1.0))) == 0.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="log of a non-positive number"):
        safe_log(tf.constant(-1.0))     # the same trace, new values
    with tf.GradientTape() as tape:    # the recorded replay checks too
        x = tf.constant(2.0)
        tape.watch(x)
        y = safe_log(x)
    assert float(tape.gradient(y, x)) == 0.5


def test_check_numerics_names_nan_and_inf_and_passes_gradients():
    with pytest.raises(tf.errors.InvalidArgumentError, match="tag : Tensor had NaN values"):
        tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "tag")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Inf values"):
        tf.debugging.check_numerics(tf.constant([np.inf]), "tag")
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.debugging.check_numerics(x * x, "square"))
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]


def test_enable_check_numerics_names_the_op_that_made_a_nan():
    tf.debugging.enable_check_numerics()
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match='op "Log"'):
            tf.math.log(tf.constant([-1.0]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Detected Infinity or NaN"):
            tf.constant([0.0]) / tf.constant([0.0])        # the inlined arithmetic path checks too
    finally:
        tf.debugging.disable_check_numerics()
    assert np.isnan(tf.math.log(tf.constant([-1.0])).numpy()[0])


def test_static_shape_and_rank_assertions():
    x, y = tf.zeros((2, 3)), tf.zeros((3, 4))
    tf.debugging.assert_shapes([(x, ("N", "D")), (y, ("D", 4))])
    tf.debugging.assert_rank(x, 2)
    with pytest.raises(ValueError, match="has size 2, expected 3"):
        tf.debugging.assert_shapes([(x, ("N", "D")), (tf.zeros((2, 2)), ("D", None))])
    with pytest.raises(ValueError, match="must have rank 3"):
        tf.debugging.assert_rank(x, 3)
    with pytest.raises(TypeError, match="must be of type int32"):
        tf.debugging.assert_type(x, tf.int32)


def test_assertions_do_not_run_on_a_traces_placeholder_values():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def positive_sum(x):            # traced on placeholders filled with 0: the check must wait for values
        tf.debugging.assert_positive(x)
        return tf.reduce_sum(tf.debugging.check_numerics(tf.cast(x, tf.float32), "sum"))

    assert float(positive_sum(tf.constant([1, 2]))) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError):
        positive_sum(tf.constant([0, 2]))
