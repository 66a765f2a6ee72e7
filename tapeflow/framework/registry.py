"""The gradient registry: op type name -> gradient function (or None)."""
import sys
import uuid
import weakref

_GRADIENTS = {}
_NO_GRADIENT = object()


def _where_registered():
    frame = sys._getframe(3)  # the caller of RegisterGradient(...)(fn) or no_gradient(...)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class RegisterGradient:
    """Decorator registering ``fn(op, *output_grads) -> input grads`` for an op type."""
    _batch_aware = False

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        _register(self._op_type, fn, self._batch_aware)
        return fn


class BuiltinGradient(RegisterGradient):
    """For tapeflow's own gradients, which accept cotangents with extra leading
    (stacked) axes, so jacobians run one vectorised backward pass."""
    _batch_aware = True


def _register(op_type, value, batch_aware=True):
    if op_type in _GRADIENTS:
        previous = _GRADIENTS[op_type][1]
        raise KeyError(f"Registering two gradient with name {op_type!r}! (Previous registration was in {previous})")
    _GRADIENTS[op_type] = (value, _where_registered(), batch_aware)


TAKES_MISSING_COTANGENTS = set()   # op types whose gradient takes None for an output that got no cotangent


def takes_missing_cotangents(op_type):
    """Declares that ``op_type``'s gradient function accepts None for outputs that received no cotangent, so
    the tape does not make zero arrays for them (large unused outputs, such as a saved buffer)."""
    TAKES_MISSING_COTANGENTS.add(op_type)


def no_gradient(op_type):
    """Marks ``op_type`` as not differentiable: its inputs receive None gradients."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _register(op_type, _NO_GRADIENT)


NotDifferentiable = no_gradient
NoGradient = no_gradient


def missing_gradient_error(op_type):
    return LookupError(
        f"No gradient defined for operation '{op_type}' (op type: {op_type}). "
        "In general every operation must have an associated `@tf.RegisterGradient` for correct "
        "autodiff, which this op is lacking. If you want to pretend this operation is a constant "
        "in your program, you may insert `tf.stop_gradient`.")


def lookup(op_type):
    """(gradient function, batch_aware) for ``op_type``; the function is None if
    the op is registered as non-differentiable.

    Raises LookupError, in TensorFlow's words, when nothing is registered.
    """
    entry = _GRADIENTS.get(op_type)
    if entry is None:
        raise missing_gradient_error(op_type)
    fn = entry[0]
    return (None if fn is _NO_GRADIENT else fn), entry[2]


def is_registered(op_type):
    return op_type in _GRADIENTS


class BoundGradientName(str):
    """The name of a gradient that belongs to some loaded functions rather than to the process.

    Its registry entry lives exactly as long as this name object is referenced: by the nodes
    of the loaded graphs, and by the tape records of their replays. The name is unique, so no
    other code can register it, and loading one file never changes what another can do.
    """


def bound_gradient_name(prefix):
    """A fresh BoundGradientName; nothing is registered until ``register_bound_gradient``."""
    return BoundGradientName(f"{prefix}-{uuid.uuid4().hex}")


def register_bound_gradient(name, fn):
    """Registers ``fn`` under ``name`` (a BoundGradientName) until the name is garbage collected."""
    if not isinstance(name, BoundGradientName):
        raise TypeError("register_bound_gradient needs a name made by bound_gradient_name")
    key = str(name)
    if key in _GRADIENTS:
        raise KeyError(f"Registering two gradient with name {key!r}!")
    _GRADIENTS[key] = (fn, "a loaded function", False)
    weakref.finalize(name, _GRADIENTS.pop, key, None)
