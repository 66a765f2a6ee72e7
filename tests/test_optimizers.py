"""tapeflow.optimizers: Keras 3 numbers bit for bit, the base-class pipeline
(clipping, weight decay, EMA, accumulation, schedules), variable order and
names, config round trips, saving, and errors that leave state unchanged."""
import json
import weakref
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow import optimizers
from tapeflow.optimizers import schedules

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "keras"
if not FIXTURES.exists():
    FIXTURES = Path("/work/shared/fixtures/keras")


def f32(values):
    return np.array(values, dtype=np.float32)


# ------------------------------------------------- spec 3.4: bit for bit ---
A = f32([1, 2, 3])
C = f32([0.5, 0.5, 0.5])
W0 = f32([1, -2, 3])

SPEC_ROWS = {
    "adam": (lambda: optimizers.Adam(learning_rate=0.1),
             ["0.9000013 -1.9000007 2.9000008", "0.80119014 -1.8001289 2.800129",
              "0.70487463 -1.700476 2.7004762"]),
    "adam_amsgrad": (lambda: optimizers.Adam(learning_rate=0.1, amsgrad=True),
                     ["0.9000013 -1.9000007 2.9000008", "0.80119014 -1.8001289 2.800129",
                      "0.70487463 -1.700476 2.7004762"]),
    "adamw": (lambda: optimizers.AdamW(learning_rate=0.1, weight_decay=0.1),
              ["0.8900013 -1.8800007 2.8700008", "0.7824975 -1.7613602 2.7414765",
               "0.67904365 -1.6441784 2.6145394"]),
    "adam_clipnorm": (lambda: optimizers.Adam(learning_rate=0.1, clipnorm=1.0),
                      ["0.9000064 -1.9000013 2.900001", "0.80089104 -1.8000015 2.8000011",
                       "0.7037361 -1.6999992 2.6999986"]),
    "sgd": (lambda: optimizers.SGD(learning_rate=0.1),
            ["0.95 -1.5 2.25", "0.905 -1.1 1.7249999", "0.8645 -0.78 1.3575"]),
    "sgd_momentum": (lambda: optimizers.SGD(0.1, momentum=0.9),
                     ["0.95 -1.5 2.25", "0.86 -0.65 1.05", "0.74300003 0.34500003 -0.19500005"]),
    "sgd_nesterov": (lambda: optimizers.SGD(0.1, 0.9, nesterov=True),
                     ["0.905 -1.05 1.575", "0.78755 -0.055999994 0.35475016",
                      "0.66366047 0.7708799 -0.37043238"]),
    "rmsprop": (lambda: optimizers.RMSprop(learning_rate=0.1),
                ["0.68377286 -1.6837722 2.6837723", "0.569532 -1.4695725 2.4695725",
                 "0.5244356 -1.2983615 2.2983615"]),
    "rmsprop_centered_momentum": (lambda: optimizers.RMSprop(0.1, momentum=0.5, centered=True),
                                  ["0.6666674 -1.6666666 2.6666667", "0.38626903 -1.2631563 2.2631564",
                                   "0.3225798 -0.87660843 1.8766086"]),
    "adagrad": (lambda: optimizers.Adagrad(learning_rate=0.1),
                ["0.9154846 -1.9001994 2.9000888", "0.85801226 -1.8310152 2.8308663",
                 "0.8136336 -1.7752448 2.7750754"]),
}


def _run_quadratic(opt, steps=3):
    w = tf.Variable(W0.copy())
    history = []
    for _ in range(steps):
        grad = A * (w.numpy() - C)
        opt.apply_gradients(zip([tf.constant(grad)], [w]))
        history.append(w.numpy())
    return w, history


@pytest.mark.parametrize("row", sorted(SPEC_ROWS))
def test_spec_3_4_bit_exact(row):
    make, expected = SPEC_ROWS[row]
    _, history = _run_quadratic(make())
    for step, (got, want) in enumerate(zip(history, expected), 1):
        want = f32([float(x) for x in want.split()])
        assert got.dtype == np.float32
        assert np.max(np.abs(got - want)) == 0, f"{row} step {step}: {got.tolist()} != {want.tolist()}"


def test_spec_3_4_adam_state_after_three_steps():
    opt = optimizers.Adam(learning_rate=0.1)
    _run_quadratic(opt)
    names = [v.path for v in opt.variables]
    state = {n.split("_")[-1]: v.numpy() for n, v in zip(names, opt.variables)}
    assert opt.iterations.numpy() == 3 and opt.iterations.dtype == tf.int64
    assert np.array_equal(state["momentum"], f32([0.10661913, -1.2970259, 1.9455389]))
    velocity = state["velocity"]
    assert np.array_equal(velocity[1:], f32([0.06912937, 0.15554109]))
    assert f"{velocity[0]:.6g}" == "0.000500057"      # the spec prints this one with 6 significant digits


def test_spec_3_4_global_clipnorm_and_clipvalue():
    opt = optimizers.SGD(learning_rate=1.0, global_clipnorm=1.0)
    w1, w2 = tf.Variable(f32([3, 4])), tf.Variable(f32([12]))
    opt.apply_gradients([(tf.constant(f32([3, 4])), w1), (tf.constant(f32([12])), w2)])
    assert np.array_equal(w1.numpy(), f32([2.7692308, 3.6923077]))
    assert np.array_equal(w2.numpy(), f32([11.076923]))

    opt = optimizers.SGD(learning_rate=1.0, clipvalue=1.0)
    w = tf.Variable(f32([3, 4]))
    opt.apply_gradients([(tf.constant(f32([3, -0.5])), w)])
    assert np.array_equal(w.numpy(), f32([2.0, 4.5]))


def test_spec_3_3_exponential_decay_sequence():
    opt = optimizers.SGD(schedules.ExponentialDecay(0.1, 1, 0.5))
    w = tf.Variable(0.0)
    seen = []
    for _ in range(3):
        seen.append(float(opt.learning_rate))
        opt.apply_gradients([(tf.constant(1.0), w)])
    assert seen == [float(np.float32(0.1)), float(np.float32(0.05)), float(np.float32(0.025))]
    lrs = [np.float32(x) for x in (0.1, 0.05, 0.025)]
    assert w.numpy() == ((np.float32(0) - lrs[0]) - lrs[1]) - lrs[2]   # -0.17500001 in float32
    assert abs(float(w.numpy()) + 0.175) < 1e-7
    assert [v.path for v in opt.variables] == ["sgd/iteration"]   # no learning_rate variable for a schedule


# -------------------------------------- independent numpy implementations ---
def reference_step(kind, cfg, w, g, slots, t, lr, dt):
    """One Keras 3 update written straight from the formulas, in dtype ``dt``."""
    one = dt(1)
    wd = cfg.get("weight_decay")
    if wd is not None:
        w = w - w * dt(wd) * lr
    if kind == "sgd":
        mu = cfg.get("momentum", 0.0)
        if mu == 0:
            return w - g * lr
        slots["momentum"] = m = slots["momentum"] * dt(mu) - g * lr
        return w + (m * dt(mu) - g * lr) if cfg.get("nesterov") else w + m
    if kind in ("adam", "adamw"):
        b1, b2 = cfg.get("beta_1", 0.9), cfg.get("beta_2", 0.999)
        alpha = lr * np.sqrt(one - dt(b2) ** dt(t)) / (one - dt(b1) ** dt(t))
        slots["momentum"] = m = slots["momentum"] + (g - slots["momentum"]) * dt(1 - b1)
        slots["velocity"] = v = slots["velocity"] + (g * g - slots["velocity"]) * dt(1 - b2)
        if cfg.get("amsgrad"):
            slots["velocity_hat"] = v = np.maximum(slots["velocity_hat"], v)
        return w - (m * alpha) / (np.sqrt(v) + dt(cfg.get("epsilon", 1e-7)))
    if kind == "rmsprop":
        rho, mom, eps = cfg.get("rho", 0.9), cfg.get("momentum", 0.0), dt(cfg.get("epsilon", 1e-7))
        slots["velocity"] = v = dt(rho) * slots["velocity"] + dt(1 - rho) * np.square(g)
        if cfg.get("centered"):
            slots["average_gradient"] = a = dt(rho) * slots["average_gradient"] + dt(1 - rho) * g
            denom = v - np.square(a) + eps
        else:
            denom = v + eps
        inc = (lr * g) / np.sqrt(denom)
        if mom > 0:
            slots["momentum"] = m = dt(mom) * slots["momentum"] + inc
            return w - m
        return w - inc
    if kind == "adagrad":
        slots["accumulator"] = acc = slots["accumulator"] + np.square(g)
        return w - (lr * g) / np.sqrt(acc + dt(cfg.get("epsilon", 1e-7)))
    if kind == "adadelta":
        rho, eps = cfg.get("rho", 0.95), dt(cfg.get("epsilon", 1e-7))
        slots["accumulated_grad"] = ag = dt(rho) * slots["accumulated_grad"] + dt(1 - rho) * np.square(g)
        delta = -((np.sqrt(slots["accumulated_delta_var"] + eps) * g) / np.sqrt(ag + eps))
        slots["accumulated_delta_var"] = dt(rho) * slots["accumulated_delta_var"] + dt(1 - rho) * np.square(delta)
        return w + lr * delta
    if kind == "adamax":
        b1, b2 = cfg.get("beta_1", 0.9), cfg.get("beta_2", 0.999)
        slots["momentum"] = m = slots["momentum"] + (g - slots["momentum"]) * dt(1 - b1)
        slots["norm"] = u = np.maximum(dt(b2) * slots["norm"], np.abs(g))
        return w - (lr * m) / ((one - dt(b1) ** dt(t)) * (u + dt(cfg.get("epsilon", 1e-7))))
    if kind == "nadam":
        b1, b2 = dt(cfg.get("beta_1", 0.9)), dt(cfg.get("beta_2", 0.999))
        u_t = b1 * (one - dt(0.5) * dt(0.96) ** dt(t))
        u_next = b1 * (one - dt(0.5) * dt(0.96) ** dt(t + 1))
        prod = slots["u_product"]          # already includes u_t (updated once per step, before the variables)
        prod_next = prod * u_next
        slots["momentum"] = m = slots["momentum"] + (g - slots["momentum"]) * (one - b1)
        slots["velocity"] = v = slots["velocity"] + (np.square(g) - slots["velocity"]) * (one - b2)
        m_hat = (u_next * m) / (one - prod_next) + ((one - u_t) * g) / (one - prod)
        v_hat = v / (one - b2 ** dt(t))
        return w - (m_hat * lr) / (np.sqrt(v_hat) + dt(cfg.get("epsilon", 1e-7)))
    if kind == "lion":
        b1, b2 = dt(cfg.get("beta_1", 0.9)), dt(cfg.get("beta_2", 0.99))
        direction = np.sign(slots["momentum"] * b1 + g * (one - b1))
        slots["momentum"] = slots["momentum"] * b2 + g * (one - b2)
        return w - lr * direction
    raise AssertionError(kind)


SLOTS = {"sgd": ["momentum"], "adam": ["momentum", "velocity", "velocity_hat"],
         "adamw": ["momentum", "velocity", "velocity_hat"],
         "rmsprop": ["velocity", "momentum", "average_gradient"], "adagrad": ["accumulator"],
         "adadelta": ["accumulated_grad", "accumulated_delta_var"], "adamax": ["momentum", "norm"],
         "nadam": ["momentum", "velocity"], "lion": ["momentum"]}

CASES = [
    ("sgd", {}), ("sgd", {"momentum": 0.9}), ("sgd", {"momentum": 0.5, "nesterov": True}),
    ("sgd", {"momentum": 0.9, "weight_decay": 0.05}),
    ("adam", {}), ("adam", {"amsgrad": True, "beta_1": 0.8}), ("adamw", {"weight_decay": 0.1}),
    ("rmsprop", {}), ("rmsprop", {"momentum": 0.7}), ("rmsprop", {"centered": True}),
    ("rmsprop", {"centered": True, "momentum": 0.3, "rho": 0.8}), ("rmsprop", {"weight_decay": 0.02}),
    ("adagrad", {"initial_accumulator_value": 0.2}), ("adadelta", {}), ("adadelta", {"rho": 0.9}),
    ("adamax", {}), ("adamax", {"weight_decay": 0.01}), ("nadam", {}), ("nadam", {"beta_1": 0.85}),
    ("lion", {}), ("lion", {"beta_1": 0.7, "weight_decay": 0.1}),
]
SHAPES = [(3, 4), (5,), (), (2, 3, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind,cfg", CASES, ids=[f"{k}-{'-'.join(c) or 'default'}" for k, c in CASES])
def test_matches_numpy_reference(kind, cfg, dtype):
    dt = np.dtype(dtype).type
    rng = np.random.default_rng(7)
    lr_py = 0.05
    cls = optimizers.get(kind).__class__
    opt = cls(learning_rate=lr_py, **cfg)
    values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    variables = [tf.Variable(v) for v in values]
    refs = [v.copy() for v in values]
    init = dt(cfg.get("initial_accumulator_value", 0.1)) if kind == "adagrad" else dt(0)
    ref_slots = [{name: np.full(s, init, dtype) for name in SLOTS[kind]} for s in SHAPES]
    u_product = dt(1)
    lr = dt(np.float32(lr_py))            # the learning_rate variable is float32, cast to the variable dtype
    for step in range(1, 5):
        grads = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
        if step == 3:
            grads[1] = np.zeros(SHAPES[1], dtype)          # exact zeros (sign(0) for Lion)
        opt.apply_gradients(zip([tf.constant(g) for g in grads], variables))
        if kind == "nadam":
            b1 = dt(cfg.get("beta_1", 0.9))
            u_product = u_product * b1 * (dt(1) - dt(0.5) * dt(0.96) ** dt(step))
        for i, g in enumerate(grads):
            ref_slots[i]["u_product"] = u_product
            refs[i] = reference_step(kind, cfg, refs[i], g, ref_slots[i], step, lr, dt)
        for i, v in enumerate(variables):
            got = v.numpy()
            assert got.dtype == dtype and got.shape == SHAPES[i]
            assert np.array_equal(got, refs[i]), (
                f"step {step}, variable {i}: max |diff| = {np.max(np.abs(got - refs[i]))}")
    assert int(opt.iterations.numpy()) == 4


def test_half_precision_variable_computes_in_float32():
    w = tf.Variable(np.array([1.0, -2.0, 0.5], np.float16))
    g = np.array([0.3, 0.1, -0.7], np.float16)
    optimizers.SGD(0.1).apply_gradients([(tf.constant(g), w)])
    expected = (f32([1.0, -2.0, 0.5]) - g.astype(np.float32) * np.float32(0.1)).astype(np.float16)
    assert w.numpy().dtype == np.float16
    assert np.array_equal(w.numpy(), expected)


def test_fortran_ordered_variable():
    x = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    w = tf.Variable(x)
    g = np.ones((3, 4), np.float32) * np.arange(4, dtype=np.float32)
    optimizers.SGD(0.5).apply_gradients([(tf.constant(g), w)])
    assert np.array_equal(w.numpy(), x - g * np.float32(0.5))


# ----------------------------------------------------- variables and names ---
def _var(shape, path=None, name=None, dtype=np.float32):
    v = tf.Variable(np.zeros(shape, dtype), name=name)
    if path is not None:
        v.path = path
    return v


def _model_vars():
    return [_var((4, 8), "seq/dense/kernel"), _var((8,), "seq/dense/bias"),
            _var((8, 3), "seq/dense_1/kernel"), _var((3,), "seq/dense_1/bias")]


def test_adam_variable_order_and_names():
    opt = optimizers.Adam(1e-3)
    opt.build(_model_vars())
    assert [v.path for v in opt.variables] == [
        "adam/iteration", "adam/learning_rate",
        "adam/seq_dense_kernel_momentum", "adam/seq_dense_kernel_velocity",
        "adam/seq_dense_bias_momentum", "adam/seq_dense_bias_velocity",
        "adam/seq_dense_1_kernel_momentum", "adam/seq_dense_1_kernel_velocity",
        "adam/seq_dense_1_bias_momentum", "adam/seq_dense_1_bias_velocity"]
    assert opt.variables[2].name == "seq_dense_kernel_momentum:0"
    assert opt.variables[0].dtype == tf.int64 and opt.variables[1].dtype == tf.float32
    assert [v.shape.as_list() for v in opt.variables[2:4]] == [[4, 8], [4, 8]]
    assert all(not v.trainable for v in opt.variables)


def test_slot_order_per_optimizer():
    def names(opt):
        opt.build(_model_vars()[:2])
        return [v.path.split("/", 1)[1] for v in opt.variables]
    k, b = "seq_dense_kernel", "seq_dense_bias"
    assert names(optimizers.Adam(amsgrad=True)) == [
        "iteration", "learning_rate", f"{k}_momentum", f"{k}_velocity", f"{b}_momentum", f"{b}_velocity",
        f"{k}_velocity_hat", f"{b}_velocity_hat"]
    assert names(optimizers.RMSprop(momentum=0.9, centered=True)) == [
        "iteration", "learning_rate", f"{k}_velocity", f"{b}_velocity", f"{k}_momentum", f"{b}_momentum",
        f"{k}_average_gradient", f"{b}_average_gradient"]
    assert names(optimizers.SGD(momentum=0.9)) == ["iteration", "learning_rate", f"{k}_momentum", f"{b}_momentum"]
    assert names(optimizers.SGD()) == ["iteration", "learning_rate"]
    assert names(optimizers.Adagrad()) == ["iteration", "learning_rate", f"{k}_accumulator", f"{b}_accumulator"]
    assert names(optimizers.Lion()) == ["iteration", "learning_rate", f"{k}_momentum", f"{b}_momentum"]
    assert names(optimizers.Nadam())[-1] == "u_product"
    assert names(optimizers.SGD(0.1, momentum=0.5, use_ema=True, gradient_accumulation_steps=2)) == [
        "iteration", "learning_rate", f"{k}_average", f"{b}_average", f"{k}_gradient_accumulator",
        f"{b}_gradient_accumulator", f"{k}_momentum", f"{b}_momentum"]


def test_plain_variable_names_and_initial_accumulator():
    opt = optimizers.Adagrad(initial_accumulator_value=0.25, name="ada")
    w = tf.Variable([1.0, 2.0], name="w")
    opt.build([w])
    assert [v.path for v in opt.variables] == ["ada/iteration", "ada/learning_rate", "ada/w_accumulator"]
    assert np.array_equal(opt.variables[2].numpy(), f32([0.25, 0.25]))


def test_slots_created_on_first_apply_and_build_is_idempotent():
    w = tf.Variable([1.0, 2.0])
    opt = optimizers.Adam()
    assert not opt.built and len(opt.variables) == 2
    opt.apply_gradients([(tf.constant([0.1, 0.2]), w)])
    assert opt.built and len(opt.variables) == 4
    opt.build([w, tf.Variable(1.0)])
    assert len(opt.variables) == 4


def test_default_names_and_optimizer_module_exports():
    assert [cls().name for cls in (optimizers.SGD, optimizers.Adam, optimizers.AdamW, optimizers.RMSprop,
                                   optimizers.Adagrad, optimizers.Adadelta, optimizers.Adamax,
                                   optimizers.Nadam, optimizers.Lion)] == [
        "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "lion"]
    assert isinstance(optimizers.Adam(), optimizers.Optimizer)
    assert tf.optimizers.Adam is optimizers.Adam


# ---------------------------------------------------------------- clipping ---
def test_clipnorm_is_per_tensor():
    opt = optimizers.SGD(1.0, clipnorm=2.0)
    big, small = tf.Variable(np.zeros(2, np.float32)), tf.Variable(np.zeros(2, np.float32))
    g_big, g_small = f32([3, 4]), f32([0.6, 0.8])
    opt.apply_gradients([(tf.constant(g_big), big), (tf.constant(g_small), small)])
    two = np.float32(2)
    assert np.array_equal(big.numpy(), -((g_big * two) / np.float32(5)))
    assert np.array_equal(small.numpy(), -((g_small * two) / two))


def test_global_clipnorm_below_threshold_and_non_finite():
    opt = optimizers.SGD(1.0, global_clipnorm=100.0)
    w = tf.Variable(np.zeros(2, np.float32))
    opt.apply_gradients([(tf.constant(f32([3, 4])), w)])
    assert np.allclose(w.numpy(), [-3, -4], rtol=1e-6)
    opt = optimizers.SGD(1.0, global_clipnorm=1.0)
    w = tf.Variable(np.zeros(2, np.float32))
    opt.apply_gradients([(tf.constant(f32([np.inf, 1])), w)])
    assert np.all(np.isnan(w.numpy()))


def test_only_one_clip_option():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and `global_clipnorm`"):
        optimizers.Adam(clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="clipnorm"):
        optimizers.SGD(clipnorm=-1.0)


# ------------------------------------------------------------ weight decay ---
def test_weight_decay_exclusions():
    opt = optimizers.SGD(0.1, weight_decay=0.5)
    kernel, bias = _var((2,), "d/kernel", name="kernel"), _var((2,), "d/bias", name="bias")
    gamma = _var((2,), "bn/gamma", name="gamma")
    for v in (kernel, bias, gamma):
        v.assign(f32([1.0, 2.0]))
    opt.exclude_from_weight_decay(var_list=[gamma], var_names=["bias", "^d$"])   # names, not paths
    zero = tf.constant(f32([0, 0]))
    opt.apply_gradients([(zero, kernel), (zero, bias), (zero, gamma)])
    w = f32([1.0, 2.0])
    assert np.array_equal(kernel.numpy(), w - w * np.float32(0.5) * np.float32(0.1))
    assert np.array_equal(bias.numpy(), w) and np.array_equal(gamma.numpy(), w)
    with pytest.raises(ValueError, match="before the optimizer is built"):
        opt.exclude_from_weight_decay(var_names=["kernel"])


def test_weight_decay_in_a_custom_optimizer_is_applied_by_the_base_class():
    class PlainSGD(optimizers.Optimizer):
        def __init__(self, learning_rate=0.1, **kwargs):
            super().__init__(learning_rate=learning_rate, **kwargs)

        def update_step(self, gradient, variable, learning_rate):
            variable.assign_sub(tf.cast(learning_rate, variable.dtype) * gradient)

    opt = PlainSGD(weight_decay=0.5)
    assert opt.name == "plain_sgd"
    w = tf.Variable(f32([1.0, 2.0]))
    opt.apply_gradients([(tf.constant(f32([1.0, 1.0])), w)])
    lr = np.float32(0.1)
    expected = f32([1.0, 2.0])
    expected = expected - expected * np.float32(0.5) * lr
    assert np.array_equal(w.numpy(), expected - lr * f32([1.0, 1.0]))


def test_adamw_requires_weight_decay():
    with pytest.raises(ValueError, match="weight_decay"):
        optimizers.AdamW(weight_decay=None)
    assert optimizers.AdamW().weight_decay == 0.004


# --------------------------------------------------------------------- EMA ---
def test_ema_average_and_overwrite():
    opt = optimizers.SGD(0.5, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=3)
    w = tf.Variable(f32([1.0, 2.0]))
    g = tf.constant(f32([1.0, -1.0]))
    opt.apply_gradients([(g, w)])
    average = opt.variables[2]
    assert average.path == "sgd/Variable_average"
    w1 = w.numpy()
    assert np.array_equal(average.numpy(), w1)                  # momentum 0 on the first step
    opt.apply_gradients([(g, w)])
    w2 = w.numpy()
    m = np.float32(0.9)
    avg2 = m * w1 + (np.float32(1) - m) * w2
    assert np.array_equal(average.numpy(), avg2)
    opt.apply_gradients([(g, w)])                                 # iteration 3: overwrite
    w3 = w2 - g.numpy() * np.float32(0.5)
    avg3 = m * avg2 + (np.float32(1) - m) * w3
    assert np.array_equal(average.numpy(), avg3) and np.array_equal(w.numpy(), avg3)


def test_finalize_variable_values():
    opt = optimizers.Adam(0.1, use_ema=True)
    w = tf.Variable(f32([1.0, 2.0]))
    for _ in range(3):
        opt.apply_gradients([(tf.constant(f32([1.0, 1.0])), w)])
    average = opt.variables[2].numpy()
    assert not np.array_equal(w.numpy(), average)
    opt.finalize_variable_values([w])
    assert np.array_equal(w.numpy(), average)


# ----------------------------------------------------- gradient accumulation ---
def test_gradient_accumulation_matches_one_step_on_the_mean():
    acc_opt = optimizers.SGD(0.1, momentum=0.9, gradient_accumulation_steps=2)
    ref_opt = optimizers.SGD(0.1, momentum=0.9)
    w, ref = tf.Variable(f32([1.0, -1.0])), tf.Variable(f32([1.0, -1.0]))
    g1, g2 = f32([0.5, 1.0]), f32([1.5, -3.0])
    acc_opt.apply_gradients([(tf.constant(g1), w)])
    assert np.array_equal(w.numpy(), f32([1.0, -1.0])) and int(acc_opt.iterations.numpy()) == 1
    acc_opt.apply_gradients([(tf.constant(g2), w)])
    ref_opt.apply_gradients([(tf.constant((g2 + g1) / np.float32(2)), ref)])
    assert np.array_equal(w.numpy(), ref.numpy())
    accumulator = [v for v in acc_opt.variables if v.path.endswith("gradient_accumulator")][0]
    assert np.array_equal(accumulator.numpy(), f32([0, 0]))
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        optimizers.SGD(gradient_accumulation_steps=1)


def test_loss_scale_factor_divides_gradients():
    opt = optimizers.SGD(1.0, loss_scale_factor=4.0)
    w = tf.Variable(f32([0.0]))
    assert float(opt.scale_loss(tf.constant(2.0))) == 8.0
    opt.apply_gradients([(tf.constant(f32([8.0])), w)])
    assert w.numpy().tolist() == [-2.0]


# ------------------------------------------------------------ learning rate ---
def test_learning_rate_is_a_settable_float32_variable():
    opt = optimizers.SGD(learning_rate=0.1)
    assert isinstance(opt.learning_rate, tf.Variable) and opt.learning_rate.dtype == tf.float32
    w = tf.Variable(1.0)
    opt.apply_gradients([(tf.constant(1.0), w)])
    opt.learning_rate = 0.01
    assert float(opt.learning_rate) == float(np.float32(0.01))
    opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == np.float32(np.float32(1) - np.float32(0.1)) - np.float32(0.01)
    opt.learning_rate = np.float64(0.5)                        # what Keras callbacks assign
    assert float(opt.learning_rate) == 0.5
    opt.learning_rate.assign(0.25)
    assert opt.get_config()["learning_rate"] == 0.25


def test_learning_rate_schedule_and_callables():
    opt = optimizers.SGD(schedules.ExponentialDecay(0.1, 1, 0.5))
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.1
    steps = []
    opt = optimizers.SGD(lambda step: steps.append(int(step)) or 0.5)
    w = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), w)])
    opt.apply_gradients([(tf.constant(1.0), w)])
    assert steps == [0, 1] and w.numpy() == -1.0
    opt = optimizers.SGD(lambda: 0.25)
    opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == -1.25
    float_opt = optimizers.SGD(0.1)
    float_opt.learning_rate = schedules.InverseTimeDecay(1.0, 1, 1.0)
    assert [v.path for v in float_opt.variables] == ["sgd/iteration"]
    assert float(float_opt.learning_rate) == 1.0


def test_learning_rate_type_errors():
    with pytest.raises(ValueError, match="learning_rate"):
        optimizers.Adam(learning_rate=1)
    with pytest.raises(ValueError, match="learning_rate"):
        optimizers.Adam(learning_rate="fast")
    assert float(optimizers.Adam(learning_rate=np.float32(0.5)).learning_rate) == 0.5


# ---------------------------------------------------------- errors / no-ops ---
def _state(variables, opt):
    return [v.numpy().copy() for v in variables] + [v.numpy().copy() for v in opt.variables]


def _assert_state(before, variables, opt):
    after = _state(variables, opt)
    assert len(before) == len(after)
    assert all(np.array_equal(a, b) for a, b in zip(before, after))


@pytest.fixture
def trained():
    opt = optimizers.Adam(0.1)
    variables = [tf.Variable(f32([1.0, 2.0])), tf.Variable(f32([[1.0], [3.0]]))]
    opt.apply_gradients(zip([tf.constant(f32([1, 1])), tf.constant(f32([[1], [1]]))], variables))
    return opt, variables


@pytest.mark.parametrize("case,match", [
    ("count", "2 gradients for 3 variables|3 variables"),
    ("shape", r"shape \(3,\)"),
    ("dtype", "floating point"),
    ("unknown", "Unknown variable"),
    ("all_none", "No gradients provided for any variable"),
    ("int_variable", "floating-point variables"),
    ("duplicate", "more than once"),
])
def test_bad_calls_leave_every_variable_unchanged(trained, case, match):
    opt, variables = trained
    ok = tf.constant(f32([0.5, 0.5]))
    second = tf.constant(f32([[0.5], [0.5]]))
    before = _state(variables, opt)
    if case == "count":
        call = lambda: opt.apply(  # noqa: E731
            [ok, second], variables + [tf.Variable(1.0)])
    elif case == "shape":
        call = lambda: opt.apply_gradients([(ok, variables[0]), (tf.constant(f32([1, 2, 3])), variables[1])])  # noqa
    elif case == "dtype":
        call = lambda: opt.apply_gradients([(ok, variables[0]), (tf.constant([[1], [2]]), variables[1])])  # noqa
    elif case == "unknown":
        call = lambda: opt.apply_gradients([(ok, variables[0]), (ok, tf.Variable(f32([0, 0])))])  # noqa
    elif case == "all_none":
        call = lambda: opt.apply_gradients([(None, variables[0]), (None, variables[1])])  # noqa
    elif case == "int_variable":
        call = lambda: opt.apply_gradients([(ok, variables[0]), (tf.constant([1, 2]), tf.Variable([1, 2]))])  # noqa
    else:
        call = lambda: opt.apply_gradients([(ok, variables[0]), (ok, variables[0])])  # noqa
    with pytest.raises(ValueError, match=match):
        call()
    _assert_state(before, variables, opt)
    assert int(opt.iterations.numpy()) == 1


def test_errors_before_the_first_build_leave_the_optimizer_unbuilt():
    opt = optimizers.SGD(0.1, momentum=0.9)
    w = tf.Variable(f32([1.0, 2.0]))
    with pytest.raises(ValueError, match="shape"):
        opt.apply_gradients([(tf.constant(f32([1.0])), w)])
    assert not opt.built and w.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="must already be built"):
        opt.apply([tf.constant(f32([1.0, 1.0]))])
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([])


def test_none_gradients_are_skipped_with_a_warning():
    opt = optimizers.SGD(1.0)
    a, b = tf.Variable(f32([1.0])), tf.Variable(f32([1.0]))
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        opt.apply_gradients([(tf.constant(f32([0.5])), a), (None, b)])
    assert a.numpy().tolist() == [0.5] and b.numpy().tolist() == [1.0]
    opt.apply([tf.constant(f32([0.5])), tf.constant(f32([0.25]))])   # grads only, in build order
    assert a.numpy().tolist() == [0.0] and b.numpy().tolist() == [0.75]


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="Argument\\(s\\) not recognized"):
        optimizers.Adam(lr=0.1)
    with pytest.warns(UserWarning, match="decay"):
        optimizers.SGD(decay=0.1)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="beta_1"):
        optimizers.Lion(beta_1=0.0)
    with pytest.raises(ValueError, match="ema_momentum"):
        optimizers.Adam(use_ema=True, ema_momentum=2.0)


# ---------------------------------------------------- snapshot semantics ---
def test_in_place_updates_keep_earlier_reads_intact():
    w = tf.Variable(f32([1.0, 2.0]))
    opt = optimizers.SGD(1.0)
    opt.apply_gradients([(tf.constant(f32([1, 1])), w)])
    storage = weakref.ref(w._write_inplace())
    opt.apply_gradients([(tf.constant(f32([1, 1])), w)])
    assert w._write_inplace() is storage()                  # unshared: updated in place
    snapshot = tf.convert_to_tensor(w)
    as_numpy = np.asarray(w)
    opt.apply_gradients([(tf.constant(f32([1, 1])), w)])
    assert snapshot.numpy().tolist() == [-1.0, 0.0] and as_numpy.tolist() == [-1.0, 0.0]
    assert w.numpy().tolist() == [-2.0, -1.0]


def test_persistent_tape_sees_the_values_it_recorded():
    w1, w2 = tf.Variable(2.0), tf.Variable(3.0)
    opt = optimizers.SGD(1.0)
    with tf.GradientTape(persistent=True) as tape:
        loss = w1 * w2
    g1 = tape.gradient(loss, w1)
    opt.apply_gradients([(g1, w1)])
    g2 = tape.gradient(loss, w2)
    assert float(g2) == 2.0 and float(w1.numpy()) == -1.0


# ------------------------------------------------------------------ config ---
ADAM_KEYS = ["name", "learning_rate", "weight_decay", "clipnorm", "global_clipnorm", "clipvalue", "use_ema",
             "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps",
             "beta_1", "beta_2", "epsilon", "amsgrad"]


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam",
                                  "lion"])
def test_config_round_trip(name):
    opt = optimizers.get(name)
    opt.learning_rate = 0.125
    config = opt.get_config()
    clone = type(opt).from_config(config)
    assert clone.get_config() == config
    assert json.loads(json.dumps(optimizers.serialize(opt))) == optimizers.serialize(opt)
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert type(again) is type(opt) and again.get_config() == config


def test_adam_config_matches_keras_fixture():
    compile_config = json.loads(zipfile.ZipFile(FIXTURES / "m.keras").read("config.json"))["compile_config"]
    keras_optimizer = compile_config["optimizer"]
    opt = optimizers.deserialize(keras_optimizer)
    assert isinstance(opt, optimizers.Adam)
    assert list(opt.get_config()) == ADAM_KEYS
    assert optimizers.serialize(opt) == keras_optimizer
    sgd_config = json.loads(zipfile.ZipFile(FIXTURES / "sgd.keras").read("config.json"))["compile_config"]
    sgd = optimizers.get(sgd_config["optimizer"])
    assert optimizers.serialize(sgd) == sgd_config["optimizer"]


def test_schedule_config_round_trip():
    opt = optimizers.Adam(schedules.CosineDecay(0.1, 100, alpha=0.1, warmup_target=0.2, warmup_steps=10),
                          clipnorm=1.0)
    config = opt.get_config()
    assert config["learning_rate"]["module"] == "keras.optimizers.schedules"
    assert config["learning_rate"]["class_name"] == "CosineDecay"
    clone = optimizers.Adam.from_config(json.loads(json.dumps(config)))
    assert isinstance(clone._learning_rate, schedules.CosineDecay)
    assert clone.get_config() == config


def test_get_identifiers():
    assert isinstance(optimizers.get("ADAM"), optimizers.Adam)
    assert isinstance(optimizers.get("RMSprop"), optimizers.RMSprop)
    assert isinstance(optimizers.get({"class_name": "sgd", "config": {"learning_rate": 0.5}}), optimizers.SGD)
    opt = optimizers.Lion()
    assert optimizers.get(opt) is opt and optimizers.get(None) is None
    with pytest.raises(ValueError, match="Unknown optimizer: 'nope'"):
        optimizers.get("nope")
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        optimizers.get(3)


# ------------------------------------------------------------------ saving ---
def test_load_keras_adam_state_from_weights_h5():
    trainable = [_var((4, 8), "seq/dense/kernel"), _var((8,), "seq/dense/bias"),
                 _var((8,), "seq/batch_normalization/gamma"), _var((8,), "seq/batch_normalization/beta"),
                 _var((8, 3), "seq/dense_1/kernel"), _var((3,), "seq/dense_1/bias")]
    opt = optimizers.Adam(1e-3)
    opt.build(trainable)
    with h5py.File(FIXTURES / "m.weights.h5", "r") as f:
        group = f["optimizer/vars"]
        assert len(group) == len(opt.variables) == 14
        opt.load_own_variables(group)
        for i, v in enumerate(opt.variables):
            assert np.array_equal(v.numpy(), group[str(i)][()])
    assert int(opt.iterations.numpy()) == 2
    store = {}
    opt.save_own_variables(store)
    assert sorted(store, key=int) == [str(i) for i in range(14)] and store["0"].dtype == np.int64


def test_state_restored_before_build_continues_identically():
    def fresh():
        return [tf.Variable(f32([1.0, -1.0, 0.5])), tf.Variable(f32([[2.0]]))]

    rng = np.random.default_rng(0)
    grads = [[rng.standard_normal(3).astype(np.float32), rng.standard_normal((1, 1)).astype(np.float32)]
             for _ in range(4)]
    variables = fresh()
    opt = optimizers.Nadam(0.05)
    for g in grads[:2]:
        opt.apply_gradients(zip(map(tf.constant, g), variables))
    store = {}
    opt.save_own_variables(store)

    restored = fresh()
    for v, src in zip(restored, variables):
        v.assign(src.numpy())
    opt2 = optimizers.Nadam(0.05)
    opt2.load_own_variables(store)                  # not built yet: slots restored at build
    assert int(opt2.iterations.numpy()) == 2
    for g in grads[2:]:
        opt.apply_gradients(zip(map(tf.constant, g), variables))
        opt2.apply_gradients(zip(map(tf.constant, g), restored))
    for a, b in zip(variables, restored):
        assert np.array_equal(a.numpy(), b.numpy())


def test_load_mismatches():
    opt = optimizers.SGD(0.1, momentum=0.9)
    w = tf.Variable(f32([1.0, 2.0]))
    opt.build([w])
    with pytest.warns(UserWarning, match="Skipping variable loading"):
        opt.load_own_variables({"0": np.array(5), "1": np.float32(0.5)})
    assert int(opt.iterations.numpy()) == 0
    before = [v.numpy() for v in opt.variables]
    with pytest.raises(ValueError, match="expected shape"):
        opt.load_own_variables({"0": np.array(5), "1": np.float32(0.5), "2": f32([1, 2, 3])})
    assert all(np.array_equal(a, v.numpy()) for a, v in zip(before, opt.variables))


# -------------------------------------------------------------- end to end ---
def test_minimise_a_quadratic_with_gradient_tape():
    target = f32([[1.0, -2.0], [0.5, 3.0]])
    w = tf.Variable(np.zeros((2, 2), np.float32))
    b = tf.Variable(f32([1.0, 1.0]))
    opt = optimizers.Adam(learning_rate=0.1)
    storage = None
    for step in range(300):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(w, tf.eye(2)) - target)) + tf.reduce_sum(tf.square(b))
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        if step == 1:
            storage = weakref.ref(w._write_inplace())
    assert w._write_inplace() is storage()         # the released tape shares nothing: updated in place
    assert float(loss) < 1e-4
    assert np.allclose(w.numpy(), target, atol=1e-2) and np.allclose(b.numpy(), 0, atol=1e-2)
    assert int(opt.iterations.numpy()) == 300


def test_minimize_with_a_loss_callable():
    x = tf.Variable(3.0)
    opt = optimizers.SGD(learning_rate=0.1)
    opt.minimize(lambda: (x ** 2) / 2.0, [x])
    assert float(x.numpy()) == float(np.float32(3.0) - np.float32(0.1) * np.float32(3.0))
    with tf.GradientTape() as tape:
        loss = x ** 2
    opt.minimize(loss, [x], tape=tape)
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(tf.constant(1.0), [x])


# ---------------------------------------------------- threaded large updates ---
def test_large_variables_are_split_across_threads_bit_for_bit(monkeypatch):
    from tapeflow.kernels import optimizers as kernels
    monkeypatch.setattr(kernels, "MAX_THREADS", 3)
    shape = (700, 600)                                    # 420,000 elements: above PARALLEL_MIN_SIZE
    assert shape[0] * shape[1] >= kernels.PARALLEL_MIN_SIZE
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal(shape).astype(np.float32)
    w = tf.Variable(w0)
    opt = optimizers.Adam(0.01, weight_decay=0.1, amsgrad=True)
    ref, slots = w0.copy(), {k: np.zeros(shape, np.float32) for k in ("momentum", "velocity", "velocity_hat")}
    calls = []
    real_submit = kernels.ThreadPoolExecutor.submit
    monkeypatch.setattr(kernels.ThreadPoolExecutor, "submit",
                        lambda self, *a, **k: calls.append(a[0]) or real_submit(self, *a, **k))
    for t in range(1, 4):
        g = rng.standard_normal(shape).astype(np.float32)
        opt.apply_gradients([(tf.constant(g), w)])
        ref = reference_step("adam", {"amsgrad": True, "weight_decay": 0.1}, ref, g, slots, t, np.float32(0.01),
                             np.float32)
    assert np.array_equal(w.numpy(), ref)
    assert calls.count(kernels.adam_amsgrad) == 3 * 2       # two chunks handed to the pool, one run in place


def test_apply_gradients_inside_tf_function():
    def make():
        return tf.Variable(f32([1.0, -2.0])), optimizers.Adam(0.1)

    x = tf.constant(f32([0.5, 2.0]))
    w_eager, opt_eager = make()
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w_eager * x - 1.0))
        opt_eager.apply_gradients(zip(tape.gradient(loss, [w_eager]), [w_eager]))

    w, opt = make()

    @tf.function
    def train_step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * inputs - 1.0))
        grads = tape.gradient(loss, [w])
        opt.apply_gradients(zip(grads, [w]))
        return loss

    for _ in range(3):
        train_step(x)
    assert int(opt.iterations.numpy()) == 3
    assert np.array_equal(w.numpy(), w_eager.numpy())
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(opt.variables, opt_eager.variables))
