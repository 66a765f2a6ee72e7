"""Weight initializers (``keras.initializers``), seeded and drawn as Keras 3 does on TensorFlow.

A random initializer made without a ``seed`` takes one from Python's ``random`` when it is made (so
``keras.utils.set_random_seed`` fixes a whole model's initial weights), and like Keras's it then returns the
same values at every call. The values are TensorFlow's ``stateless_uniform`` / ``stateless_normal`` /
``stateless_truncated_normal`` of the seed [seed mod (2**31 - 2), 0]: the numbers Keras's initializers give.
"""
import math
import random as _python_random

import numpy as np

from tapeflow.framework.recording import init_scope
from tapeflow.ops import stateless_random_ops

from .. import backend
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object


def _stateless(draw, shape, seed, dtype, *parameters):
    """``draw`` (a tf.random.stateless_* function) as a numpy array, computed eagerly even while tracing."""
    with init_scope():
        values = draw(tuple(int(d) for d in shape), np.array([seed % (2 ** 31 - 2), 0], np.int64), *parameters,
                      dtype=_np_dtype(dtype).name)
        return values.numpy()


def _uniform(shape, seed, dtype, minval, maxval):
    return _stateless(stateless_random_ops.stateless_uniform, shape, seed, dtype, minval, maxval)


def _normal(shape, seed, dtype, mean, stddev):
    return _stateless(stateless_random_ops.stateless_normal, shape, seed, dtype, mean, stddev)


def _truncated_normal(shape, seed, dtype, mean, stddev):
    return _stateless(stateless_random_ops.stateless_truncated_normal, shape, seed, dtype, mean, stddev)


def _np_dtype(dtype):
    dtype = backend.floatx() if dtype is None else getattr(dtype, "name", dtype)
    return np.dtype(str(dtype))


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) of a weight shape, as Keras computes them."""
    shape = tuple(int(d) for d in shape)
    if input_axes is not None or output_axes is not None:
        fan_in = int(np.prod([shape[a] for a in (input_axes or [])])) if input_axes else 1
        fan_out = int(np.prod([shape[a] for a in (output_axes or [])])) if output_axes else 1
        return fan_in, fan_out
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


@keras_export("keras.initializers.Initializer")
class Initializer:
    """Base class: ``__call__(shape, dtype=None)`` returns a numpy array."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"Initializer subclasses must implement `__call__()`. Received: {type(self).__name__}")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.__class__.from_config(self.get_config())

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


@keras_export("keras.initializers.Constant")
class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return np.full(tuple(shape), self.value, dtype=_np_dtype(dtype))

    def get_config(self):
        value = self.value
        return {"value": value.tolist() if isinstance(value, np.ndarray) else value}


@keras_export("keras.initializers.Zeros")
class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return np.zeros(tuple(shape), dtype=_np_dtype(dtype))


@keras_export("keras.initializers.Ones")
class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return np.ones(tuple(shape), dtype=_np_dtype(dtype))


@keras_export("keras.initializers.Identity")
class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: shape={shape} "
                             f"of rank {len(shape)}.")
        return (self.gain * np.eye(*shape)).astype(_np_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


class _Random(Initializer):
    """``seed`` is the configured seed (None stays None in the config); ``_seed`` the one the values come from."""

    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"`seed` argument should be an instance of `int` or None. Received: seed={seed!r}")
        self.seed = seed
        self._seed = int(seed) if seed is not None else _python_random.randint(1, int(1e9))


@keras_export("keras.initializers.RandomNormal")
class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return _normal(shape, self._seed, dtype, self.mean, self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


@keras_export("keras.initializers.TruncatedNormal")
class TruncatedNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return _truncated_normal(shape, self._seed, dtype, self.mean, self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


@keras_export("keras.initializers.RandomUniform")
class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return _uniform(shape, self._seed, dtype, self.minval, self.maxval)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


@keras_export("keras.initializers.VarianceScaling")
class VarianceScaling(_Random):
    """Samples with variance ``scale / n``, n the fan in, fan out or their average."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        super().__init__(seed)
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: expected one of 'fan_in', 'fan_out', 'fan_avg'. "
                             f"Received: mode={mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: expected one of 'uniform', 'truncated_normal', "
                             f"'untruncated_normal'. Received: distribution={distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            return _truncated_normal(shape, self._seed, dtype, 0.0, math.sqrt(scale) / 0.87962566103423978)
        if self.distribution == "untruncated_normal":
            return _normal(shape, self._seed, dtype, 0.0, math.sqrt(scale))
        limit = math.sqrt(3.0 * scale)
        return _uniform(shape, self._seed, dtype, -limit, limit)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "input_axes": self.input_axes, "output_axes": self.output_axes}


def _variance_scaling_preset(class_name, scale, mode, distribution):
    class Preset(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed,
                             input_axes=input_axes, output_axes=output_axes)

        def get_config(self):
            return {"seed": self.seed, "input_axes": self.input_axes, "output_axes": self.output_axes}

    Preset.__name__ = Preset.__qualname__ = class_name
    Preset.__doc__ = f"VarianceScaling(scale={scale}, mode={mode!r}, distribution={distribution!r})."
    return keras_export(f"keras.initializers.{class_name}")(Preset)


GlorotUniform = _variance_scaling_preset("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _variance_scaling_preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _variance_scaling_preset("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _variance_scaling_preset("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling_preset("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _variance_scaling_preset("LecunNormal", 1.0, "fan_in", "truncated_normal")


@keras_export("keras.initializers.Orthogonal")
class Orthogonal(_Random):
    """A (semi-)orthogonal matrix times ``gain``, from the QR of a normal sample."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: shape={shape} "
                             f"of rank {len(shape)}.")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        flat = _normal((max(rows, cols), min(rows, cols)), self._seed, dtype, 0.0, 1.0)
        q, r = np.linalg.qr(flat)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (self.gain * q.reshape(shape)).astype(_np_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


OrthogonalInitializer = Orthogonal

_ALIASES = {
    "zeros": Zeros, "zero": Zeros, "ones": Ones, "one": Ones, "constant": Constant, "identity": Identity,
    "random_normal": RandomNormal, "normal": RandomNormal, "random_uniform": RandomUniform,
    "uniform": RandomUniform, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_uniform": HeUniform,
    "he_normal": HeNormal, "lecun_uniform": LecunUniform, "lecun_normal": LecunNormal,
    "orthogonal": Orthogonal,
}
_BY_CLASS = {cls.__name__: cls for cls in set(_ALIASES.values())}


def serialize(initializer):
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, custom_objects=custom_objects, module_objects=_BY_CLASS)


def get(identifier):
    """An Initializer from a name ("glorot_uniform"), a config dict, an instance or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _ALIASES.get(identifier) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret initializer identifier: {identifier}")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")
