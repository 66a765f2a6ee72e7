"""tf.errors"""
from .framework.errors import (InvalidArgumentError, NotFoundError, OpError, OutOfRangeError,  # noqa: F401
                               UnimplementedError)
