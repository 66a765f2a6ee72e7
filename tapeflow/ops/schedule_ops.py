"""Learning-rate schedules as ops: the rate at a step (Keras 3's built-in schedules).

Each op takes the step (a scalar: the optimizer's ``iterations``) and the
schedule's configuration as attributes, so a traced training step computes
the rate from the step at every call, and a saved one stores the schedule as
data. As in Keras, the arithmetic is done in the dtype of the initial rate
(``dtype``), one rounded operation at a time, so the values match Keras's bit
for bit. Not differentiable (a step is a count).
"""
import math

import numpy as np

from ..framework.errors import InvalidArgumentError
from .common import register_op


def _step_value(step, dt):
    step = np.asarray(step)
    if step.ndim != 0:
        raise InvalidArgumentError(f"A learning-rate schedule expects a scalar step. Received: step with shape "
                                   f"{step.shape}")
    return dt(step)


def _staircase_fraction(step, decay_steps, staircase, dt):
    p = _step_value(step, dt) / dt(decay_steps)
    return np.floor(p) if staircase else p


@register_op("ExponentialDecaySchedule")
def exponential_decay(step, *, initial_learning_rate, decay_steps, decay_rate, staircase, dtype):
    dt = np.dtype(dtype).type
    p = _staircase_fraction(step, decay_steps, staircase, dt)
    return np.asarray(dt(initial_learning_rate) * dt(decay_rate) ** p)


@register_op("InverseTimeDecaySchedule")
def inverse_time_decay(step, *, initial_learning_rate, decay_steps, decay_rate, staircase, dtype):
    dt = np.dtype(dtype).type
    p = _staircase_fraction(step, decay_steps, staircase, dt)
    return np.asarray(dt(initial_learning_rate) / (dt(1) + dt(decay_rate) * p))


@register_op("PiecewiseConstantSchedule")
def piecewise_constant(step, *, boundaries, values, dtype):
    if len(values) != len(boundaries) + 1:
        raise InvalidArgumentError(f"PiecewiseConstantSchedule: {len(values)} values for {len(boundaries)} "
                                   "boundaries; there must be one value more than boundaries")
    s = np.asarray(step)
    index = 0
    while index < len(boundaries) and s > boundaries[index]:
        index += 1
    return np.asarray(values[index], dtype=dtype)


@register_op("PolynomialDecaySchedule")
def polynomial_decay(step, *, initial_learning_rate, decay_steps, end_learning_rate, power, cycle, dtype):
    dt = np.dtype(dtype).type
    lr0, end, power = dt(initial_learning_rate), dt(end_learning_rate), dt(power)
    s = _step_value(step, dt)
    decay_steps = dt(decay_steps)
    if cycle:
        multiplier = dt(1) if s == 0 else np.ceil(s / decay_steps)
        decay_steps = decay_steps * multiplier
    else:
        s = min(s, decay_steps)
    p = s / decay_steps
    return np.asarray((lr0 - end) * (dt(1) - p) ** power + end)


def _cosine(step, decay_steps, start_lr, alpha, dt):
    fraction = step / decay_steps
    cosine = dt(0.5) * (dt(1) + np.cos(dt(math.pi) * fraction))
    return start_lr * (dt(1 - alpha) * cosine + dt(alpha))


@register_op("CosineDecaySchedule")
def cosine_decay(step, *, initial_learning_rate, decay_steps, alpha, warmup_target, warmup_steps, dtype):
    """``warmup_target`` None: no warmup."""
    dt = np.dtype(dtype).type
    lr0 = dt(initial_learning_rate)
    decay_steps = dt(decay_steps)
    s = _step_value(step, dt)
    if warmup_target is None:
        return np.asarray(_cosine(min(s, decay_steps), decay_steps, lr0, alpha, dt))
    target = dt(warmup_target)
    warmup_steps = dt(warmup_steps)
    s = min(s, decay_steps + warmup_steps)
    if s < warmup_steps:
        value = (target - lr0) * (s / warmup_steps) + lr0
    else:
        value = _cosine(s - warmup_steps, decay_steps, target, alpha, dt)
    return np.asarray(value, dtype=dtype)


@register_op("CosineDecayRestartsSchedule")
def cosine_decay_restarts(step, *, initial_learning_rate, first_decay_steps, t_mul, m_mul, alpha, dtype):
    dt = np.dtype(dtype).type
    lr0, one, t_mul, m_mul = dt(initial_learning_rate), dt(1), dt(t_mul), dt(m_mul)
    fraction = _step_value(step, dt) / dt(first_decay_steps)
    if t_mul == one:
        restart = np.floor(fraction)
        fraction = fraction - restart
    else:
        restart = np.floor(np.log(one - fraction * (one - t_mul)) / np.log(t_mul))
        done = (one - t_mul ** restart) / (one - t_mul)
        fraction = (fraction - done) / t_mul ** restart
    m_fac = m_mul ** restart
    cosine = dt(0.5) * m_fac * (one + np.cos(dt(math.pi) * fraction))
    return np.asarray(lr0 * (dt(1 - alpha) * cosine + dt(alpha)))
