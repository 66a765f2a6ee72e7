"""Minimum: the elementwise minimum of a list of inputs."""
import numpy as np

from tapeflow.ops import math_ops

from ..serialization_lib import keras_export
from .base_merge import Merge


@keras_export("keras.layers.Minimum")
class Minimum(Merge):
    _mask_fill = np.inf

    def _merge(self, a, b):
        return math_ops.minimum(a, b)
