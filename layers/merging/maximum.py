"""Maximum: the elementwise maximum of a list of inputs."""
import numpy as np

from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Maximum")
class Maximum(Merge):
    _mask_fill = -np.inf

    def _merge(self, a, b):
        return math_ops.maximum(a, b)
