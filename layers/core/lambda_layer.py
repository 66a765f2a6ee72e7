"""Lambda: a layer around a Python function, as Keras 3's.

Saving writes the function as Keras does: a named function by its registered name, a
Python lambda as Keras's ``__lambda__`` entry (its marshalled bytecode, so real Keras can
read the file). Loading never runs code from a file: a named function is resolved like
any other (``custom_objects``, registered functions), and a lambda only when
``custom_objects`` supplies a function under the layer's name, used in place of the
stored code.
"""
import codecs
import inspect
import marshal

from tapeflow.ops import array_ops

from ..layer import Layer
from ..utils import tree
from ..serialization_lib import (deserialize_keras_object, get_registered_object, keras_export,
                                 serialize_keras_object)


def _serialize_function(function):
    if getattr(function, "__name__", None) != "<lambda>":
        return serialize_keras_object(function)
    closure = function.__closure__
    return {"class_name": "__lambda__",
            "config": {"code": codecs.encode(marshal.dumps(function.__code__), "base64").decode("ascii"),
                       "defaults": function.__defaults__,
                       "closure": None if closure is None else tuple(c.cell_contents for c in closure)}}


def _flat_shapes(shapes):
    """The shape leaves of a nest of shapes, dict entries by sorted key (keras.tree's order)."""
    if tree.is_shape(shapes):
        return [tuple(shapes)]
    if isinstance(shapes, dict):
        shapes = [shapes[key] for key in sorted(shapes)]
    return [leaf for item in shapes for leaf in _flat_shapes(item)]


def _map_shapes(fn, shapes):
    """``fn`` on each shape of a nest given as plain lists, tuples and dicts (attribute tracking may have
    wrapped a list ``output_shape``)."""
    if tree.is_shape(shapes):
        return fn(tuple(shapes))
    if isinstance(shapes, dict):
        return {key: _map_shapes(fn, value) for key, value in shapes.items()}
    return (tuple if isinstance(shapes, tuple) else list)(_map_shapes(fn, item) for item in shapes)


@keras_export("keras.layers.Lambda")
class Lambda(Layer):
    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda expects a callable `function`. Received: {function!r}")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        self.mask = mask
        self.supports_masking = mask is not None
        parameters = inspect.signature(function).parameters
        self._passes_mask = "mask" in parameters
        self._passes_training = "training" in parameters

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._passes_mask:
            kwargs["mask"] = mask
        if self._passes_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        """Keras's rules: a callable ``output_shape`` gets the input shapes as given (a list for a list of
        inputs); a shape, or a nest of shapes for several outputs, leaves out the batch dimension, which is
        the first input's (dict inputs by sorted key); without ``output_shape`` the function is run."""
        if self._output_shape is None:
            return self._infer_output_shape(input_shape)
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        batch_size = _flat_shapes(input_shape)[0][0]
        return _map_shapes(lambda shape: (batch_size,) + shape, self._output_shape)

    def _infer_output_shape(self, input_shape):
        """Runs the function on zeros with unknown sizes set to 1, then to 2: sizes that follow them are
        unknown in the result."""
        dtype = getattr(self, "compute_dtype", None) or "float32"
        runs = []
        for size in (1, 2):
            inputs = tree.map_shape_structure(
                lambda shape: array_ops.zeros(tuple(size if d is None else d for d in shape), dtype=dtype),
                input_shape)
            runs.append(self.call(inputs))
        return tree.map_structure(
            lambda a, b: tuple(x if x == y else None for x, y in zip(a.shape, b.shape)), runs[0], runs[1])

    def get_config(self):
        config = super().get_config()
        config.update({"function": _serialize_function(self.function), "arguments": self.arguments})
        if self._output_shape is not None:
            config["output_shape"] = (_serialize_function(self._output_shape) if callable(self._output_shape)
                                      else self._output_shape)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        function = config.pop("function")
        if isinstance(function, dict) and function.get("class_name") == "__lambda__":
            function = get_registered_object(config.get("name"), custom_objects)
            if function is None:
                raise ValueError(f"The Lambda layer '{config.get('name')}' stores a Python lambda; tapeflow never "
                                 "runs code from a file. Pass the function as custom_objects="
                                 f"{{'{config.get('name')}': function}}.")
        else:
            function = deserialize_keras_object(function, custom_objects)
        output_shape = config.pop("output_shape", None)
        if isinstance(output_shape, dict):
            raise ValueError(f"The Lambda layer '{config.get('name')}' stores its output_shape as a function, which "
                             "tapeflow does not load from a file; build the layer in Python.")
        return cls(function, output_shape=output_shape, **config)
