"""Variable: mutable state that tapes watch automatically when it is read.

A Variable owns its storage, a contiguous array nothing else references, and
its copy-on-write. A read hands out a *snapshot*: a read-only array over the
storage, made through a memoryview so that numpy's views of it (slices,
reshapes, the outputs of ops that return views) keep the snapshot itself
alive. A weak reference to the snapshot then says exactly whether any read is
still alive. An in-place write (``_write_inplace``, for the fused kernels of
the state ops) first moves the variable to a private copy when one is, so
every tensor read earlier keeps its value (TensorFlow's snapshot semantics);
otherwise it writes in place.
"""
import weakref

import numpy as np

from . import dtypes
from .conversion import convert_to_tensor
from . import recording
from .tensor import Tensor, next_id, numpy_text
from .tensor_shape import TensorShape


def _handle(value, var_id):
    """A Tensor reading the variable: it shares the variable's id, so gradients
    with respect to the variable sum over all of its reads."""
    t = Tensor.__new__(Tensor)
    t._value = value
    t._id = var_id
    return t


def _snapshot(storage):
    """A read-only array over ``storage`` whose base is a memoryview, not ``storage``: numpy
    collapses the base of every view taken from it to the snapshot, not to the storage."""
    snapshot = np.asarray(memoryview(storage))
    snapshot.flags.writeable = False
    return snapshot


# Called with each new Variable once it holds its initial value: a tf.distribute scope
# registers one that makes every worker start from the first worker's value.
creation_observers = []


def assign_shape_error(variable, value_shape):
    """TensorFlow's words for assigning a value of another shape."""
    return ValueError(f"Cannot assign value to variable ' {variable.name}': Shape mismatch.The variable shape "
                      f"{tuple(variable.shape)}, and the assigned value shape {tuple(value_shape)} are incompatible.")


def load_array(variable, array):
    """Makes ``array`` the value of ``variable``, without a copy when the caller just made it and keeps no
    reference to it (a loader reading a file); any other array is assigned as usual. For saving."""
    return getattr(variable, "_parent", variable)._adopt(array)


def _alive(ref):
    return ref is not None and ref() is not None


class Variable:
    """tf.Variable. Assignments replace the stored array, so tensors read
    earlier keep their values (TensorFlow's snapshot semantics)."""

    def __init__(self, initial_value=None, trainable=None, name=None, dtype=None, shape=None,
                 validate_shape=True, constraint=None, **kwargs):
        if initial_value is None:
            raise ValueError("The `initial_value` arg (None) must be specified.")
        graph = recording.tracing_graph()
        if graph is not None and not getattr(graph, "creates_variables", True):
            raise ValueError("tf.function only supports singleton tf.Variables created on the first call. Make sure "
                             "the tf.Variable is only created once or created outside tf.function. See "
                             "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value._value
        value = np.array(convert_to_tensor(initial_value, dtype=dtype)._value, copy=True, order="C")
        if isinstance(initial_value, Tensor) and dtype is not None:
            value = value.astype(dtypes.as_dtype(dtype)._np)
        self._id = next_id()
        self._own(value)
        self._trainable = True if trainable is None else bool(trainable)
        self._shared_name = "Variable" if name is None else str(name)
        self._constraint = constraint
        self._shape = None if shape is None else TensorShape(shape)
        for observer in creation_observers:
            observer(self)

    # -- storage -----------------------------------------------------------
    def _own(self, array):
        """Makes ``array`` (contiguous, writable, referenced by nobody else) the storage."""
        self._storage = array
        self._snapshot_ref = None    # weak reference to the snapshot reads share
        self._tensor_ref = None      # weak reference to the Tensor over that snapshot

    @property
    def _value(self):
        """The current value as a read-only snapshot (shared by reads until the next write)."""
        snapshot = self._snapshot_ref() if self._snapshot_ref is not None else None
        if snapshot is None:
            snapshot = _snapshot(self._storage)
            self._snapshot_ref = weakref.ref(snapshot)
        return snapshot

    @property
    def _read_tensor(self):
        tensor = self._tensor_ref() if self._tensor_ref is not None else None
        if tensor is None:
            tensor = _handle(self._value, self._id)
            self._tensor_ref = weakref.ref(tensor)
        return tensor

    def _write_inplace(self):
        """The storage, for a kernel about to update it in place. While a snapshot handed out
        earlier is alive, the variable first moves to a private copy (the snapshot keeps the old
        values); later reads get a new snapshot."""
        if _alive(self._snapshot_ref):
            self._storage = self._storage.copy()
        self._snapshot_ref = self._tensor_ref = None
        return self._storage

    # -- reads -----------------------------------------------------------
    def _notify_access(self, state):
        if self._trainable:
            for watcher in state.watchers:
                watcher[self._id] = self
        for tape in state.tapes:
            if tape.watch_accessed_variables and self._trainable:
                tape.variables[self._id] = self
                if self._storage.dtype.kind in "fc":
                    tape.ids.add(self._id)
                    tape.roots.add(self._id)

    def _as_tensor(self):
        state = recording.current()
        if state is not None:
            if state.tapes or state.watchers:
                self._notify_access(state)
            if state.graph is not None:
                return state.graph.read_variable(self)
        return self._read_tensor

    def value(self):
        from ..ops import array_ops
        return array_ops.read_variable(self)

    def read_value(self):
        return self.value()

    def numpy(self):
        state = recording.current()
        if state is not None:
            if state.graph is not None:     # a value read now would be frozen into the graph
                raise NotImplementedError("numpy() is only available when eager execution is enabled.")
            self._notify_access(state)
        value = np.array(self._storage, copy=True)
        return value[()] if value.ndim == 0 else value

    # -- writes (not differentiable) --------------------------------------
    def _new_value(self, value):
        arr = convert_to_tensor(value, dtype=self.dtype)._value
        if arr.shape != self._storage.shape:
            raise assign_shape_error(self, arr.shape)
        return arr

    def _store(self, arr):
        self._own(np.array(arr, dtype=self._storage.dtype, copy=True, order="C"))
        state = recording.current()
        if state is not None:
            self._notify_access(state)
        return _UnreadVariable(self)

    def _traced_assign(self, graph, value, mode):
        """Inside tf.function tracing, an assignment becomes a graph node (no effect now)."""
        graph.assign_variable(self, value, mode)
        return _UnreadVariable(self)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        graph = recording.tracing_graph()
        if graph is not None:
            return self._traced_assign(graph, value, "assign")
        return self._store(self._new_value(value))

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        graph = recording.tracing_graph()
        if graph is not None:
            return self._traced_assign(graph, delta, "add")
        return self._store(self._storage + self._new_value(delta))

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        graph = recording.tracing_graph()
        if graph is not None:
            return self._traced_assign(graph, delta, "sub")
        return self._store(self._storage - self._new_value(delta))

    def _adopt(self, array):
        """Takes ``array`` as the new value without copying it. Only for callers that just made
        the array and keep no reference to it (loaders reading a file); anything else falls back
        to ``assign``."""
        arr = array if isinstance(array, np.ndarray) else None
        if (arr is None or arr.shape != self._storage.shape or arr.dtype != self._storage.dtype
                or not arr.flags.c_contiguous or not arr.flags.writeable or not arr.flags.owndata
                or recording.tracing_graph() is not None):
            return self.assign(array)
        self._own(arr)
        state = recording.current()
        if state is not None:
            self._notify_access(state)
        return _UnreadVariable(self)

    # -- properties --------------------------------------------------------
    @property
    def shape(self):
        return TensorShape(self._storage.shape)

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return dtypes.from_numpy(self._storage.dtype)

    @property
    def ndim(self):
        return self._storage.ndim

    @property
    def name(self):
        return self._shared_name + ":0"

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    @property
    def constraint(self):
        return self._constraint

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def initial_value(self):
        return Tensor(np.array(self._storage))

    def ref(self):
        return _VariableRef(self)

    experimental_ref = ref

    # -- Python protocols ----------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._storage, dtype=dtype, copy=True)
        return self._value if dtype is None else self._value.astype(dtype)

    def __len__(self):
        return len(self._as_tensor())

    def __iter__(self):
        return iter(self._as_tensor())

    def __bool__(self):
        return bool(self._storage)

    def __float__(self):
        return float(self._storage)

    def __int__(self):
        return int(self._storage)

    def __index__(self):
        return self._as_tensor().__index__()

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")

    def __format__(self, spec):
        return self._as_tensor().__format__(spec)

    def __repr__(self):
        if recording.tracing_graph() is not None:   # its value at a call is not known while tracing, as in TF
            return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)
        return "<tf.Variable '%s' shape=%s dtype=%s, %s>" % (
            self.name, self.shape, self.dtype.name, numpy_text(self._value, is_repr=True))

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("tapeflow variables are not picklable; save them with tapeflow.saving.")


class ResourceVariable(Variable):
    """What ``tf.Variable(...)`` makes, as in TensorFlow (``type(v).__name__`` is 'ResourceVariable');
    ``isinstance(v, tf.Variable)`` holds."""


def _make_resource_variables(cls, *args, **kwargs):
    return object.__new__(ResourceVariable if cls is Variable else cls)


Variable.__new__ = _make_resource_variables


class _UnreadVariable(Variable):
    """What ``assign`` returns: a view of the variable, printed as TensorFlow does."""

    def __init__(self, parent):
        self._parent = parent

    _value = property(lambda self: self._parent._value)
    _storage = property(lambda self: self._parent._storage)
    _id = property(lambda self: self._parent._id)
    _read_tensor = property(lambda self: self._parent._read_tensor)
    _trainable = property(lambda self: self._parent._trainable)
    _constraint = property(lambda self: self._parent._constraint)
    _shared_name = property(lambda self: self._parent._shared_name)

    def _store(self, arr):
        return self._parent._store(arr)

    def _write_inplace(self):
        return self._parent._write_inplace()

    def _notify_access(self, state):
        self._parent._notify_access(state)

    @property
    def name(self):
        return "UnreadVariable"

    @property
    def trainable(self):
        return self._parent.trainable


class _VariableRef:
    __slots__ = ("_var",)

    def __init__(self, var):
        self._var = var

    def deref(self):
        return self._var

    def __hash__(self):
        return self._var._id

    def __eq__(self, other):
        return isinstance(other, _VariableRef) and other._var._id == self._var._id
