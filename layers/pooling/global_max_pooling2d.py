"""GlobalMaxPooling2D: the maximum over the spatial axes of 2-D inputs (kept as size 1 with ``keepdims``)."""
from ..serialization_lib import keras_export
from .base_pooling import BaseGlobalPooling


@keras_export("keras.layers.GlobalMaxPooling2D")
class GlobalMaxPooling2D(BaseGlobalPooling):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, "max", data_format=data_format, keepdims=keepdims, **kwargs)
