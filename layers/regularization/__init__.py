"""Regularization layers."""
from .dropout import Dropout  # noqa: F401
