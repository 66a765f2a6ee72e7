"""Preprocessing layers."""
from .integer_lookup import IntegerLookup  # noqa: F401
from .string_lookup import StringLookup  # noqa: F401
from .text_vectorization import TextVectorization  # noqa: F401
