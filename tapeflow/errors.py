"""tf.errors"""
from .framework.errors import InvalidArgumentError, NotFoundError, OpError, UnimplementedError  # noqa: F401


class OutOfRangeError(OpError):
    """An iteration ran past the end of its input (``iterator.get_next()`` on an exhausted dataset)."""
