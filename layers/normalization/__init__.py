"""Normalization layers."""
from .batch_normalization import BatchNormalization  # noqa: F401
from .layer_normalization import LayerNormalization  # noqa: F401
from .group_normalization import GroupNormalization  # noqa: F401
from .unit_normalization import UnitNormalization  # noqa: F401
