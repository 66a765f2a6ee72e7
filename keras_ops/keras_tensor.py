"""KerasTensor: a symbolic tensor (shape and dtype, no value) for building functional models.

Its arithmetic, comparisons and indexing are keras.ops (``x * 2.0`` is
``ops.multiply(x, 2.0)``), which, given a KerasTensor, record an operation of
the functional graph (``keras_ops/symbolic.py``), as in Keras 3.
"""
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

    # Keras's ``x._keras_mask`` on a symbolic tensor: computed on demand by the layers package (which sits above
    # this module and installs the function here on import), so building a model never evaluates masks.
    symbolic_mask_of = None

    @property
    def _keras_mask(self):
        mask = None if KerasTensor.symbolic_mask_of is None else KerasTensor.symbolic_mask_of(self)
        if mask is None:
            raise AttributeError("'KerasTensor' object has no attribute '_keras_mask'")
        return mask

    # -- operators: keras.ops recorded as operations of the graph (== and != stay identity, as hashing needs) --
    def __getitem__(self, key):
        from .symbolic import get_item
        return get_item(self, key)

    def __neg__(self):
        return _op("negative")(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _op("absolute")(self)

    def __invert__(self):
        return _op("logical_not" if self.dtype == "bool" else "bitwise_invert")(self)


def _op(name):
    from . import elementwise, products
    return getattr(elementwise, name, None) or getattr(products, name)


def _binary(name, reflected=False):
    if reflected:
        def method(self, other):
            return _op(name)(other, self)
    else:
        def method(self, other):
            return _op(name)(self, other)
    return method


for _name, _op_name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                        ("floordiv", "floor_divide"), ("mod", "mod"), ("pow", "power"), ("matmul", "matmul"),
                        ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
    setattr(KerasTensor, f"__{_name}__", _binary(_op_name))
    setattr(KerasTensor, f"__r{_name}__", _binary(_op_name, reflected=True))
for _name, _op_name in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")):
    setattr(KerasTensor, f"__{_name}__", _binary(_op_name))


_SYMBOLIC_MESSAGE = (
    "A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. It doesn't have any actual numerical "
    "value. You cannot convert it to a NumPy array or use it in tapeflow ops. Use it only as the input of Keras "
    "layers, to build a functional model.")


def is_keras_tensor(x):
    return isinstance(x, KerasTensor)
