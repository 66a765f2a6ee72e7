"""tapeflow against real TensorFlow 2.21 (tests/fixtures/tf_gaps: cases.py run by make_fixture.py) on
scatter_nd / tensor_scatter_nd_* / gather_nd(batch_dims) / embedding_lookup / tf.sparse / tf.initializers:
values, dtypes, shapes and printed text."""
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tf_gaps")
sys.path.insert(0, HERE)
from cases import CASES  # noqa: E402

with open(os.path.join(HERE, "tf_gaps.json")) as f:
    EXPECTED = json.load(f)["cases"]


def assert_same(got, expected, where):
    if "str" in expected:
        assert isinstance(got, str), where
        assert got == expected["str"], where
    elif "list" in expected:
        assert len(got) == len(expected["list"]), where
        for i, (g, e) in enumerate(zip(got, expected["list"])):
            assert_same(g, e, f"{where}[{i}]")
    else:
        assert got.dtype.name == expected["dtype"], where
        assert list(got.shape) == expected["shape"], where
        np.testing.assert_array_equal(np.asarray(got), np.array(expected["values"], expected["dtype"]),
                                      err_msg=where)


def test_every_case_has_a_tensorflow_result():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_tensorflow(name):
    assert_same(CASES[name](tf), EXPECTED[name], name)
