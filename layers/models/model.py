"""Model: a Layer with training (compile/fit/...) and saving entry points.

``Model(inputs, outputs)`` builds a functional model; subclassing ``Model``
and defining ``call`` gives a subclassed model, built on its first call.
"""
import inspect
import json

import numpy as np

from tapeflow.framework.tensor import Tensor

from ..layer import Layer, _call_spec, _context
from ..serialization_lib import deserialize_keras_object, keras_export, serialize_keras_object
from ..trainers.trainer import Trainer


def _functional_init_arguments(args, kwargs):
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or ("inputs" in kwargs and "outputs" in kwargs)


_INJECTED = {}


def _with_functional(cls, functional):
    """``cls`` with Functional mixed in after it (one class per subclass, made once)."""
    if issubclass(cls, functional):
        return cls
    if cls not in _INJECTED:
        _INJECTED[cls] = type(cls.__name__, (cls, functional), {"__module__": cls.__module__,
                                                               "__qualname__": cls.__qualname__})
    return _INJECTED[cls]


@keras_export("keras.Model")
class Model(Trainer, Layer):
    """A trainable Layer: ``compile``, ``fit``, ``evaluate``, ``predict``, ``summary``."""

    _never_built_at_init = True

    def __new__(cls, *args, **kwargs):
        # Model(inputs, outputs) is a functional model. A subclass's own constructor arguments say nothing:
        # it becomes functional only if it passes inputs and outputs on to Model.__init__ (see there).
        if cls is Model and _functional_init_arguments(args, kwargs):
            from .functional import Functional
            cls = Functional
        return Layer.__new__(cls, *args, **kwargs)

    def __init__(self, *args, **kwargs):
        if _functional_init_arguments(args, kwargs):
            # A subclass that calls super().__init__(inputs, outputs): give it the functional machinery.
            from .functional import Functional
            self.__class__ = _with_functional(type(self), Functional)
            Functional.__init__(self, *args, **kwargs)
            return
        if args or (set(kwargs) & {"inputs", "outputs"}):
            raise TypeError(f"Model.__init__ got unexpected arguments {args} {sorted(kwargs)}: to build a functional "
                            "model pass both `inputs` and `outputs`.")
        Layer.__init__(self, **kwargs)
        self._init_trainer()

    # -- building ------------------------------------------------------------
    def build(self, input_shape=None):
        """Builds a subclassed model by running ``call`` once on zeros of ``input_shape``."""
        if self.built:
            return
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument to build a model.")
        if _is_shape_structure(input_shape):
            def zeros(shape):
                return Tensor(np.zeros(tuple(1 if d is None else int(d) for d in shape), dtype=self.compute_dtype))
            inputs = _map_shapes(zeros, input_shape)
            kwargs = {"training": False} if _call_spec(type(self))[0] else {}
            _context.depth += 1
            try:
                with self._open_name_scope():
                    self.call(inputs, **kwargs)
            finally:
                _context.depth -= 1
            self.__dict__["_build_shapes_dict"] = {"input_shape": input_shape}
        self.built = True

    def _maybe_build(self, inputs):
        if type(self).build is Model.build:
            shapes = _map_tensors(lambda t: (None,) + tuple(t.shape)[1:], inputs)
            if self._parent_path is None:
                from .. import backend
                self.__dict__["_parent_path"] = backend.current_path()
            self.__dict__["_build_shapes_dict"] = {"input_shape": shapes}
            self.built = True
            return
        super()._maybe_build(inputs)

    # -- structure -------------------------------------------------------------
    @property
    def layers(self):
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        if index is not None and name is not None:
            raise ValueError(f"Provide only a layer name or a layer index. Received: index={index}, name={name}.")
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(self.layers)} layers.")
            return self.layers[index]
        if name is not None:
            for layer in self.layers:
                if layer.name == name:
                    return layer
            raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}.")
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        from .summary_utils import print_summary
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn,
                      expand_nested=expand_nested, show_trainable=show_trainable, layer_range=layer_range)

    # -- config ------------------------------------------------------------------
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable}
        auto = self._auto_config
        if auto is not None:
            config.update(auto)
        spec = inspect.getfullargspec(type(self).__init__)
        if spec.varkw is None:
            for key in ("name", "trainable"):
                if key not in spec.args[1:] + spec.kwonlyargs:
                    config.pop(key, None)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .functional import Functional, functional_from_config
        is_functional_config = all(k in config for k in ("name", "layers", "input_layers", "output_layers"))
        if is_functional_config and (cls in (Model, Functional) or issubclass(cls, Functional)):
            return functional_from_config(cls if cls is not Model else Functional, config, custom_objects)
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError(f"Unable to revive model from config. When overriding the `get_config()` method, make "
                            f"sure that the returned config contains all items used as arguments in the constructor "
                            f"to {cls}, which is the default behavior. You can override this default behavior by "
                            f"defining a `from_config(cls, config)` class method to specify how to create an instance "
                            f"of {cls.__name__} from its config.\n\nReceived config={config}\n\nError encountered "
                            f"during deserialization: {e}") from e

    def to_json(self, **kwargs):
        return json.dumps(serialize_keras_object(self), **kwargs)

    # -- saving (the formats live in tapeflow.saving) ----------------------------------
    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        from tapeflow import saving
        return saving.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        from tapeflow import saving
        return saving.save_weights(self, filepath, overwrite=overwrite, max_shard_size=max_shard_size)

    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None, **kwargs):
        """Writes a TensorFlow SavedModel whose ``serve`` endpoint runs the model for inference."""
        from .export import export_saved_model
        return export_saved_model(self, filepath, format=format, verbose=verbose, input_signature=input_signature,
                                  **kwargs)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        from tapeflow import saving
        return saving.load_weights(self, filepath, skip_mismatch=skip_mismatch, **kwargs)


def model_from_json(json_string, custom_objects=None):
    """The model described by ``model.to_json()`` (architecture only; weights are fresh)."""
    try:
        config = json.loads(json_string)
    except (TypeError, ValueError) as e:
        raise ValueError(f"model_from_json: the string is not valid JSON ({e}).") from e
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError("model_from_json: the JSON does not describe a model (expected an object with "
                         f"'class_name' and 'config'); received {str(json_string)[:200]!r}")
    return deserialize_keras_object(config, custom_objects=custom_objects)


def _is_shape_structure(value):
    from ..utils.tree import is_shape
    if is_shape(value):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_shape_structure(v) for v in value)
    if isinstance(value, dict):
        return all(_is_shape_structure(v) for v in value.values())
    return False


def _map_shapes(fn, structure):
    from ..utils.tree import map_shape_structure
    return map_shape_structure(fn, structure)


def _map_tensors(fn, structure):
    from ..utils.tree import map_structure
    return map_structure(fn, structure)
