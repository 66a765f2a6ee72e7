"""Merging layers."""
from .merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract  # noqa: F401
