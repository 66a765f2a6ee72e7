"""tf.errors"""
from .framework.errors import (DataLossError, InvalidArgumentError, NotFoundError, OpError, OutOfRangeError,  # noqa: F401
                               UnimplementedError)
