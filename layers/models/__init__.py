"""Models: Model, Functional, Sequential and the summary table."""
from .functional import Functional  # noqa: F401
from .model import Model  # noqa: F401
from .sequential import Sequential  # noqa: F401
