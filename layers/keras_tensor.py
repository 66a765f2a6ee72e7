"""KerasTensor: a symbolic tensor (shape and dtype, no value) for building functional models."""
from tapeflow.framework.tensor_shape import TensorShape


class KerasTensor:
    """What ``Input(...)`` and layers called on it return.

    ``_keras_history`` = (layer, node_index, tensor_index) says where it came from.
    """

    def __init__(self, shape, dtype="float32", name=None, sparse=False, record_history=True):
        self._shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = getattr(dtype, "name", dtype) or "float32"
        self.name = name
        self.sparse = bool(sparse)
        self._keras_history = None

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    def get_shape(self):
        return TensorShape(self._shape)

    def reshape(self, *_):
        raise TypeError(_SYMBOLIC_MESSAGE)

    def __repr__(self):
        return f"<KerasTensor shape={self._shape}, dtype={self.dtype}, sparse={self.sparse}, name={self.name}>"

    def __array__(self, *_args, **_kwargs):
        raise TypeError(_SYMBOLIC_MESSAGE)

    def numpy(self):
        raise TypeError(_SYMBOLIC_MESSAGE)

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a Python bool.")

    def __hash__(self):
        return id(self)


_SYMBOLIC_MESSAGE = (
    "A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. It doesn't have any actual numerical "
    "value. You cannot convert it to a NumPy array or use it in tapeflow ops. Use it only as the input of Keras "
    "layers, to build a functional model.")


def is_keras_tensor(x):
    return isinstance(x, KerasTensor)
