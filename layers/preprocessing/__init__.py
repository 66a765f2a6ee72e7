"""Preprocessing layers."""
from .normalization import Normalization  # noqa: F401
from .rescaling import Rescaling  # noqa: F401
from .integer_lookup import IntegerLookup  # noqa: F401
from .string_lookup import StringLookup  # noqa: F401
from .text_vectorization import TextVectorization  # noqa: F401
