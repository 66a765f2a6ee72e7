"""Every code example of ../shared/seeds that needs no Keras layer or SavedModel,
run with ``import tapeflow as tf`` and checked against the output the documents print.

The web pages flattened multi-line tensor printouts onto one line; the expected
strings here restore TensorFlow's real line breaks.
"""
import numpy as np
import pytest

import tapeflow as tf


def printed(capsys):
    return capsys.readouterr().out.rstrip("\n").split("\n")


# ---------------------------------------------------------------- seed 000 ---
def test_000_variable_square(capsys):
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    print(dy_dx.numpy())
    assert printed(capsys) == ["6.0"]


def test_000_watch_rules(capsys):
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2) + (x3**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    for g in grad:
        print(g)
    assert printed(capsys) == ["tf.Tensor(6.0, shape=(), dtype=float32)", "None", "None", "None"]


def test_000_explicit_watch(capsys):
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        tape.watch([x1, x2, x3])
        y = (x0**2) + (x1**2) + (x2**2) + (x3**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    for g in grad:
        print(g)
    assert printed(capsys) == ["tf.Tensor(6.0, shape=(), dtype=float32)"] * 4


def test_000_disable_tracking(capsys):
    variable_a = tf.Variable(3.0, name='x1')
    variable_b = tf.Variable(2.0, name='x2')
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as disable_tracking_tape:
        disable_tracking_tape.watch(variable_a)
        y = variable_a ** 2
        z = variable_b ** 3
    gradient_1 = disable_tracking_tape.gradient(y, variable_a)
    gradient_2 = disable_tracking_tape.gradient(z, variable_b)
    print(gradient_1)
    print(gradient_2)
    assert printed(capsys) == ["tf.Tensor(6.0, shape=(), dtype=float32)", "None"]


def test_000_persistent(capsys):
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as persistent_tape:
        persistent_tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = persistent_tape.gradient(z, x)
    dy_dx = persistent_tape.gradient(y, x)
    print("First derivative of function y = x ^ 4 at x = 3 is", dz_dx.numpy())
    del persistent_tape
    assert printed(capsys) == ["First derivative of function y = x ^ 4 at x = 3 is 108.0"]
    assert float(dy_dx) == 6.0


def test_000_nested(capsys):
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.GradientTape() as tape2:
            tape2.watch(x)
            y = x * x
        dy_dx = tape2.gradient(y, x)
    d2y_d2x = tape.gradient(dy_dx, x)
    print("Function: y = x * x, x = 3.0")
    print("First Derivative:", dy_dx.numpy())
    print("Second Derivative:", d2y_d2x.numpy())
    assert printed(capsys) == ["Function: y = x * x, x = 3.0", "First Derivative: 6.0", "Second Derivative: 2.0"]


# ---------------------------------------------------------------- seed 001 ---
def test_001_sum_then_square(capsys):
    x = tf.ones((2, 2))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(x)
        z = tf.square(y)
    dz_dx = t.gradient(z, x)
    print(dz_dx)
    assert printed(capsys) == ["tf.Tensor(", "[[8. 8.]", " [8. 8.]], shape=(2, 2), dtype=float32)"]


def test_001_tape_expires(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        z = y * y
    dz_dx = t.gradient(z, x)
    print(dz_dx)
    try:
        dy_dx = t.gradient(y, x)
        print(dy_dx)
    except RuntimeError as e:
        print("The error message you get is:")
        print(e)
    # The seed (an older TensorFlow) printed "GradientTape.gradient can only be called once on
    # non-persistent tapes."; TensorFlow 2.21, which the spec records, prints the text below.
    assert printed(capsys) == [
        "tf.Tensor(108.0, shape=(), dtype=float32)",
        "The error message you get is:",
        "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"]


def test_001_persistent_reuse(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    print(t.gradient(z, x))
    print(t.gradient(y, x))
    assert printed(capsys) == ["tf.Tensor(108.0, shape=(), dtype=float32)", "tf.Tensor(6.0, shape=(), dtype=float32)"]


def _second_derivative(where, persistent=False):
    """The seed's nested-tape variants; ``where`` says where the two gradient calls stand."""
    x = tf.Variable(1.0)
    with tf.GradientTape(persistent=persistent) as tape_2:
        with tf.GradientTape(persistent=persistent) as tape_1:
            y = x * x * x
            if where in ("inner", "inner+inner", "inner+outer", "inner+after"):
                dy_dx = tape_1.gradient(y, x)
            if where == "inner+inner":
                d2y_dx2 = tape_2.gradient(dy_dx, x)
        if where == "outer":
            dy_dx = tape_1.gradient(y, x)
        if where == "inner+outer":
            d2y_dx2 = tape_2.gradient(dy_dx, x)
    if where == "after":
        dy_dx = tape_1.gradient(y, x)
    if where in ("outer", "inner", "inner+after", "after"):
        d2y_dx2 = tape_2.gradient(dy_dx, x)
    print(dy_dx)
    print(d2y_dx2)


@pytest.mark.parametrize("where", ["outer", "inner", "inner+inner", "inner+outer", "inner+after"])
def test_001_first_gradient_inside_outer_block(capsys, where):
    _second_derivative(where)
    assert printed(capsys) == ["tf.Tensor(3.0, shape=(), dtype=float32)", "tf.Tensor(6.0, shape=(), dtype=float32)"]


@pytest.mark.parametrize("persistent", [False, True])
def test_001_first_gradient_after_outer_block_gives_none(capsys, persistent):
    _second_derivative("after", persistent=persistent)
    assert printed(capsys) == ["tf.Tensor(3.0, shape=(), dtype=float32)", "None"]


# ---------------------------------------------------------------- seed 003 ---
def test_003_add_multiply(capsys):
    x = tf.constant(1, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.add(x, x)
        z = tf.multiply(y, y)
    dz_dx = tape.gradient(target=z, sources=x)
    print(dz_dx)
    assert printed(capsys) == ["tf.Tensor(8.0, shape=(), dtype=float32)"]


def test_003_intermediate(capsys):
    x = tf.constant(1, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.add(x, x)
        z = tf.multiply(y, y)
    dz_dy = tape.gradient(target=z, sources=y)
    print(dz_dy)
    assert printed(capsys) == ["tf.Tensor(4.0, shape=(), dtype=float32)"]


def test_003_persistent(capsys):
    x = tf.constant(1, dtype=tf.float32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.add(x, x)
        z = tf.multiply(y, y)
    dz_dy = tape.gradient(target=z, sources=y)
    dy_dx = tape.gradient(target=y, sources=x)
    dz_dx = tape.gradient(target=z, sources=x)
    print(dz_dy, dy_dx, dz_dx)
    assert printed(capsys) == ["tf.Tensor(4.0, shape=(), dtype=float32) tf.Tensor(2.0, shape=(), dtype=float32) "
                               "tf.Tensor(8.0, shape=(), dtype=float32)"]


def test_003_control_flow(capsys):
    def f(x, y):
        output = 1.0
        for i in range(y):
            if i > 1 and i < 5:
                output = tf.multiply(output, x)
        return output

    def grad(x, y):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = f(x, y)
        return tape.gradient(out, x)

    x = tf.convert_to_tensor(2.0)
    print(grad(x, 6))
    print(grad(x, 5))
    print(grad(x, 4))
    assert printed(capsys) == ["tf.Tensor(12.0, shape=(), dtype=float32)", "tf.Tensor(12.0, shape=(), dtype=float32)",
                               "tf.Tensor(4.0, shape=(), dtype=float32)"]


def test_003_higher_order(capsys):
    x = tf.Variable(1.0)
    with tf.GradientTape() as t:
        with tf.GradientTape() as t2:
            y = x * x * x
        dy_dx = t2.gradient(y, x)
    d2y_dx2 = t.gradient(dy_dx, x)
    print(dy_dx)
    print(d2y_dx2)
    assert printed(capsys) == ["tf.Tensor(3.0, shape=(), dtype=float32)", "tf.Tensor(6.0, shape=(), dtype=float32)"]


# --------------------------------------------------------- seed 004 (002) ---
def test_004_stop_recording(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    print('dz/dx:', grad['x'])
    print('dz/dy:', grad['y'])
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_reset(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    print('dz/dx:', grad['x'])
    print('dz/dy:', grad['y'])
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_stop_gradient(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {'x': x, 'y': y})
    print('dz/dx:', grad['x'])
    print('dz/dy:', grad['y'])
    assert printed(capsys) == ["dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)", "dz/dy: None"]


def test_004_custom_gradient_clip(capsys):
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    print(t.gradient(output, v))
    assert printed(capsys) == ["tf.Tensor(2.0, shape=(), dtype=float32)"]


def test_004_multiple_tapes(capsys):
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    print(tape0.gradient(ys, x0).numpy())
    print(tape1.gradient(ys, x1).numpy())
    assert printed(capsys) == ["1.0", "0.25"]


def test_004_higher_order(capsys):
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    print('dy_dx:', dy_dx.numpy())
    print('d2y_dx2:', d2y_dx2.numpy())
    assert printed(capsys) == ["dy_dx: 3.0", "d2y_dx2: 6.0"]


def test_004_jacobian_scalar_source(capsys):
    x = tf.linspace(-10.0, 10.0, 200+1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x+delta)
    dy_dx = tape.jacobian(y, delta)
    print(y.shape)
    print(dy_dx.shape)
    assert printed(capsys) == ["(201,)", "(201,)"]
    s = 1 / (1 + np.exp(-np.linspace(-10, 10, 201)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)
