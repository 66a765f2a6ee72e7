"""Sequential: a plain stack of layers, each feeding the next."""
import warnings

from ..core.input_layer import InputLayer
from ..keras_tensor import KerasTensor
from ..layer import Layer
from .functional import match_input_rank
from .model import Model
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object
from .. import dtype_policy
from ..utils import tree


@keras_export("keras.Sequential")
class Sequential(Model):
    """``Sequential([Input((4,)), Dense(8), ...])``; ``layers`` excludes the InputLayer."""
    _autocast_inputs = False

    _has_symbolic_graph = True  # output shapes come from the graph, without running it

    def __new__(cls, *args, **kwargs):
        return Layer.__new__(cls, *args, **kwargs)

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self.__dict__["_graph_output"] = None
        if layers:
            for layer in layers:
                self.add(layer, rebuild=False)
            self._maybe_rebuild()

    def add(self, layer, rebuild=True):
        """Appends a layer (or an ``Input(...)`` tensor) to the stack."""
        if isinstance(layer, KerasTensor) and layer._keras_history is not None:
            layer = layer._keras_history[0]
        if not isinstance(layer, Layer):
            raise ValueError(f"Only instances of `keras.Layer` can be added to a Sequential model. Received: {layer} "
                             f"(of type {type(layer)})")
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(f"All layers added to a Sequential model should have unique names. Name "
                             f"'{layer.name}' is already the name of a layer in this model. Update the `name` "
                             "argument to pass a unique name.")
        if isinstance(layer, InputLayer) and self._layers and isinstance(self._layers[0], InputLayer):
            raise ValueError(f"Sequential model '{self.name}' has already been configured to use input shape "
                             f"{self._layers[0].batch_shape}. You cannot add a different Input layer to it.")
        if isinstance(layer, InputLayer) and self._layers:
            raise ValueError("An InputLayer can only be the first layer of a Sequential model.")
        self._layers.append(layer)
        if rebuild:
            self._maybe_rebuild()
        else:
            self.built = False

    def pop(self, rebuild=True):
        layers = self.layers
        if not layers:
            raise TypeError("There are no layers in the model.")
        layer = layers[-1]
        self._layers.remove(layer)
        self.built = False
        self.__dict__["_graph_output"] = None
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self):
        self.built = False
        self._unlock_state()
        self.__dict__["_graph_output"] = None
        if not self._layers:
            return
        first = self._layers[0]
        if isinstance(first, InputLayer) and len(self._layers) > 1:
            self.build(first.batch_shape)
        elif not isinstance(first, InputLayer) and getattr(first, "_input_shape_arg", None) is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. When using Sequential "
                          "models, prefer using an `Input(shape)` object as the first layer in the model instead.",
                          stacklevel=3)
            self.build(first._input_shape_arg)

    def build(self, input_shape=None):
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument to build a Sequential model.")
        input_shape = tuple(input_shape)
        if not self._layers:
            raise ValueError(f"Sequential model {self.name} cannot be built because it has no layers. Call "
                             "`model.add(layer)`.")
        first = self._layers[0]
        if isinstance(first, InputLayer):
            if len(first.batch_shape) != len(input_shape) or any(
                    a is not None and b is not None and a != b for a, b in zip(first.batch_shape, input_shape)):
                raise ValueError(f"Sequential model '{self.name}' has already been configured to use input shape "
                                 f"{first.batch_shape}. You cannot build it with input_shape {input_shape}")
        else:
            self._layers.insert(0, InputLayer(batch_shape=(None,) + input_shape[1:], dtype=first.compute_dtype))
        x = self._layers[0].output
        for layer in self._layers[1:]:
            x = layer(x)
        self.__dict__["_graph_output"] = x
        self.built = True

    def _maybe_build(self, inputs):
        shapes = tree.map_structure(lambda t: tuple(t.shape), inputs)
        if not tree.is_shape(shapes):
            raise ValueError(f"A Sequential model takes a single input tensor; received inputs with shapes {shapes}")
        if self._parent_path is None:
            from .. import backend
            self.__dict__["_parent_path"] = backend.current_path()
        self.build((None,) + tuple(shapes)[1:])

    @property
    def layers(self):
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    def call(self, inputs, training=None, mask=None):
        x = self._match_input_rank(inputs)
        for layer in self._layers:
            if type(layer) is InputLayer:
                continue
            x = layer(x, training=training)
        return x

    def compute_output_spec(self, inputs, training=None, mask=None):
        if not self.built:
            self._maybe_build(inputs)
        x = self._match_input_rank(inputs)
        for layer in self.layers:
            x = layer._symbolic_output(x)
        return x

    def _match_input_rank(self, inputs):
        first = self._layers[0] if self._layers else None
        return match_input_rank(inputs, first.batch_shape) if isinstance(first, InputLayer) else inputs

    def compute_output_shape(self, input_shape):
        spec = self.compute_output_spec(KerasTensor(input_shape))
        return spec.shape

    def _output_names(self):
        layers = self.layers
        return [layers[-1].name] if layers else None

    @property
    def inputs(self):
        return [self._layers[0].output] if self._layers and isinstance(self._layers[0], InputLayer) else None

    @property
    def outputs(self):
        return [self._graph_output] if self._graph_output is not None else None

    @property
    def input_shape(self):
        if self._layers and isinstance(self._layers[0], InputLayer):
            return self._layers[0].batch_shape
        raise AttributeError(f"Sequential model '{self.name}' has no defined input shape yet.")

    @property
    def output_shape(self):
        if self._graph_output is not None:
            return self._graph_output.shape
        raise AttributeError(f"Sequential model '{self.name}' has no defined output shape yet.")

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": dtype_policy.serialize(self.dtype_policy),
                  "layers": [serialize_keras_object(layer) for layer in self._layers]}
        shapes = self._build_shapes_dict
        if shapes is not None and len(shapes) == 1:
            (shape,) = shapes.values()
            config["build_input_shape"] = [None if d is None else int(d) for d in shape]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for layer_config in config.get("layers", []):
            model.add(deserialize_keras_object(layer_config, custom_objects=custom_objects), rebuild=False)
        model._maybe_rebuild()
        shape = config.get("build_input_shape")
        if not model.built and isinstance(shape, (list, tuple)):
            model.build(tuple(shape))
        return model
