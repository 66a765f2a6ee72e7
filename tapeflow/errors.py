"""tf.errors"""
from .framework.errors import InvalidArgumentError, NotFoundError, OpError, UnimplementedError  # noqa: F401
