"""CenterCrop: the central (height, width) window; an image smaller than that is cropped to the target
aspect ratio and resized up instead."""
from tapeflow.framework.tensor import host_array
from tapeflow.image.cropping import crop_to_bounding_box

from ..serialization_lib import keras_export
from .image_preprocessing_base import BaseImagePreprocessingLayer
from .resizing import smart_resize


@keras_export("keras.layers.CenterCrop")
class CenterCrop(BaseImagePreprocessingLayer):
    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width = int(height), int(width)

    def transform_batch(self, images):
        h, w = host_array(images).shape[1:3]
        if h >= self.height and w >= self.width:
            return self._float(crop_to_bounding_box(images, (h - self.height) // 2, (w - self.width) // 2,
                                                    self.height, self.width))
        return self._float(smart_resize(self._float(images), self.height, self.width))

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis, w_axis = self._spatial_axes(len(shape))
        shape[h_axis], shape[w_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"height": self.height, "width": self.width})
        return config
