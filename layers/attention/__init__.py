"""Attention layers: MultiHeadAttention, Attention, AdditiveAttention."""
from .additive_attention import AdditiveAttention  # noqa: F401
from .attention import Attention  # noqa: F401
from .multi_head_attention import MultiHeadAttention  # noqa: F401
