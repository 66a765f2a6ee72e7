"""A Variable owns its storage and its copy-on-write (issue 12): reads are snapshots, and an in-place
update copies first exactly while some read, or a view derived from one, is still alive."""
import gc
import pathlib
import weakref

import numpy as np
import pytest

import tapeflow as tf

SGD = tf.keras.optimizers.SGD


def _step(w):
    SGD(1.0).apply_gradients([(tf.constant(np.ones(w.shape, np.float32)), w)])


def test_an_update_with_no_read_alive_writes_in_place():
    w = tf.Variable(np.zeros((4, 3), np.float32))
    _step(w)
    storage = weakref.ref(w._storage)
    for _ in range(3):
        float(tf.reduce_sum(w))     # reads that die before the next update
        _step(w)
    assert w._storage is storage()
    np.testing.assert_array_equal(w.numpy(), -4.0)


@pytest.mark.parametrize("keep", ["tensor", "op view", "numpy view", "numpy slice of a view"])
def test_reads_and_views_derived_from_them_keep_their_values(keep):
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    if keep == "tensor":
        kept = tf.convert_to_tensor(w)
    elif keep == "op view":
        kept = tf.reshape(w, (12,))[2:5]          # outputs of ops that return views of the read
    elif keep == "numpy view":
        kept = np.asarray(w)
    else:
        kept = np.asarray(w)[1:, ::2]             # its base collapses to the snapshot, which stays alive
    gc.collect()
    before = np.array(kept)
    _step(w)
    np.testing.assert_array_equal(np.asarray(kept), before)
    np.testing.assert_array_equal(w.numpy(), np.arange(12, dtype=np.float32).reshape(4, 3) - 1)


def test_reads_are_read_only():
    w = tf.Variable(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(w)[0] = 1.0
    copy = np.array(w)               # a copy is the user's own
    copy[0] = 1.0
    assert w.numpy().tolist() == [0.0, 0.0, 0.0]


def test_a_persistent_tape_keeps_the_values_it_recorded_across_updates():
    w = tf.Variable(np.array([2.0, 3.0], np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(w * w)
    first = tape.gradient(y, w).numpy()
    _step(w)
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), first)


def test_no_reference_counting_and_no_reach_through_in_library_code():
    root = pathlib.Path(tf.__file__).resolve().parent.parent
    offenders = []
    for package in ("tapeflow", "layers", "optimizers", "saving"):
        for path in (root / package).rglob("*.py"):
            if "getrefcount" in path.read_text():
                offenders.append(str(path.relative_to(root)))
    assert offenders == []
