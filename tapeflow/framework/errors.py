"""TensorFlow's error classes (``tf.errors``)."""


class OpError(Exception):
    def __init__(self, message, op=None):
        super().__init__(message)
        self.message = message
        self.op = op


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot work with (shape, dtype, value)."""


class NotFoundError(OpError):
    pass


class UnimplementedError(OpError, NotImplementedError):
    pass


class DataLossError(OpError):
    """Unrecoverable data loss or corruption (a damaged record in a file)."""


class OutOfRangeError(OpError):
    """An iteration ran past the end of its input (``iterator.get_next()`` on an exhausted dataset)."""


def dtype_word(dtype):
    """TensorFlow's C-level name of a dtype, as used in its error messages."""
    return {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)
