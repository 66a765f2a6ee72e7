"""InputLayer and Input(): the entry points of a functional model."""
from .. import backend
from ..keras_tensor import KerasTensor
from ..layer import Layer
from ..node import Node
from ..serialization_lib import keras_export


@keras_export("keras.layers.InputLayer")
class InputLayer(Layer):
    """Holds the symbolic input tensor of a model; ``batch_shape`` includes the batch axis (None)."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, input_tensor=None,
                 optional=False, name=None, **kwargs):
        legacy = kwargs.pop("batch_input_shape", None)
        legacy_shape = kwargs.pop("input_shape", None)
        kwargs.pop("ragged", None)
        if batch_shape is None and legacy is not None:
            batch_shape = legacy
        if shape is None and legacy_shape is not None:
            shape = legacy_shape
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to InputLayer: {kwargs}")
        if sparse:
            raise ValueError("InputLayer: sparse inputs are not supported by tapeflow.")
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if batch_size is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `batch_size` and `batch_shape` at the same time.")
        if input_tensor is not None:
            if not isinstance(input_tensor, KerasTensor):
                raise ValueError(f"Argument `input_tensor` must be a KerasTensor. Received invalid type: "
                                 f"input_tensor={input_tensor} (of type {type(input_tensor)})")
            batch_shape = input_tensor.shape
        if shape is None and batch_shape is None:
            raise ValueError("You must pass a `shape` argument.")
        if shape is not None:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size,) + shape
        name = name or backend.unique_name("input_layer")
        super().__init__(name=name)
        self._batch_shape = tuple(None if d is None else int(d) for d in batch_shape)
        self._input_dtype = backend.floatx() if dtype is None else getattr(dtype, "name", dtype)
        self.optional = bool(optional)
        self.sparse = False
        tensor = KerasTensor(self._batch_shape, dtype=self._input_dtype, name=name)
        Node(self, outputs=tensor)
        self.built = True

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def dtype(self):
        return self._input_dtype

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return self._batch_shape

    def get_config(self):
        return {"batch_shape": list(self._batch_shape), "dtype": self._input_dtype, "sparse": False,
                "ragged": False, "name": self.name, "optional": self.optional}


@keras_export("keras.Input")
def Input(shape=None, batch_size=None, dtype=None, sparse=None, ragged=None, batch_shape=None, name=None,
          tensor=None, optional=False):
    """A symbolic tensor to start a functional model: ``x = Input(shape=(4,))`` has shape (None, 4)."""
    if ragged:
        raise ValueError("Input: ragged tensors are not supported by tapeflow.")
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, batch_shape=batch_shape,
                       name=name, input_tensor=tensor, optional=optional)
    return layer.output
