"""Merging layers: combine a list of inputs into one tensor."""
from .add import Add  # noqa: F401
from .average import Average  # noqa: F401
from .base_merge import Merge  # noqa: F401
from .concatenate import Concatenate  # noqa: F401
from .dot import Dot  # noqa: F401
from .functions import add, average, concatenate, dot, maximum, minimum, multiply, subtract  # noqa: F401
from .maximum import Maximum  # noqa: F401
from .minimum import Minimum  # noqa: F401
from .multiply import Multiply  # noqa: F401
from .subtract import Subtract  # noqa: F401
