"""UpSampling2D: repeats rows and columns (nearest), or resizes by the size factors as tf.image.resize does (bilinear, bicubic, area)."""
from tapeflow.image import resize
from tapeflow.ops import array_ops

from ..argument_validation import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization_lib import keras_export


_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


@keras_export("keras.layers.UpSampling2D")
class UpSampling2D(Layer):
    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = standardize_tuple(size, 2, "size")
        self.data_format = standardize_data_format(data_format)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Invalid value for argument `interpolation`. Expected of one {_INTERPOLATIONS}. "
                             f"Received: interpolation={interpolation}")
        if interpolation in ("lanczos3", "lanczos5"):
            raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not implemented in tapeflow;"
                                      " use 'nearest', 'bilinear', 'bicubic' or 'area'.")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def _axes(self):
        return (1, 2) if self.data_format == "channels_last" else (2, 3)

    def call(self, inputs):
        if self.interpolation != "nearest":
            return self._resize(inputs)
        x = inputs
        for axis, factor in zip(self._axes(), self.size):
            x = array_ops.repeat(x, factor, axis=axis)
        return x

    def _resize(self, inputs):
        """tf.image.resize (half-pixel centres, no antialiasing) to the multiplied height and width."""
        x = inputs
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 2, 3, 1])
        height, width = x.shape[1], x.shape[2]
        if height is None or width is None:
            raise ValueError(f"UpSampling2D(interpolation={self.interpolation!r}) needs a known height and width; "
                             f"received inputs of shape {tuple(inputs.shape)}.")
        x = resize(x, (height * self.size[0], width * self.size[1]), method=self.interpolation)
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 3, 1, 2])
        return x

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, factor in zip(self._axes(), self.size):
            shape[axis] = None if shape[axis] is None else shape[axis] * factor
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"size": self.size, "data_format": self.data_format, "interpolation": self.interpolation})
        return config
