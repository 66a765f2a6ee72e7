"""Reshaping layers."""
from .reshaping import Flatten, Reshape  # noqa: F401
