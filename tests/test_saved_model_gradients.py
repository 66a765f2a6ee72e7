"""Custom gradients loaded from a SavedModel belong to that model (issue 10.3, 11.7).

A gradient saved with ``experimental_custom_gradients=True`` is bound to the functions
loaded with it: loading never makes another file's functions differentiable, never
blocks a later ``tf.RegisterGradient`` of the traced name, and lives only as long as the
loaded functions (or the tapes that recorded them). Second derivatives through a loaded
gradient match the closed form and finite differences.
"""
import gc
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework import registry

GUIDE = textwrap.dedent("""
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)
""")

# Differentiates each loaded directory in the order given: prints "<dir> gradient <g>" or "<dir> LookupError <msg>".
LOAD_AND_DIFFERENTIATE = textwrap.dedent("""
    import sys
    import tapeflow as tf
    v = tf.Variable(2.0)
    loaded = {path: tf.saved_model.load(path) for path in sys.argv[1:]}
    for path, model in loaded.items():
        with tf.GradientTape() as tape:
            y = model.call_custom_grad(v * v)
        try:
            print(path, "gradient", float(tape.gradient(y, v)))
        except LookupError as err:
            print(path, "LookupError", err)
""")


def _run(script, *args):
    result = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def guide_models(tmp_path_factory):
    """The guide's module saved twice from one trace: with its custom gradient, and without."""
    namespace = {"tf": tf}
    exec(compile(GUIDE, "guide_model", "exec"), namespace)  # the test's own source, not a file's
    module = namespace["MyModule"]()
    root = tmp_path_factory.mktemp("guide")
    for name, keep in (("with", True), ("without", False)):
        tf.saved_model.save(module, str(root / name),
                            options=tf.saved_model.SaveOptions(experimental_custom_gradients=keep))
    return root / "with", root / "without"


def _gradient_op_types(directory):
    document = json.loads((directory / "saved_model.json").read_text())
    nodes = document["objects"][0]["functions"]["call_custom_grad"]["concretes"][0]["graph"]["nodes"]
    return [n["attrs"]["_gradient_op_type"] for n in nodes if "_gradient_op_type" in n["attrs"]]


def test_both_files_name_the_same_traced_gradient(guide_models):
    with_dir, without_dir = guide_models
    names = _gradient_op_types(with_dir)
    assert len(names) == 1 and names == _gradient_op_types(without_dir)
    saved = json.loads((with_dir / "saved_model.json").read_text())["custom_gradients"]
    assert list(saved) == names
    assert json.loads((without_dir / "saved_model.json").read_text())["custom_gradients"] == {}


@pytest.mark.parametrize("order", [("with", "without"), ("without", "with")])
def test_a_loaded_gradient_does_not_make_another_file_differentiable(guide_models, order):
    dirs = dict(zip(("with", "without"), guide_models))
    out = _run(LOAD_AND_DIFFERENTIATE, *(dirs[name] for name in order)).splitlines()
    results = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in out}
    assert results[str(dirs["with"])] == "gradient 2.0"   # clip_by_norm(4.0, 0.5) * dv^2/dv at v=2
    assert results[str(dirs["without"])].startswith(
        "LookupError No gradient defined for operation 'IdentityN' (op type: IdentityN)")


REGISTER_AFTER_LOAD = textwrap.dedent("""
    import sys
    import tapeflow as tf
    with_dir, without_dir, name = sys.argv[1:]
    with_model = tf.saved_model.load(with_dir)

    @tf.RegisterGradient(name)
    def _triple(op, dy, _):         # IdentityN(output, x): no gradient for the output's value, 3 dy for x
        return [None, 3.0 * dy]

    without_model = tf.saved_model.load(without_dir)
    v = tf.Variable(2.0)
    for label, model in (("with", with_model), ("without", without_model)):
        with tf.GradientTape() as tape:
            y = model.call_custom_grad(v * v)
        print(label, float(tape.gradient(y, v)))
""")


def test_loading_does_not_block_a_later_register_gradient_of_the_traced_name(guide_models):
    with_dir, without_dir = guide_models
    (name,) = _gradient_op_types(with_dir)
    out = _run(REGISTER_AFTER_LOAD, with_dir, without_dir, name).split()
    # The file's own gradient still serves the model loaded with it; the user's registration
    # serves the model saved without one, as in a TensorFlow process: 3 * d(v*v)/dv = 12.
    assert out == ["with", "2.0", "without", "12.0"]


CUBE = textwrap.dedent("""
    @tf.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 2.0 * x

    @tf.custom_gradient
    def cube(x):
        def backward(dy):
            return dy * 3.0 * square(x)   # captures x; its graph names square's own saved gradient
        return x * x * x, backward

    class Cube(tf.Module):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(1.5)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float64)])
        def __call__(self, x):
            return cube(x * tf.cast(self.scale, tf.float64))
""")

SECOND_ORDER = textwrap.dedent("""
    import sys
    import tapeflow as tf
    model = tf.saved_model.load(sys.argv[1])
    for value in (0.5, -1.25, 2.0):
        x = tf.Variable(value, dtype=tf.float64)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = model(x)
            dy = inner.gradient(y, x)
        print(value, float(y), float(dy), float(outer.gradient(dy, x)))
""")


@pytest.fixture(scope="module")
def cube_model(tmp_path_factory):
    namespace = {"tf": tf}
    exec(compile(CUBE, "cube_model", "exec"), namespace)
    path = tmp_path_factory.mktemp("cube") / "m"
    tf.saved_model.save(namespace["Cube"](), str(path))
    return path


def _closed_form(x, s=1.5):
    """y = (s x)^3, y' = 3 s^3 x^2, y'' = 6 s^3 x."""
    return (s * x) ** 3, 3 * s ** 3 * x ** 2, 6 * s ** 3 * x


def _first_derivative(model, value):
    x = tf.Variable(value, dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = model(x)
    return float(tape.gradient(y, x))


def test_the_cube_model_saves_a_gradient_that_names_another(cube_model):
    gradients = json.loads((cube_model / "saved_model.json").read_text())["custom_gradients"]
    named = [n["attrs"]["_gradient_op_type"] for g in gradients.values() for n in g["graph"]["nodes"]
             if "_gradient_op_type" in n["attrs"]]
    assert len(gradients) == 2 and len(named) == 1 and named[0] in gradients


def test_second_order_through_a_loaded_gradient_in_a_fresh_process(cube_model):
    for line in _run(SECOND_ORDER, cube_model).splitlines():
        value, y, dy, d2y = map(float, line.split())
        np.testing.assert_allclose([y, dy, d2y], _closed_form(value), rtol=1e-12)


def test_second_order_through_a_loaded_gradient_matches_finite_differences(cube_model):
    model = tf.saved_model.load(str(cube_model))
    for value in (0.5, -1.25, 2.0):
        x = tf.Variable(value, dtype=tf.float64)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = model(x)
            dy = inner.gradient(y, x)
        d2y = float(outer.gradient(dy, x))
        h = 1e-5
        finite = (_first_derivative(model, value + h) - _first_derivative(model, value - h)) / (2 * h)
        np.testing.assert_allclose(d2y, finite, rtol=1e-7)
        np.testing.assert_allclose(d2y, _closed_form(value)[2], rtol=1e-12)


def test_a_loaded_gradient_lives_as_long_as_its_functions_or_their_tapes(cube_model):
    gc.collect()
    before = set(registry._GRADIENTS)
    model = tf.saved_model.load(str(cube_model))
    added = set(registry._GRADIENTS) - before
    assert len(added) == 2
    x = tf.Variable(0.5, dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = model(x)
    del model
    gc.collect()
    assert set(registry._GRADIENTS) - before == added       # the tape's record still names it
    np.testing.assert_allclose(float(tape.gradient(y, x)), _closed_form(0.5)[1], rtol=1e-12)
    del tape, y
    gc.collect()
    assert set(registry._GRADIENTS) == before


def test_two_loads_of_one_file_get_gradients_of_their_own(cube_model):
    first = tf.saved_model.load(str(cube_model))
    second = tf.saved_model.load(str(cube_model))
    names = [[n[2]["_gradient_op_type"] for n in m.__call__.concrete_functions()[0].graph.nodes
              if "_gradient_op_type" in n[2]] for m in (first, second)]
    assert names[0] != names[1]
    for model in (first, second):
        assert _first_derivative(model, 2.0) == pytest.approx(_closed_form(2.0)[1], rel=1e-12)


def test_a_loaded_model_saved_again_keeps_its_gradients(guide_models, cube_model, tmp_path):
    guide_again, cube_again = tmp_path / "guide", tmp_path / "cube"
    tf.saved_model.save(tf.saved_model.load(str(guide_models[0])), str(guide_again))
    tf.saved_model.save(tf.saved_model.load(str(cube_model)), str(cube_again))
    out = _run(LOAD_AND_DIFFERENTIATE, guide_again).split()
    assert out == [str(guide_again), "gradient", "2.0"]
    for line in _run(SECOND_ORDER, cube_again).splitlines():
        value, y, dy, d2y = map(float, line.split())
        np.testing.assert_allclose([y, dy, d2y], _closed_form(value), rtol=1e-12)
