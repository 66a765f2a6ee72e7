"""A loaded tf.function finds its trace by the call's structure, Python values included, as TensorFlow 2.21's
loaded functions do (the 'Introduction to modules' guide calls a saved module with a nested Python list)."""
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError


class Product(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0], [2.0], [3.0]])

    @tf.function
    def __call__(self, x):
        return tf.matmul(x, self.w)


def _saved(tmp_path, *calls):
    module = Product()
    for call in calls:
        module(call)
    tf.saved_model.save(module, str(tmp_path / "m"))
    return tf.saved_model.load(str(tmp_path / "m"))


def test_a_trace_of_a_python_list_is_found_by_the_same_list(tmp_path):
    loaded = _saved(tmp_path, [[2.0, 2.0, 2.0]], [[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(loaded([[2.0, 2.0, 2.0]]).numpy(), [[12.0]])
    np.testing.assert_allclose(loaded([[1.0, 0.0, 0.0]]).numpy(), [[1.0]])
    with pytest.raises(ValueError, match="Could not find a saved trace"):
        loaded([[3.0, 2.0, 2.0]])          # another literal value: TensorFlow finds no trace either
    with pytest.raises(ValueError, match="Could not find a saved trace"):
        loaded(tf.constant([[2.0, 2.0, 2.0]]))


def test_a_tensor_trace_accepts_values_convertible_to_its_spec(tmp_path):
    loaded = _saved(tmp_path, tf.constant([[2.0, 2.0, 2.0]]))
    np.testing.assert_allclose(loaded(tf.constant([[1.0, 1.0, 1.0]])).numpy(), [[6.0]])
    np.testing.assert_allclose(loaded([[2.0, 2.0, 2.0]]).numpy(), [[12.0]])
    np.testing.assert_allclose(loaded(np.array([[0.0, 1.0, 0.0]], np.float32)).numpy(), [[2.0]])


class Scaled(tf.Module):
    @tf.function
    def f(self, x, scale=2.0, mode="a"):
        return x * scale


def test_python_keyword_values_pick_their_trace(tmp_path):
    module = Scaled()
    module.f(tf.constant(1.0))
    module.f(tf.constant(1.0), scale=3.0)
    tf.saved_model.save(module, str(tmp_path / "s"))
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    assert float(loaded.f(tf.constant(1.0))) == 2.0
    assert float(loaded.f(tf.constant(2.0), scale=3.0)) == 6.0
    with pytest.raises(ValueError, match="Could not find a saved trace"):
        loaded.f(tf.constant(1.0), scale=4.0)


@pytest.mark.parametrize("structure, problem", [
    ({"list": []}, "expected \\[positional arguments, keyword arguments\\]"),
    ({"list": [{"list": [{"tensor": 5}]}, {"dict": {}}]}, "tensor index 5"),
    ({"list": [{"list": [{"literal": {"a": 1}}]}, {"dict": {}}]}, "a literal must be"),
    ({"list": [{"list": [{"code": "x"}]}, {"dict": {}}]}, "unknown entry 'code'"),
    ({"list": [{"list": [{"tensor": 0}, {"tensor": 0}]}, {"dict": {}}]}, "tensor index 0"),
])
def test_a_corrupt_input_structure_is_a_file_format_error(tmp_path, structure, problem):
    _saved(tmp_path, tf.constant([[2.0, 2.0, 2.0]]))
    path = tmp_path / "m" / "saved_model.json"
    document = json.loads(path.read_text())
    entry = next(e for e in document["objects"] if e["kind"] == "module" and e["functions"])
    entry["functions"]["__call__"]["concretes"][0]["input_structure"] = structure
    path.write_text(json.dumps(document))
    with pytest.raises(FileFormatError, match=problem):
        tf.saved_model.load(str(tmp_path / "m"))
