"""Fast paths taken by stacked (jacobian) cotangents agree with the general paths,
and freed array memory is reused without page faults."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tapeflow.framework.recording import forward_of

GRAD_OPS = ["ReluGrad", "Relu6Grad", "LeakyReluGrad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad"]


@pytest.mark.parametrize("op_type", GRAD_OPS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_stacked_activation_gradients_equal_the_broadcast_kernel(op_type, dtype):
    rng = np.random.default_rng(0)
    g = rng.normal(size=(5, 3, 4)).astype(dtype)
    x = (rng.normal(size=(3, 4)) * 4).astype(dtype)
    forward, _ = forward_of(op_type)
    params = {"alpha": 0.3} if op_type == "LeakyReluGrad" else {}
    stacked = forward(g, x, **params)
    rows = np.stack([forward(g[i], x, **params) for i in range(5)])
    assert stacked.shape == g.shape and stacked.dtype == dtype
    np.testing.assert_allclose(stacked, rows, rtol=4 * np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_stack_times_matrix_equals_the_batched_product(transpose_b):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 3, 5, 6)).astype(np.float32)
    b = rng.normal(size=(7, 6) if transpose_b else (6, 7)).astype(np.float32)
    forward, _ = forward_of("MatMul")
    out = forward(a, b, transpose_b=transpose_b)
    expected = np.einsum("...ij,jk->...ik", a.astype(np.float64), (b.T if transpose_b else b).astype(np.float64))
    assert out.shape == (4, 3, 5, 7)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # a non-contiguous stack takes numpy's own loop and gives the same result
    np.testing.assert_allclose(forward(np.swapaxes(a, 0, 1), b, transpose_b=transpose_b),
                               np.swapaxes(out, 0, 1), rtol=1e-6, atol=1e-6)


_FAULTS_SCRIPT = textwrap.dedent("""
    import resource, numpy as np
    import tapeflow
    def step():  # a few 1 MiB intermediates alive at once, then all freed, like an eager step
        arrays = [np.ones(1 << 18, np.float32) for _ in range(6)]
        del arrays
    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _page_faults(env):
    out = subprocess.run([sys.executable, "-c", _FAULTS_SCRIPT], capture_output=True, text=True, check=True,
                         env=env)
    return int(out.stdout)


def _clean_env(**settings):
    import os
    env = {k: v for k, v in os.environ.items()
           if k not in ("TAPEFLOW_KEEP_FREED_MEMORY", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                        "GLIBC_TUNABLES")}
    env.update(settings)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the malloc tuning is glibc-specific")
def test_freed_arrays_are_reused_without_page_faults():
    assert _page_faults(_clean_env()) < 50   # at most a few stray faults, not 256 per array
    for off in ("0", "false", "Off"):        # opted out: glibc returns the memory and faults it in anew
        assert _page_faults(_clean_env(TAPEFLOW_KEEP_FREED_MEMORY=off)) >= 50 * 256


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the malloc tuning is glibc-specific")
def test_users_own_malloc_settings_are_left_alone():
    from tapeflow.framework import allocator
    code = "from tapeflow.framework.allocator import keep_freed_memory; print(keep_freed_memory())"
    for setting in ({"MALLOC_TRIM_THRESHOLD_": "0"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"}):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env=_clean_env(**setting))
        assert out.stdout.strip() == "False"
    assert allocator.MMAP_THRESHOLD <= 32 << 20  # glibc refuses larger values on 64-bit


def test_stacked_relu_gradients_equal_the_kernel_on_inf_and_nan_cotangents():
    g = np.array([[np.inf, 1.0, np.nan, 2.0]], np.float32)
    y = np.array([0.0, 1.0, -1.0, 7.0], np.float32)
    for op_type in ("ReluGrad", "Relu6Grad"):
        forward, _ = forward_of(op_type)
        np.testing.assert_array_equal(forward(g, y), forward(g[0], y)[None])


def test_jacobian_of_relu_with_infinite_outer_slope_matches_the_gradient():
    import tapeflow as tf
    x = tf.constant([-1.0, 2.0, -3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sqrt(tf.nn.relu(x))        # d sqrt/du is inf at u = 0
    np.testing.assert_array_equal(np.diag(tape.jacobian(y, x).numpy()), tape.gradient(y, x).numpy())


def test_stack_times_matrix_with_empty_inner_dimension():
    forward, _ = forward_of("MatMul")
    out = forward(np.zeros((2, 3, 0), np.float32), np.zeros((0, 5), np.float32))
    assert out.shape == (2, 3, 5) and not out.any()
