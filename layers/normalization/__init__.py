"""Normalization layers."""
from .batch_normalization import BatchNormalization  # noqa: F401
from .layer_normalization import LayerNormalization  # noqa: F401
