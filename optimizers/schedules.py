"""Learning-rate schedules (``tapeflow.optimizers.schedules``, Keras 3's
``keras.optimizers.schedules``).

A schedule maps the optimizer's step (``optimizer.iterations``, read *before*
it is incremented) to a learning rate. As in Keras, the arithmetic is done in
the dtype of ``initial_learning_rate`` (float32 for a Python float), one
rounded operation at a time, so the values match Keras's bit for bit.
Calling a schedule returns a scalar ``tf.Tensor``.
"""
import math

import numpy as np

from tapeflow.framework.tensor import Tensor

_MODULE = "keras.optimizers.schedules"


def _float_array(value):
    """``value`` as a float scalar array: Python numbers become float32 (TensorFlow's
    default), numpy values and Tensors keep their float dtype."""
    own_dtype = isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "_value")
    arr = np.asarray(getattr(value, "_value", value))
    if arr.dtype.kind != "f" or not own_dtype:
        arr = arr.astype(np.float32)
    return arr


def _step_value(step, dtype):
    """The step (an int, a Tensor or the optimizer's ``iterations`` Variable) as a ``dtype`` scalar."""
    value = np.asarray(step)
    if value.ndim != 0:
        raise ValueError(f"A learning-rate schedule expects a scalar step. Received: step with shape {value.shape}")
    return dtype.type(value)


def _positive_steps(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value!r}")


class LearningRateSchedule:
    """The base class of learning-rate schedules.

    Subclasses implement ``__call__(step)`` (returning the learning rate at
    that step) and ``get_config()``; ``from_config`` rebuilds them. A schedule
    passed as an optimizer's ``learning_rate`` is evaluated at the
    optimizer's current iteration, before the iteration is incremented:

    >>> lr = ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    >>> opt = tapeflow.optimizers.SGD(learning_rate=lr)
    """

    def __call__(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()` to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _StaircaseDecay(LearningRateSchedule):
    """A decay driven by p = step / decay_steps (floored with ``staircase``): subclasses give ``_decay``."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase, name):
        _positive_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        lr0 = _float_array(self.initial_learning_rate)
        dt = lr0.dtype.type
        p = _step_value(step, lr0.dtype) / dt(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return Tensor(np.asarray(self._decay(lr0, dt, p)))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StaircaseDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``.

    With ``staircase=True`` the exponent is floored, so the rate drops in
    discrete intervals.
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decay(self, lr0, dt, p):
        return lr0 * dt(self.decay_rate) ** p


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        boundaries = list(boundaries)
        values = list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of `boundaries` should be 1 less than the length of `values`. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and values={values} "
                f"of length {len(values)}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        s = np.asarray(step)
        index = 0
        while index < len(self.boundaries) and s > self.boundaries[index]:
            index += 1
        return Tensor(_float_array(self.values[index]))

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end``.

    With ``cycle=True`` the decay restarts: ``decay_steps`` is multiplied by
    ``ceil(step / decay_steps)`` (1 at step 0) instead of clamping the step.
    """

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        _positive_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        lr0 = _float_array(self.initial_learning_rate)
        dt = lr0.dtype.type
        end = dt(self.end_learning_rate)
        power = dt(self.power)
        s = _step_value(step, lr0.dtype)
        decay_steps = dt(self.decay_steps)
        if self.cycle:
            multiplier = dt(1) if s == 0 else np.ceil(s / decay_steps)
            decay_steps = decay_steps * multiplier
        else:
            s = min(s, decay_steps)
        p = s / decay_steps
        return Tensor(np.asarray((lr0 - end) * (dt(1) - p) ** power + end))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(_StaircaseDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (the
    ratio floored when ``staircase=True``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decay(self, lr0, dt, p):
        return lr0 / (dt(1) + dt(self.decay_rate) * p)


class CosineDecay(LearningRateSchedule):
    """Cosine decay, optionally after a linear warmup.

    Without warmup: ``lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)``.
    With ``warmup_target`` set, the rate first rises linearly from
    ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps``, then
    decays from ``warmup_target`` over ``decay_steps``.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        _positive_steps("decay_steps", decay_steps)
        if warmup_target is not None and (isinstance(warmup_steps, bool) or not warmup_steps or warmup_steps < 0):
            raise ValueError(
                f"Argument `warmup_steps` must be > 0 when `warmup_target` is set. Received: "
                f"warmup_steps={warmup_steps!r}, warmup_target={warmup_target!r}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, decay_steps, start_lr):
        dt = start_lr.dtype.type
        fraction = step / decay_steps
        cosine = dt(0.5) * (dt(1) + np.cos(dt(math.pi) * fraction))
        return start_lr * (dt(1 - self.alpha) * cosine + dt(self.alpha))

    def __call__(self, step):
        lr0 = _float_array(self.initial_learning_rate)
        dt = lr0.dtype.type
        decay_steps = dt(self.decay_steps)
        s = _step_value(step, lr0.dtype)
        if self.warmup_target is None:
            return Tensor(np.asarray(self._decayed(min(s, decay_steps), decay_steps, lr0)))
        target = dt(self.warmup_target)
        warmup_steps = dt(self.warmup_steps)
        s = min(s, decay_steps + warmup_steps)
        if s < warmup_steps:
            value = (target - lr0) * (s / warmup_steps) + lr0
        else:
            value = self._decayed(s - warmup_steps, decay_steps, np.asarray(target))
        return Tensor(np.asarray(value, dtype=lr0.dtype))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter 2017).

    The first period lasts ``first_decay_steps``; each following period is
    ``t_mul`` times longer and starts from a rate ``m_mul`` times lower.
    Within a period the rate follows the cosine curve from the period's
    initial rate down to ``alpha`` times it.
    """

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                 name="SGDRDecay"):
        _positive_steps("first_decay_steps", first_decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        lr0 = _float_array(self.initial_learning_rate)
        dt = lr0.dtype.type
        one = dt(1)
        t_mul = dt(self._t_mul)
        m_mul = dt(self._m_mul)
        fraction = _step_value(step, lr0.dtype) / dt(self.first_decay_steps)
        if t_mul == one:
            restart = np.floor(fraction)
            fraction = fraction - restart
        else:
            restart = np.floor(np.log(one - fraction * (one - t_mul)) / np.log(t_mul))
            done = (one - t_mul ** restart) / (one - t_mul)
            fraction = (fraction - done) / t_mul ** restart
        m_fac = m_mul ** restart
        cosine = dt(0.5) * m_fac * (one + np.cos(dt(math.pi) * fraction))
        return Tensor(np.asarray(lr0 * (dt(1 - self.alpha) * cosine + dt(self.alpha))))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self._t_mul, "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BUILTIN = {cls.__name__: cls for cls in (
    ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay,
    CosineDecayRestarts)}


def serialize(learning_rate_schedule):
    """``{"module": "keras.optimizers.schedules", "class_name": ..., "config": ..., "registered_name": ...}``."""
    if not isinstance(learning_rate_schedule, LearningRateSchedule):
        raise TypeError(
            "`serialize` expects a LearningRateSchedule instance. Received: "
            f"{learning_rate_schedule!r} of type {type(learning_rate_schedule).__name__}")
    cls = type(learning_rate_schedule)
    builtin = _BUILTIN.get(cls.__name__) is cls
    return {"module": _MODULE if builtin else cls.__module__, "class_name": cls.__name__,
            "config": learning_rate_schedule.get_config(),
            "registered_name": None if builtin else cls.__name__}


def deserialize(config, custom_objects=None):
    """Rebuilds a schedule from ``serialize``'s dict (custom classes through ``custom_objects``)."""
    if isinstance(config, LearningRateSchedule):
        return config
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "Could not interpret learning rate schedule config: expected a dict with 'class_name' and "
            f"'config' keys. Received: {config!r}")
    class_name = config["class_name"]
    custom_objects = custom_objects or {}
    cls = (custom_objects.get(config.get("registered_name") or class_name) or custom_objects.get(class_name)
           or _BUILTIN.get(class_name))
    if cls is None:
        raise ValueError(
            f"Unknown learning rate schedule: '{class_name}'. Please ensure you are using a "
            "`tapeflow.optimizers.schedules.LearningRateSchedule` subclass and pass it in `custom_objects`. "
            f"Built-in schedules: {sorted(_BUILTIN)}")
    return cls.from_config(dict(config.get("config", {})))
