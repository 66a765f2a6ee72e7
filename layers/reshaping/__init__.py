"""Reshaping layers: change the shape of each sample, keeping the batch axis."""
from .flatten import Flatten  # noqa: F401
from .reshape import Reshape  # noqa: F401
