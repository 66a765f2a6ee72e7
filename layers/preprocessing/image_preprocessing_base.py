"""The shared frame of the image preprocessing layers: data_format, one image or a batch, training.

A subclass works on a channels-last batch (N, H, W, C): ``transform_batch`` for the deterministic
layers; the random layers draw their parameters with ``sample`` (ops seeded by the layer's ``seed``,
so a traced function draws anew on every call) and apply them with ``apply``, the identity at inference.
"""
from tapeflow.framework import dtypes
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops, math_ops, random_ops
from tapeflow.ops.common import to_tensor

from ..argument_validation import standardize_data_format
from ..layer import Layer


class BaseImagePreprocessingLayer(Layer):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)

    # -- layout ----------------------------------------------------------------
    def _to_batch(self, inputs):
        """(N, H, W, C) float tensor, whether the input was a single image."""
        x = to_tensor(inputs)
        if x.ndim not in (3, 4):
            raise ValueError(f"{type(self).__name__}: expected an image (rank 3) or a batch of images (rank 4), "
                             f"received an input of shape {x.shape}")
        single = x.ndim == 3
        if single:
            x = array_ops.expand_dims(x, 0)
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 2, 3, 1])
        return x, single

    def _from_batch(self, x, single):
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 3, 1, 2])
        return array_ops.squeeze(x, [0]) if single else x

    def _float(self, x):
        dtype = dtypes.as_dtype(self.compute_dtype)
        return x if x.dtype == dtype else math_ops.cast(x, dtype)

    @staticmethod
    def _as_integers_of(x, dtype):
        """A float result back in an integer input's dtype: rounded half to even, saturated."""
        if not dtype.is_integer:
            return x
        return math_ops.saturate_cast(math_ops.round(x), dtype)

    def _spatial_axes(self, rank):
        return (rank - 3, rank - 2) if self.data_format == "channels_last" else (rank - 2, rank - 1)

    def call(self, inputs):
        x, single = self._to_batch(inputs)
        return self._from_batch(self.transform_batch(x), single)

    def transform_batch(self, images):
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config


class BaseRandomLayer(BaseImagePreprocessingLayer):
    """Augmentation: active in training only (the default when called directly, as in Keras)."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.seed = seed

    def uniform(self, shape, low, high):
        return random_ops.uniform(shape, low, high, dtype=dtypes.float32, seed=self.seed)

    def call(self, inputs, training=True):
        if not training:
            return self.inference(inputs)
        x, single = self._to_batch(inputs)
        x = self._float(x)
        params = self.sample(*host_array(x).shape[:3])
        return self._from_batch(self.apply(x, params), single)

    def inference(self, inputs):
        """What the layer gives outside training: the input in the compute dtype (Keras's geometric layers)."""
        return self._float(to_tensor(inputs))

    def sample(self, batch, height, width):
        """The random parameters of one call, as ops."""
        raise NotImplementedError

    def apply(self, images, params):
        """The transform of a channels-last float batch with given parameters."""
        raise NotImplementedError

    def get_config(self):
        config = super().get_config()
        config["seed"] = self.seed
        return config


def factor_range(factor, name, low=-1.0, high=1.0, single=None):
    """A ``factor`` argument as (lower, upper): a pair as given, a number f as ``single(f)`` (default
    (-f, f)); every bound within [low, high]."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"The `{name}` argument should be a number (or a list of two numbers) in the range "
                             f"[{low:g}, {high:g}]. Received: {name}={factor}")
        bounds = (float(factor[0]), float(factor[1]))
    elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
        bounds = single(float(factor)) if single else (-abs(float(factor)), abs(float(factor)))
    else:
        raise ValueError(f"The `{name}` argument should be a number (or a list of two numbers). Received: "
                         f"{name}={factor}")
    if not all(low <= b <= high for b in bounds) or bounds[0] > bounds[1]:
        raise ValueError(f"The `{name}` argument should be a number (or a list of two numbers) in the range "
                         f"[{low:g}, {high:g}]. Received: {name}={factor}")
    return bounds


_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def check_fill_and_interpolation(fill_mode, interpolation):
    """The geometric layers' arguments, with Keras's errors."""
    if fill_mode not in _FILL_MODES:
        raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {list(_FILL_MODES)}.")
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one "
                                  f"{list(_INTERPOLATIONS)}.")
