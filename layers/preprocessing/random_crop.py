"""RandomCrop: in training, a random (height, width) window of the batch (images smaller than that are
cropped to the target's aspect ratio and resized); the identity at inference, as in Keras 3.15."""
from tapeflow.framework import dtypes
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops.common import to_tensor

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseRandomLayer
from .resizing import smart_resize


@keras_export("keras.layers.RandomCrop")
class RandomCrop(BaseRandomLayer):
    def __init__(self, height, width, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs, training=True):
        if not training:
            x = to_tensor(inputs)
            return x if x.dtype.is_integer else self._float(x)     # Keras 3.15's inference dtypes
        x, single = self._to_batch(inputs)
        h, w = host_array(x).shape[1:3]
        if h >= self.height and w >= self.width:
            out = self._float(self.apply(x, self.sample(host_array(x).shape[0], h, w)))
        else:
            out = self._float(smart_resize(self._float(x), self.height, self.width))
        return self._from_batch(out, single)

    def sample(self, batch, height, width):
        """One window for the whole batch: its top-left corner."""
        limits = [float(height - self.height + 1), float(width - self.width + 1)]
        corner = math_ops.floor(math_ops.multiply(self.uniform((2,), 0.0, 1.0), limits))
        corner = math_ops.minimum(math_ops.cast(corner, dtypes.int32), [int(l) - 1 for l in limits])
        return {"offsets": corner}

    def apply(self, images, params):
        top, left = params["offsets"][0], params["offsets"][1]
        rows = math_ops.add(top, array_ops.range_(self.height, dtype=dtypes.int32))
        cols = math_ops.add(left, array_ops.range_(self.width, dtype=dtypes.int32))
        return array_ops.gather(array_ops.gather(images, rows, axis=1), cols, axis=2)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis, w_axis = self._spatial_axes(len(shape))
        shape[h_axis], shape[w_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"height": self.height, "width": self.width})
        return config
