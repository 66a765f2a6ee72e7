"""Convolution layers."""
from .conv1d import Conv1D  # noqa: F401
