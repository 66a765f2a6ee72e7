"""Core layers: Dense, EinsumDense, Embedding, InputLayer / Input."""
from .dense import Dense  # noqa: F401
from .einsum_dense import EinsumDense  # noqa: F401
from .embedding import Embedding  # noqa: F401
from .identity import Identity  # noqa: F401
from .input_layer import Input, InputLayer  # noqa: F401
from .lambda_layer import Lambda  # noqa: F401
