"""Structural guards of the fast path: no tape work without a tape, nothing kept after gradient()."""
import gc
import weakref

import numpy as np

import tapeflow as tf
from tapeflow.framework import recording


class RecordCounter:
    """Counts OpRecord allocations while installed."""

    def __init__(self, monkeypatch):
        self.count = 0
        original = recording.OpRecord.__init__

        def counting_init(record_self, *args, **kwargs):
            self.count += 1
            original(record_self, *args, **kwargs)
        monkeypatch.setattr(recording.OpRecord, "__init__", counting_init)


def _workload():
    x = tf.constant(np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32))
    w = tf.Variable(np.ones((4, 2), np.float32))
    y = tf.nn.softmax(tf.nn.relu(x @ w + 1.0))
    return tf.reduce_sum(tf.square(y) + tf.math.log1p(tf.exp(y)))


def test_no_record_is_allocated_without_an_active_tape(monkeypatch):
    counter = RecordCounter(monkeypatch)
    _workload()
    assert counter.count == 0
    assert not recording.active_tapes() and not recording.active_accumulators()


def test_no_record_is_allocated_for_ops_on_unwatched_tensors(monkeypatch):
    counter = RecordCounter(monkeypatch)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        _workload()
    assert counter.count == 0 and tape._tape.records == []


def test_records_are_allocated_once_per_op_and_shared_between_tapes(monkeypatch):
    counter = RecordCounter(monkeypatch)
    x = tf.constant(2.0)
    with tf.GradientTape() as t1, tf.GradientTape() as t2:
        t1.watch(x)
        t2.watch(x)
        y = x * x + 1.0
    assert counter.count == 2
    assert [r.type for r in t1._tape.records] == ["Mul", "AddV2"]
    assert t1._tape.records[0] is t2._tape.records[0]
    assert float(t1.gradient(y, x)) == 4.0


def test_a_non_persistent_tape_frees_every_intermediate_after_gradient():
    x = tf.Variable(np.ones((50, 50), np.float32))
    with tf.GradientTape() as tape:
        hidden = tf.tanh(x @ x)
        squared = hidden * hidden
        loss = tf.reduce_sum(squared)
    refs = [weakref.ref(hidden), weakref.ref(squared)]
    del hidden, squared
    gc.collect()
    assert all(r() is not None for r in refs)  # the tape still holds them
    tape.gradient(loss, x)
    gc.collect()
    assert all(r() is None for r in refs) and tape._tape is None


def test_a_persistent_tape_keeps_its_intermediates_until_deleted():
    x = tf.Variable(np.ones((5, 5), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        hidden = tf.tanh(x @ x)
        loss = tf.reduce_sum(hidden)
    ref = weakref.ref(hidden)
    del hidden
    tape.gradient(loss, x)
    gc.collect()
    assert ref() is not None
    del tape
    gc.collect()
    assert ref() is None
