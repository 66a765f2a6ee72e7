"""GlobalAveragePooling2D: the mean over the spatial axes of 2-D inputs (kept as size 1 with ``keepdims``)."""
from ..serialization_lib import keras_export
from .base_pooling import BaseGlobalPooling


@keras_export("keras.layers.GlobalAveragePooling2D")
class GlobalAveragePooling2D(BaseGlobalPooling):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, "avg", data_format=data_format, keepdims=keepdims, **kwargs)
