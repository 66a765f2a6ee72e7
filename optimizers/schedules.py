"""Learning-rate schedules (``tapeflow.optimizers.schedules``, Keras 3's
``keras.optimizers.schedules``).

A schedule maps the optimizer's step (``optimizer.iterations``, read *before*
it is incremented) to a learning rate. As in Keras, the arithmetic is done in
the dtype of ``initial_learning_rate`` (float32 for a Python float), one
rounded operation at a time, so the values match Keras's bit for bit.
Calling a schedule returns a scalar ``tf.Tensor``, computed by the schedule's
op (``tapeflow/ops/schedule_ops.py``): a traced training step evaluates it at
every call.
"""
import numpy as np

from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.recording import execute
from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops
from tapeflow.saving.registry import find, keras_export
from tapeflow.saving.serialization_lib import instantiate, serialize_keras_object

_MODULE = "keras.optimizers.schedules"


def _float_array(value):
    """``value`` as a float scalar array: Python numbers become float32 (TensorFlow's
    default), numpy values and Tensors keep their float dtype."""
    own_dtype = isinstance(value, (np.ndarray, np.generic, Tensor, Variable))
    arr = host_array(value)
    if arr.dtype.kind != "f" or not own_dtype:
        arr = arr.astype(np.float32)
    return arr


def _rate(op_type, step, initial_value, **config):
    """The schedule op ``op_type`` at ``step``, computed in the dtype of ``initial_value``.

    A tensor of steps (``schedule(tf.range(100))``, to plot a schedule) gives the rates elementwise, in its shape:
    the scalar op runs at each step, so every value is the one training would use."""
    step = convert_to_tensor(step)
    attrs = dict(config, dtype=_float_array(initial_value).dtype.name)
    if step.shape.rank == 0:
        return execute(op_type, (step,), attrs)
    if step.shape.rank is None or not step.shape.is_fully_defined():
        raise ValueError(f"A learning-rate schedule needs a step of known shape; received shape {step.shape}")
    steps = array_ops.unstack(array_ops.reshape(step, [-1])) if step.shape.num_elements() else []
    rates = [execute(op_type, (s,), attrs) for s in steps]
    if not rates:
        return convert_to_tensor(np.zeros(step.shape.as_list(), dtype=attrs["dtype"]))
    return array_ops.reshape(array_ops.stack(rates), step.shape.as_list())


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
        return _rate(self._op, step, self.initial_learning_rate,
                     initial_learning_rate=float(_float_array(self.initial_learning_rate)),
                     decay_steps=self.decay_steps, decay_rate=float(self.decay_rate), staircase=bool(self.staircase))

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

    _op = "ExponentialDecaySchedule"


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
        return _rate("PiecewiseConstantSchedule", step, self.values[0],
                     boundaries=[float(b) for b in self.boundaries], values=[float(v) for v in self.values])

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
        return _rate("PolynomialDecaySchedule", step, self.initial_learning_rate,
                     initial_learning_rate=float(_float_array(self.initial_learning_rate)),
                     decay_steps=self.decay_steps, end_learning_rate=float(self.end_learning_rate),
                     power=float(self.power), cycle=bool(self.cycle))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(_StaircaseDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (the
    ratio floored when ``staircase=True``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    _op = "InverseTimeDecaySchedule"


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

    def __call__(self, step):
        return _rate("CosineDecaySchedule", step, self.initial_learning_rate,
                     initial_learning_rate=float(_float_array(self.initial_learning_rate)),
                     decay_steps=self.decay_steps, alpha=float(self.alpha),
                     warmup_target=None if self.warmup_target is None else float(self.warmup_target),
                     warmup_steps=self.warmup_steps)

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
        return _rate("CosineDecayRestartsSchedule", step, self.initial_learning_rate,
                     initial_learning_rate=float(_float_array(self.initial_learning_rate)),
                     first_decay_steps=self.first_decay_steps, t_mul=float(self._t_mul), m_mul=float(self._m_mul),
                     alpha=float(self.alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self._t_mul, "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BUILTIN = {cls.__name__: cls for cls in (
    ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay,
    CosineDecayRestarts)}
for _cls in _BUILTIN.values():
    keras_export(f"{_MODULE}.{_cls.__name__}")(_cls)


def serialize(learning_rate_schedule):
    """``{"module": "keras.optimizers.schedules", "class_name": ..., "config": ..., "registered_name": ...}``."""
    if not isinstance(learning_rate_schedule, LearningRateSchedule):
        raise TypeError(
            "`serialize` expects a LearningRateSchedule instance. Received: "
            f"{learning_rate_schedule!r} of type {type(learning_rate_schedule).__name__}")
    return serialize_keras_object(learning_rate_schedule)


def deserialize(config, custom_objects=None):
    """Rebuilds a schedule from ``serialize``'s dict (custom classes from the registry or ``custom_objects``)."""
    if isinstance(config, LearningRateSchedule):
        return config
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "Could not interpret learning rate schedule config: expected a dict with 'class_name' and "
            f"'config' keys. Received: {config!r}")
    class_name = config["class_name"]
    cls = find(class_name, config.get("registered_name"), config.get("module"), custom_objects)
    if cls is None:
        raise ValueError(
            f"Unknown learning rate schedule: '{class_name}'. Please ensure you are using a "
            "`tapeflow.optimizers.schedules.LearningRateSchedule` subclass and pass it in `custom_objects`. "
            f"Built-in schedules: {sorted(_BUILTIN)}")
    return instantiate(cls, dict(config.get("config", {})))
