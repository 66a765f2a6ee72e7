"""tapeflow.optimizers.schedules: values against the formulas (computed in
double precision with the math module), float32 results, configs and
serialization in Keras 3's format."""
import json
import math

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import optimizers
from tapeflow.optimizers import schedules

STEPS = [0, 1, 2, 5, 9, 10, 11, 37, 100, 250]


def exponential(step, lr0, ds, rate, staircase=False):
    p = step / ds
    return lr0 * rate ** (math.floor(p) if staircase else p)


def polynomial(step, lr0, ds, end=1e-4, power=1.0, cycle=False):
    if cycle:
        ds = ds * (1 if step == 0 else math.ceil(step / ds))
    else:
        step = min(step, ds)
    return (lr0 - end) * (1 - step / ds) ** power + end


def inverse_time(step, lr0, ds, rate, staircase=False):
    p = step / ds
    return lr0 / (1 + rate * (math.floor(p) if staircase else p))


def cosine(step, lr0, ds, alpha=0.0, warmup_target=None, warmup_steps=0):
    if warmup_target is None:
        step = min(step, ds)
        return lr0 * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * step / ds)) + alpha)
    if step < warmup_steps:
        return lr0 + (warmup_target - lr0) * step / warmup_steps
    step = min(step - warmup_steps, ds)
    return warmup_target * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * step / ds)) + alpha)


def cosine_restarts(step, lr0, first, t_mul=2.0, m_mul=1.0, alpha=0.0):
    """Walks the periods one by one (no closed form), as SGDR describes them."""
    start, length, scale = 0.0, float(first), 1.0
    while step >= start + length:
        start += length
        length *= t_mul
        scale *= m_mul
    fraction = (step - start) / length
    return lr0 * ((1 - alpha) * scale * 0.5 * (1 + math.cos(math.pi * fraction)) + alpha)


CASES = [
    (lambda: schedules.ExponentialDecay(0.1, 10, 0.96), lambda s: exponential(s, 0.1, 10, 0.96)),
    (lambda: schedules.ExponentialDecay(0.5, 4, 0.5, staircase=True),
     lambda s: exponential(s, 0.5, 4, 0.5, staircase=True)),
    (lambda: schedules.PolynomialDecay(0.1, 100), lambda s: polynomial(s, 0.1, 100)),
    (lambda: schedules.PolynomialDecay(0.1, 30, end_learning_rate=0.01, power=2.0, cycle=True),
     lambda s: polynomial(s, 0.1, 30, 0.01, 2.0, cycle=True)),
    (lambda: schedules.InverseTimeDecay(0.2, 7, 0.5), lambda s: inverse_time(s, 0.2, 7, 0.5)),
    (lambda: schedules.InverseTimeDecay(0.2, 7, 0.5, staircase=True),
     lambda s: inverse_time(s, 0.2, 7, 0.5, staircase=True)),
    (lambda: schedules.CosineDecay(0.1, 100), lambda s: cosine(s, 0.1, 100)),
    (lambda: schedules.CosineDecay(0.1, 100, alpha=0.2), lambda s: cosine(s, 0.1, 100, alpha=0.2)),
    (lambda: schedules.CosineDecay(0.0, 200, warmup_target=0.4, warmup_steps=10),
     lambda s: cosine(s, 0.0, 200, warmup_target=0.4, warmup_steps=10)),
    (lambda: schedules.CosineDecayRestarts(0.1, 10), lambda s: cosine_restarts(s, 0.1, 10)),
    (lambda: schedules.CosineDecayRestarts(0.1, 8, t_mul=1.0, m_mul=0.5, alpha=0.1),
     lambda s: cosine_restarts(s, 0.1, 8, 1.0, 0.5, 0.1)),
    (lambda: schedules.CosineDecayRestarts(1.0, 5, t_mul=3.0, m_mul=0.8),
     lambda s: cosine_restarts(s, 1.0, 5, 3.0, 0.8)),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_schedule_values(index):
    make, formula = CASES[index]
    schedule = make()
    for step in STEPS:
        value = schedule(step)
        assert isinstance(value, tf.Tensor) and value.dtype == tf.float32 and value.shape.as_list() == []
        assert float(value) == pytest.approx(formula(step), rel=2e-6, abs=1e-8), f"step {step}"


def test_piecewise_constant_boundaries():
    schedule = schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    got = [float(schedule(s)) for s in (0, 10, 11, 20, 21, 1000)]
    assert got == [1.0, 1.0, 0.5, 0.5, float(np.float32(0.1)), float(np.float32(0.1))]
    with pytest.raises(ValueError, match="1 less than the length of `values`"):
        schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5])


def test_exact_float32_values():
    schedule = schedules.ExponentialDecay(0.1, 1, 0.5)
    assert [schedule(s).numpy() for s in range(3)] == [np.float32(0.1), np.float32(0.05), np.float32(0.025)]
    # float32 arithmetic, one rounding per operation, as Keras computes it
    p = np.float32(7) / np.float32(10)
    assert schedules.ExponentialDecay(0.1, 10, 0.96)(7).numpy() == np.float32(0.1) * np.float32(0.96) ** p


def test_schedule_accepts_the_iterations_variable():
    step = tf.Variable(np.int64(3), trainable=False)
    assert float(schedules.InverseTimeDecay(1.0, 1, 1.0)(step)) == 0.25


def test_invalid_arguments():
    with pytest.raises(ValueError, match="decay_steps"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="first_decay_steps"):
        schedules.CosineDecayRestarts(0.1, -1)
    with pytest.raises(ValueError, match="warmup_steps"):
        schedules.CosineDecay(0.1, 10, warmup_target=0.5)


ALL = [schedules.ExponentialDecay(0.1, 10, 0.9, staircase=True),
       schedules.PiecewiseConstantDecay([5, 10], [0.3, 0.2, 0.1]),
       schedules.PolynomialDecay(0.1, 50, end_learning_rate=0.001, power=0.5, cycle=True),
       schedules.InverseTimeDecay(0.1, 10, 0.5),
       schedules.CosineDecay(0.1, 100, alpha=0.01, warmup_target=0.2, warmup_steps=5),
       schedules.CosineDecayRestarts(0.1, 20, t_mul=1.5, m_mul=0.9, alpha=0.05)]


@pytest.mark.parametrize("schedule", ALL, ids=lambda s: type(s).__name__)
def test_config_and_serialization_round_trip(schedule):
    config = schedule.get_config()
    clone = type(schedule).from_config(config)
    assert clone.get_config() == config
    payload = json.loads(json.dumps(schedules.serialize(schedule)))
    assert payload == {"module": "keras.optimizers.schedules", "class_name": type(schedule).__name__,
                       "config": config, "registered_name": None}
    restored = schedules.deserialize(payload)
    assert type(restored) is type(schedule)
    for step in (0, 3, 7, 60, 200):
        assert restored(step).numpy() == schedule(step).numpy()


def test_keras_config_keys_and_default_names():
    assert schedules.ExponentialDecay(0.1, 1, 0.5).get_config() == {
        "initial_learning_rate": 0.1, "decay_steps": 1, "decay_rate": 0.5, "staircase": False,
        "name": "ExponentialDecay"}
    assert schedules.CosineDecay(0.1, 10).get_config() == {
        "initial_learning_rate": 0.1, "decay_steps": 10, "alpha": 0.0, "name": "CosineDecay",
        "warmup_target": None, "warmup_steps": 0}
    assert schedules.CosineDecayRestarts(0.1, 10).get_config()["name"] == "SGDRDecay"
    assert schedules.PiecewiseConstantDecay([1], [1.0, 0.5]).get_config()["name"] == "PiecewiseConstant"


def test_custom_schedule_through_custom_objects():
    class Halving(schedules.LearningRateSchedule):
        def __init__(self, start):
            self.start = start

        def __call__(self, step):
            return self.start / (2.0 ** float(step))

        def get_config(self):
            return {"start": self.start}

    payload = schedules.serialize(Halving(0.8))
    assert payload["registered_name"] == "Halving"
    with pytest.raises(ValueError, match="Unknown learning rate schedule: 'Halving'"):
        schedules.deserialize(payload)
    restored = schedules.deserialize(payload, custom_objects={"Halving": Halving})
    assert restored(2) == 0.2

    opt = optimizers.SGD(Halving(0.8))
    w = tf.Variable(0.0)
    for _ in range(2):
        opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == np.float32(-0.8) - np.float32(0.4)
    clone = optimizers.SGD.from_config(opt.get_config(), custom_objects={"Halving": Halving})
    assert isinstance(clone._learning_rate, Halving)


def test_schedule_driven_training_uses_pre_increment_step():
    opt = optimizers.SGD(schedules.PiecewiseConstantDecay([1], [1.0, 0.5]))
    w = tf.Variable(0.0)
    deltas = []
    for _ in range(3):
        before = float(w.numpy())
        opt.apply_gradients([(tf.constant(1.0), w)])
        deltas.append(before - float(w.numpy()))
    assert deltas == [1.0, 1.0, 0.5]                        # steps 0 and 1 are <= the boundary 1
