"""tf.py_function and tf.numpy_function: run a Python function on the values of tensors.

Eagerly, the function is simply called (on Tensors for ``py_function``, so a
GradientTape sees the ops it runs; on numpy arrays for ``numpy_function``).
Inside a tf.function the call becomes an ``EagerPyFunc`` node whose forward
calls the function at every run of the graph, on the run's values; its outputs
have the dtypes of ``Tout`` and shapes unknown to the trace. The function is
Python code, so a SavedModel cannot hold it: saving such a graph raises an
error naming the function. The node is not differentiable.
"""
import numpy as np

from ..framework import dtypes, nest, recording
from ..framework.conversion import _wrap, convert_to_tensor
from ..framework.recording import execute, register_op
from ..framework.registry import no_gradient
from ..framework.tensor_shape import TensorShape

PY_FUNCTION = "EagerPyFunc"


def py_function(func=None, inp=None, Tout=None, name=None):
    """Calls ``func`` on the Tensors ``inp``; returns its outputs as Tensors of the dtypes ``Tout``."""
    return _call(func, inp, Tout, numpy=False)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """Calls ``func`` on the numpy values of ``inp``; returns its outputs as Tensors of the dtypes ``Tout``."""
    return _call(func, inp, Tout, numpy=True)


def _call(func, inp, Tout, numpy):
    if not callable(func):
        raise TypeError(f"`func` must be a Python callable, got {func!r}")
    inputs = [convert_to_tensor(x) for x in (inp or [])]
    single = Tout is not None and not isinstance(Tout, (list, tuple))
    out_dtypes = [] if Tout is None else [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    if recording.tracing_graph() is None:
        args = [x.numpy() for x in inputs] if numpy else inputs
        results = _as_outputs(func(*args), out_dtypes, func)
        results = [_wrap(r) if isinstance(r, np.ndarray) else r for r in results]
    else:
        results = execute(PY_FUNCTION, tuple(inputs), {"func": func, "dtypes": [d.name for d in out_dtypes],
                                                         "numpy": numpy})
        results = list(results) if isinstance(results, (tuple, list)) else [results]
        for r in results:
            r._static_shape = TensorShape(None)
    if Tout is None:
        return None
    return results[0] if single else results


def _as_outputs(value, out_dtypes, func):
    """The function's return value as a list of Tensors (eagerly) or arrays, converted to ``out_dtypes``."""
    if not out_dtypes:
        return []
    flat = [value] if len(out_dtypes) == 1 and not isinstance(value, (list, tuple)) else nest.flatten(value)
    if len(flat) != len(out_dtypes):
        raise ValueError(f"The Python function {_name(func)} returned {len(flat)} values where Tout expects "
                         f"{len(out_dtypes)}")
    return [_convert(v, d, func) for v, d in zip(flat, out_dtypes)]


def _convert(value, dtype, func):
    if hasattr(value, "_value") and recording.tracing_graph() is None and not isinstance(value, np.ndarray):
        tensor = value if not hasattr(value, "read_value") else value.read_value()
        if tensor.dtype != dtype:
            raise TypeError(f"The Python function {_name(func)} returned a {tensor.dtype.name} tensor where "
                            f"Tout expects {dtype.name}")
        return tensor
    array = np.asarray(value._value if hasattr(value, "_value") else value)
    if dtype == dtypes.string:
        if array.dtype.kind == "U":
            return np.char.encode(array, "utf-8").astype(object)
        if array.dtype.kind in "SO":
            return array.astype(object)
        raise TypeError(f"The Python function {_name(func)} returned {value!r} where Tout expects a string")
    if array.dtype.kind in "USO":
        raise TypeError(f"The Python function {_name(func)} returned {value!r} where Tout expects {dtype.name}")
    return np.asarray(array, dtype=dtype._np)


def _name(func):
    return getattr(func, "__name__", repr(func))


def _placeholders(*arrays, func, dtypes, numpy):
    """While tracing the function is not called: scalar stand-ins of the output dtypes."""
    from .graph_iteration import placeholder_value
    return tuple(placeholder_value(d, None) for d in dtypes)


@register_op(PY_FUNCTION, num_outputs=-1, at_trace=_placeholders)
def _run_py_function(*arrays, func, dtypes, numpy):
    out_dtypes = [_dtype(d) for d in dtypes]
    with recording.init_scope():    # the function runs eagerly, unseen by the graph being run
        args = [np.array(a) for a in arrays] if numpy else [_wrap(np.array(a)) for a in arrays]
        results = _as_outputs(func(*args), out_dtypes, func)
    return tuple(np.asarray(r._value) if hasattr(r, "_value") else r for r in results)


def _dtype(name):
    return dtypes.as_dtype(name)


_run_py_function.unsaveable_capture = lambda attrs: f"the Python function {_name(attrs['func'])} of a " \
                                                     f"tf.py_function/tf.numpy_function"
_run_py_function.unrepeatable = "calls a Python function (tf.py_function)"
no_gradient(PY_FUNCTION)
