"""Lists and dicts attached to a Checkpoint get deferred restoration; write() saves no save_counter until one
exists. Expected values are what TensorFlow 2.21 does for the same calls."""
import pytest

import tapeflow as tf


def _saved_list(tmp_path):
    return tf.train.Checkpoint(listed=[tf.Variable(1.0), tf.Variable(2.0)]).write(str(tmp_path / "list"))


def test_values_reach_items_appended_to_a_list_set_after_restore(tmp_path):
    path = _saved_list(tmp_path)
    restore = tf.train.Checkpoint()
    restore.restore(path)
    restore.listed = []
    first = tf.Variable(0.0)
    restore.listed.append(first)
    assert first.numpy() == 1.0
    second = tf.Variable(0.0)
    restore.listed += [second]
    assert second.numpy() == 2.0


@pytest.mark.parametrize("fill, restored", [("extend", 1.0), ("setitem", 1.0), ("insert", 0.0)])
def test_adding_an_item_restores_it_as_tensorflow_does(tmp_path, fill, restored):
    path = _saved_list(tmp_path)
    restore = tf.train.Checkpoint()
    restore.restore(path)
    v = tf.Variable(0.0)
    if fill == "extend":
        restore.listed = []
        restore.listed.extend([v])
    elif fill == "setitem":
        restore.listed = [None]
        restore.listed[0] = v
    else:
        restore.listed = []
        restore.listed.insert(0, v)     # TensorFlow's ListWrapper does not restore inserted items
    assert v.numpy() == restored


def test_values_reach_a_dict_filled_after_restore(tmp_path):
    saved = tf.train.Checkpoint()
    saved.d = {"a": tf.Variable(3.0), "b": tf.Variable(4.0)}
    path = saved.save(str(tmp_path / "d"))
    restore = tf.train.Checkpoint()
    status = restore.restore(path)
    restore.d = {}
    a, b = tf.Variable(0.0), tf.Variable(0.0)
    restore.d["a"] = a
    restore.d.update(b=b)
    assert (a.numpy(), b.numpy()) == (3.0, 4.0)
    status.assert_consumed()


def test_a_list_changed_behind_the_checkpoint_refuses_to_save(tmp_path):
    ckpt = tf.train.Checkpoint()
    items = []
    ckpt.listed = items
    items.append(tf.Variable(1.0))
    with pytest.raises(ValueError, match="modified outside the wrapper"):
        ckpt.write(str(tmp_path / "x"))


def _keys(path):
    return [name for name, _ in tf.train.list_variables(path)]


def test_write_saves_the_save_counter_only_once_it_exists(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    assert _keys(ckpt.write(str(tmp_path / "a"))) == ["_CHECKPOINTABLE_OBJECT_GRAPH", "v/.ATTRIBUTES/VARIABLE_VALUE"]
    reader = tf.train.Checkpoint(v=tf.Variable(0.0))
    reader.read(str(tmp_path / "a")).assert_consumed()      # read() does not create the counter
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" not in _keys(reader.write(str(tmp_path / "b")))
    assert int(ckpt.save_counter.numpy()) == 0              # reading the property creates it
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" in _keys(ckpt.write(str(tmp_path / "c")))
    restorer = tf.train.Checkpoint(v=tf.Variable(0.0))
    restorer.restore(str(tmp_path / "a"))                   # restore() does
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" in _keys(restorer.write(str(tmp_path / "d")))


def test_a_save_counter_read_before_it_exists_is_restored_when_created(tmp_path):
    saver = tf.train.Checkpoint(v=tf.Variable(1.0))
    saver.save(str(tmp_path / "s"))
    path = saver.save(str(tmp_path / "s"))
    reader = tf.train.Checkpoint(v=tf.Variable(0.0))
    reader.read(path)
    assert int(reader.save_counter.numpy()) == 2
    restorer = tf.train.Checkpoint(v=tf.Variable(0.0))
    restorer.restore(path).assert_consumed()
    assert int(restorer.save_counter.numpy()) == 2


class _Holder(tf.Module):
    pass


def test_a_module_gets_attributes_and_list_items_set_after_restore(tmp_path):
    saved = _Holder()
    saved.listed = [tf.Variable(5.0)]
    saved.v = tf.Variable(7.0)
    path = tf.train.Checkpoint(m=saved).save(str(tmp_path / "m"))
    module = _Holder()
    status = tf.train.Checkpoint(m=module).restore(path)
    module.listed = []
    item = tf.Variable(0.0)
    module.listed.append(item)
    module.v = tf.Variable(0.0)
    assert (item.numpy(), module.v.numpy()) == (5.0, 7.0)
    status.assert_consumed()
