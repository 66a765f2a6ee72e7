"""AutoGraph (``tf.autograph``): tf.function's conversion of Python control flow on tensors."""
from . import experimental  # noqa: F401
from .converter import convert, to_code  # noqa: F401
