"""Preprocessing layers."""
from .normalization import Normalization  # noqa: F401
from .rescaling import Rescaling  # noqa: F401
