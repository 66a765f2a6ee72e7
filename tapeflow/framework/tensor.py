"""Tensor: an immutable value wrapping a numpy array.

Every tensor carries a process-unique integer id; tapes identify tensors by it
(never by Python ``id()``, which is reused after garbage collection).
Arithmetic operators are installed by ``tapeflow.ops.math_ops``.
"""
import itertools

import numpy as np

from . import dtypes
from .tensor_shape import TensorShape

next_id = itertools.count(1).__next__


class Tensor:
    __slots__ = ("_value", "_id", "__weakref__")

    # numpy must defer to our reflected operators: ndarray * Tensor -> Tensor.
    __array_priority__ = 100

    def __init__(self, value):
        self._value = value
        self._id = next_id()

    # -- Keras's ``tensor._keras_mask`` -------------------------------------------------------------------------
    # Masks are attached by Keras layers, which sit above this module and keep them in a table (tensors have
    # fixed slots); the layers package installs its (get, set) accessors in ``keras_mask_accessors`` on import.
    keras_mask_accessors = None

    @property
    def _keras_mask(self):
        mask = None if Tensor.keras_mask_accessors is None else Tensor.keras_mask_accessors[0](self)
        if mask is None:
            raise AttributeError("'Tensor' object has no attribute '_keras_mask'")
        return mask

    @_keras_mask.setter
    def _keras_mask(self, mask):
        if Tensor.keras_mask_accessors is None:
            raise AttributeError("Keras masks need tapeflow.layers (not imported)")
        Tensor.keras_mask_accessors[1](self, mask)

    # -- introspection -------------------------------------------------
    @property
    def shape(self):
        return TensorShape(self._value.shape)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Merges ``shape`` into the static shape; raises ValueError when they are incompatible.

        An eager tensor's shape is fully known, so this only checks. A symbolic tensor being traced keeps the
        merged shape (its unknown dimensions take the known ones of ``shape``)."""
        current = self.shape
        given = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        if not current.is_compatible_with(given):
            raise ValueError(f"Tensor's shape {current} is not compatible with supplied shape {given}.")
        if given.rank is None or current.dims == given.dims:
            return
        merged = TensorShape(given.dims if current.rank is None else
                             [a if a is not None else b for a, b in zip(current.dims, given.dims)])
        if merged != current:
            self._static_shape = merged   # only a traced tensor's shape can be less than fully known

    @property
    def dtype(self):
        return dtypes.from_numpy(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def numpy(self):
        """A copy of the value (tensors are immutable); a numpy scalar (bytes for strings) when 0-d."""
        value = self._value
        if type(value) is not np.ndarray:
            return value               # already a numpy scalar: immutable
        return value[()] if value.ndim == 0 else value.copy()

    def ref(self):
        return _TensorRef(self)

    experimental_ref = ref

    # -- Python protocols ----------------------------------------------
    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._value)  # a 0-d value may be held as a numpy scalar
        if dtype is not None:
            return value.astype(dtype)   # always a new array
        return value.copy() if copy else value

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self._value.shape[0]):
            yield self[i]

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value.item() if np.size(self._value) == 1 else self._value)

    def __int__(self):
        return int(self._value.item() if np.size(self._value) == 1 else self._value)

    def __index__(self):
        if self._value.dtype.kind not in "iu" or self._value.ndim != 0:
            raise TypeError(f"Only integer scalar tensors can be used as an index, got {self.dtype!r} "
                            f"with shape {self.shape}")
        return int(self._value)

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __repr__(self):
        return "<tf.Tensor: shape=%s, dtype=%s, %s>" % (
            self.shape, self.dtype.name, numpy_text(self._value, is_repr=True))

    def __str__(self):
        return "tf.Tensor(%s, shape=%s, dtype=%s)" % (numpy_text(self._value), self.shape, self.dtype.name)

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        raise TypeError("tapeflow tensors are not picklable; save them with tapeflow.saving or numpy().")


def host_array(value):
    """The numpy array holding ``value``'s data, without a copy: a Tensor's own array (a traced
    tensor's placeholder value), a Variable's read-only snapshot, ``np.asarray(value)`` for anything
    else. Never write to it. For code above the engine that needs host data or the concrete shape
    being computed on a hot path, where ``numpy()`` would copy and ``shape`` is the static shape
    (which may hold None while tracing)."""
    if isinstance(value, Tensor):
        array = value._value
        return array if type(array) is np.ndarray else np.asarray(array)
    return np.asarray(value)


class _TensorRef:
    """Hashable reference to a tensor (``tensor.ref()``)."""
    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return self._tensor._id

    def __eq__(self, other):
        return isinstance(other, _TensorRef) and other._tensor is self._tensor


def numpy_text(value, is_repr=False):
    """The value part of a tensor's repr/str, exactly as TensorFlow prints it."""
    if is_repr:
        text = repr(value.item()) if value.ndim == 0 else repr(value)
    else:
        text = str(value.item()) if value.ndim == 0 and value.dtype.kind == "O" else str(value)
    if "\n" in text:
        text = "\n" + text
    return "numpy=" + text if is_repr else text
