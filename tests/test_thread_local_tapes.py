"""Tapes, accumulators and tracing are per thread, as in TensorFlow (issue 10.5)."""
import sys
import threading

import numpy as np

import tapeflow as tf
from tapeflow.framework import recording


def _run_in_threads(*targets):
    errors = []

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as e:   # reported by the test thread
                errors.append(e)
        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)     # make the threads interleave op by op
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]


def test_another_threads_ops_are_not_recorded_on_my_tape():
    entered, done = threading.Event(), threading.Event()
    x = tf.constant(3.0)
    seen = {}

    def recorder():
        with tf.GradientTape() as tape:
            tape.watch(x)
            entered.set()
            done.wait(5)
            y = x * x
        seen["records"] = len(tape._tape.records)
        seen["grad"] = float(tape.gradient(y, x))

    def other():
        entered.wait(5)
        for _ in range(50):       # would land on the recorder's tape if tapes were shared
            x * 2.0 + 1.0
        seen["other_sees_tapes"] = bool(recording.active_tapes())
        done.set()

    _run_in_threads(recorder, other)
    assert seen == {"records": 1, "grad": 6.0, "other_sees_tapes": False}


def _train(seed, steps=40):
    """A small model trained with a GradientTape loop whose step is a tf.function (traced in the
    thread, so tracing state must be per thread too); returns its final weights."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 4)).astype("float32")
    y = (x @ rng.standard_normal((4, 1)) + 0.1).astype("float32")
    w = tf.Variable(rng.standard_normal((4, 8)).astype("float32") * 0.3)
    b = tf.Variable(np.zeros(8, "float32"))
    v = tf.Variable(rng.standard_normal((8, 1)).astype("float32") * 0.3)
    optimizer = tf.keras.optimizers.Adam(0.01)

    def step(x, y):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(tf.matmul(x, w) + b)
            loss = tf.reduce_mean(tf.square(tf.matmul(hidden, v) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b, v]), [w, b, v]))
        return loss

    traced = tf.function(step)
    for i in range(steps):     # eager steps interleave with the other thread's traced ones
        (traced if i % 2 else step)(x, y)
    return [t.numpy() for t in (w, b, v)]


def test_two_threads_training_two_models_match_sequential_runs():
    expected = [_train(1), _train(2)]
    results = {}

    def trainer(seed):
        return lambda: results.__setitem__(seed, _train(seed))

    _run_in_threads(trainer(1), trainer(2))
    for seed, want in zip((1, 2), expected):
        for got, ref in zip(results[seed], want):
            np.testing.assert_array_equal(got, ref)


def test_a_thread_tracing_a_function_does_not_capture_another_threads_ops():
    started, release = threading.Event(), threading.Event()

    @tf.function
    def slow(x):
        started.set()
        release.wait(5)        # another thread runs eager ops while this one traces
        return x * 2.0

    eager_results = []

    def eager():
        started.wait(5)
        eager_results.append(float(tf.constant(5.0) + 1.0))   # would become a graph node if tracing leaked
        release.set()

    out = {}
    _run_in_threads(lambda: out.__setitem__("y", float(slow(tf.constant(3.0)))), eager)
    assert out["y"] == 6.0 and eager_results == [6.0]


def test_nothing_stays_installed_after_threads_finish():
    _run_in_threads(lambda: _train(3, steps=2), lambda: _train(4, steps=2))
    assert recording.current() is None
