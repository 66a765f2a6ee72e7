"""String tensors and tf.strings against real TensorFlow 2.21 (fixtures/strings/strings_tf.json,
written by make_strings_fixture.py from the cases in string_cases.py)."""
import contextlib
import io
import json
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

_HERE = os.path.join(os.path.dirname(__file__), "fixtures", "strings")
sys.path.insert(0, _HERE)
from string_cases import CASES, PRINT_CASES, run  # noqa: E402

with open(os.path.join(_HERE, "strings_tf.json")) as _f:
    _FIXTURE = json.load(_f)


def test_fixture_covers_every_case():
    assert set(_FIXTURE["cases"]) == set(CASES)
    assert set(_FIXTURE["prints"]) == set(PRINT_CASES)


def _close(ours, theirs):
    """Equal, with float32 values compared as float32 (the fixture stores them as Python floats)."""
    if isinstance(theirs, float) and isinstance(ours, float):
        return np.float32(ours) == np.float32(theirs) or (np.isnan(ours) and np.isnan(theirs))
    if isinstance(theirs, list) and isinstance(ours, list):
        return len(ours) == len(theirs) and all(_close(a, b) for a, b in zip(ours, theirs))
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return ours.keys() == theirs.keys() and all(_close(ours[k], theirs[k]) for k in theirs)
    return ours == theirs and type(ours) is type(theirs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    ours = run(tf, CASES[name])
    theirs = _FIXTURE["cases"][name]
    if "error" in theirs:
        expected = {"InvalidArgumentError": "InvalidArgumentError"}.get(theirs["error"], theirs["error"])
        assert ours == {"error": expected}
    else:
        assert _close(ours, theirs), (ours, theirs)


@pytest.mark.parametrize("name", sorted(PRINT_CASES))
def test_print_matches_tensorflow(name):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tf.print(*PRINT_CASES[name](tf), output_stream=sys.stdout)
    expected = bytes.fromhex(_FIXTURE["prints"][name]).decode("utf-8")
    assert out.getvalue() == expected


def test_string_function_retraces_nothing_and_prints_signature():
    """Inside tf.function `a + a` is an op of the graph: a second call with another string gives its own
    result (not the trace's), and the concrete signature prints."""
    double = tf.function(lambda a: a + a)
    assert double(tf.constant("a")).numpy() == b"aa"
    assert double(tf.constant("xy")).numpy() == b"xyxy"
    assert double.experimental_get_tracing_count() == 1
    text = double.pretty_printed_concrete_signatures()
    assert "TensorSpec(shape=(), dtype=tf.string, name=None)" in text


def test_string_ops_have_no_gradient():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        s = tf.strings.as_string(x)
        y = tf.strings.to_number(s) * x
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 2.0]   # only the direct path to x


def test_traced_to_number_raises_at_run_time_not_at_trace():
    parse = tf.function(lambda s: tf.strings.to_number(s, out_type=tf.int32))
    assert parse(tf.constant(["7", "8"])).numpy().tolist() == [7, 8]
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert string: x"):
        parse(tf.constant(["1", "x"]))


def test_string_ops_save_and_load_in_a_saved_model(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def clean(self, s):
            words = tf.strings.regex_replace(tf.strings.lower(s), "[^a-z ]", "")
            return tf.strings.join([words, tf.strings.as_string(tf.strings.length(words))], separator=":")

    m = M()
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    got = loaded.clean(tf.constant(["Hello, World!", "ÀB"]))
    assert got.numpy().tolist() == m.clean(tf.constant(["Hello, World!", "ÀB"])).numpy().tolist()
    assert got.numpy().tolist() == [b"hello world:11", b"b:1"]   # lower() is ASCII-only: "\xc3\x80" is removed


def test_invalid_regex_is_a_clear_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid pattern"):
        tf.strings.regex_replace(["a"], "(", "x")


def test_lazy_import():
    import subprocess
    code = "import sys, tapeflow; assert 'tapeflow.strings' not in sys.modules; tapeflow.strings.split; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_saved_model_with_a_bad_pattern_is_refused(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def clean(self, s):
            return tf.strings.regex_replace(s, "a", "b")

    tf.saved_model.save(M(), str(tmp_path / "m"))
    path = tmp_path / "m" / "saved_model.json"
    document = json.loads(path.read_text())
    node = document["objects"][0]["functions"]["clean"]["concretes"][0]["graph"]["nodes"][0]
    assert node["op"] == "StaticRegexReplace"
    node["attrs"]["pattern"] = "(("
    path.write_text(json.dumps(document))
    with pytest.raises(tf.saving.FileFormatError, match=r"StaticRegexReplace\).attrs.pattern: '\(\(' is not a valid"):
        tf.saved_model.load(str(tmp_path / "m"))
