"""Layer: the base class of every Keras layer and model.

The user contract is Keras 3's: ``__init__`` stores the arguments, ``build``
creates the state with ``add_weight``, ``call`` is the math. Variables and
sub-layers assigned to attributes (also inside lists and dicts) are tracked
automatically, so ``weights`` come out in Keras's order: the layer's own
trainable variables, its own non-trainable ones, then each sub-layer's.
After ``build`` the state is locked.
"""
import functools
import inspect
import warnings
import weakref

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.host_calls import rerun_at_every_call
from tapeflow.module import Module
from tapeflow.ops import math_ops

from . import activations, backend, constraints, dtype_policy, initializers, regularizers
from .utils import tree
from .input_spec import assert_input_compatibility
from .keras_tensor import KerasTensor
from .node import Node
from .serialization_lib import keras_export, serialize_keras_object
from .variable import KerasVariable

_LOCKED_MESSAGE = (
    "You cannot add new elements of state (variables or sub-layers) to a layer that is already built. All state "
    "must be created in the `__init__()` method or in the `build()` method.")


class _CallContext:
    """The training flag an outer layer passes to the layers it calls."""
    training = None
    depth = 0


_context = _CallContext()


def _call_spec(cls):
    """(accepts training, accepts mask, default of training) for ``cls.call``; cached per class."""
    spec = cls.__dict__.get("_call_spec_cache")
    if spec is None:
        try:
            params = inspect.signature(cls.call).parameters
        except (TypeError, ValueError):
            params = {}
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        training = "training" in params or var_kw
        default = params["training"].default if "training" in params else None
        if default is inspect.Parameter.empty:
            default = None
        spec = (training, "mask" in params, default)
        type.__setattr__(cls, "_call_spec_cache", spec)
    return spec


def _wrap_build(build):
    """After the outermost ``build``: record the shapes, mark built, lock the state."""
    @functools.wraps(build)
    def build_wrapper(self, *args, **kwargs):
        if self.__dict__.get("_in_build"):
            return build(self, *args, **kwargs)
        self.__dict__["_in_build"] = True
        try:
            with self._open_name_scope():
                result = build(self, *args, **kwargs)
        finally:
            self.__dict__["_in_build"] = False
        try:
            bound = inspect.signature(build).bind(self, *args, **kwargs).arguments
            bound.pop("self", None)
            shapes = {k: v for k, v in bound.items()}
        except TypeError:
            shapes = {}
        if shapes:
            self.__dict__["_build_shapes_dict"] = shapes
        self.built = True
        self._lock_state()
        return result
    build_wrapper._is_build_wrapper = True
    return build_wrapper


def _auto_config(cls, args, kwargs):
    """The explicit constructor arguments, if they are all plain JSON values (Keras's auto get_config)."""
    try:
        names = inspect.getfullargspec(cls.__init__).args[1:]
    except TypeError:
        return None
    config = dict(kwargs)
    config.update(dict(zip(names, args)))
    # get_config writes these itself (a layer rebuilt from a config receives them as objects).
    config.pop("dtype", None)
    config.pop("activity_regularizer", None)
    for value in tree.flatten(config):
        if not isinstance(value, (str, int, float, bool, type(None))):
            return None
    return config


class _TrackedList(list):
    """A list attribute of a layer: what is appended to it is tracked too."""

    def __init__(self, values, owner):
        super().__init__(values)
        self._owner = owner

    def append(self, value):
        self._owner._track(value)
        super().append(value)

    def extend(self, values):
        values = list(values)
        for v in values:
            self._owner._track(v)
        super().extend(values)

    def insert(self, index, value):
        self._owner._track(value)
        super().insert(index, value)

    def __setitem__(self, index, value):
        self._owner._track(value)
        super().__setitem__(index, value)


class _TrackedDict(dict):
    """A dict attribute of a layer: values set on it are tracked too."""

    def __init__(self, values, owner):
        super().__init__(values)
        self._owner = owner

    def __setitem__(self, key, value):
        self._owner._track(value)
        super().__setitem__(key, value)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value


_NESTED_OBJECT_MODULES = {"initializer": initializers, "regularizer": regularizers, "constraint": constraints,
                          "activation": activations}


def deserialize_nested_objects(config):
    """A copy of a layer's config whose initializers, regularizers, constraints and activation
    (keys ``*_initializer``, ``*_regularizer``, ``*_constraint``, ``activation``) saved as
    config dicts are objects again, for a built-in layer's ``from_config``."""
    config = dict(config)
    for key, value in config.items():
        if isinstance(value, dict):
            module = _NESTED_OBJECT_MODULES.get(key.rsplit("_", 1)[-1])
            if module is not None:
                config[key] = module.deserialize(value)
    return config


@keras_export("keras.layers.Layer")
class Layer(Module):
    """Base class of layers: ``build(input_shape)`` creates state, ``call(inputs)`` computes."""

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj.__dict__["_auto_config"] = _auto_config(cls, args, kwargs)
        return obj

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_is_build_wrapper", False):
            cls.build = _wrap_build(build)

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None, autocast=True, name=None,
                 **kwargs):
        d = self.__dict__
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        batch_size = kwargs.pop("batch_size", None)
        kwargs.pop("input_dtype", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}")
        if name is None:
            name = backend.unique_name(backend.snake_case(type(self).__name__))
        elif not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name} (of type {type(name)})")
        d["_name"] = name
        d["_scope_name"] = name
        d["_trainable"] = bool(trainable)
        d["_trainable_variables"] = []
        d["_non_trainable_variables"] = []
        d["_layers"] = []
        d["_metrics"] = []
        d["_losses"] = []
        d["_inbound_nodes"] = []
        d["_parent_path"] = None
        d["_build_shapes_dict"] = None
        d["_tracker_locked"] = False
        d["_in_build"] = False
        d["_fully_called"] = False
        d["_dtype_policy"] = dtype_policy.get(dtype)
        d["_np_compute_dtype"] = np.dtype(d["_dtype_policy"].compute_dtype)
        d["autocast"] = bool(autocast)
        d["built"] = False
        d["input_spec"] = None
        d["supports_masking"] = False
        d["activity_regularizer"] = regularizers.get(activity_regularizer)
        if input_shape is None and input_dim is not None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            d["_input_shape_arg"] = tuple(batch_input_shape)
        elif input_shape is not None:
            d["_input_shape_arg"] = (batch_size,) + tuple(input_shape)
        else:
            d["_input_shape_arg"] = None
        d["_called_super_init"] = True
        # Anything a subclass assigned before calling super().__init__() is tracked now.
        for value in list(d.values()):
            if isinstance(value, (Layer, Variable)):
                self._track(value)
        d["_tracker_ready"] = True
        if not _has_custom_build(type(self)) and not getattr(type(self), "_never_built_at_init", False):
            d["built"] = True

    # -- attribute tracking ----------------------------------------------------
    def __setattr__(self, name, value):
        if self.__dict__.get("_tracker_ready") and not name.startswith("__"):
            value = self._track(value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        value = self.__dict__.get(name)
        object.__delattr__(self, name)
        if isinstance(value, Layer) and value in self._layers:
            self._layers.remove(value)
        elif isinstance(value, Variable):
            for group in (self._trainable_variables, self._non_trainable_variables):
                for i, v in enumerate(group):
                    if v is value:
                        del group[i]
                        break

    def _track(self, value):
        """Registers a Variable, Layer or Metric (also inside lists/dicts); returns what to store."""
        if isinstance(value, Layer):
            if value is not self and not any(v is value for v in self._layers):
                self._check_unlocked()
                self._layers.append(value)
        elif isinstance(value, Variable):
            if not any(v is value for v in self._trainable_variables) and not any(
                    v is value for v in self._non_trainable_variables):
                self._check_unlocked()
                (self._trainable_variables if value.trainable else self._non_trainable_variables).append(value)
        elif getattr(value, "_is_keras_metric", False):
            if not any(m is value for m in self._metrics):
                self._metrics.append(value)
        elif type(value) is list:
            for item in value:
                self._track(item)
            return _TrackedList(value, self)  # what is appended later is tracked too
        elif isinstance(value, tuple):
            for item in value:
                self._track(item)
        elif type(value) is dict:
            for item in value.values():
                self._track(item)
            return _TrackedDict(value, self)
        return value

    def _check_unlocked(self):
        if self.__dict__.get("_tracker_locked"):
            raise ValueError(f"{_LOCKED_MESSAGE} (layer '{self.name}')")

    def _lock_state(self):
        self.__dict__["_tracker_locked"] = True

    def _unlock_state(self):
        self.__dict__["_tracker_locked"] = False

    # -- names and dtypes ---------------------------------------------------------
    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        if not isinstance(value, str) or "/" in value:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={value}")
        self.__dict__["_name"] = value
        self.__dict__["_scope_name"] = value

    @property
    def path(self):
        parent = self._parent_path
        return f"{parent}/{self.name}" if parent else self.name

    def _open_name_scope(self):
        if self._parent_path is None:
            self.__dict__["_parent_path"] = backend.current_path()
        return backend.name_scope(self.name, caller=self, parent_path=self._parent_path)

    @property
    def dtype_policy(self):
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        self.__dict__["_dtype_policy"] = dtype_policy.get(value)
        self.__dict__["_np_compute_dtype"] = np.dtype(self._dtype_policy.compute_dtype)

    @property
    def dtype(self):
        return self._dtype_policy.variable_dtype

    @property
    def compute_dtype(self):
        return self._dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self._dtype_policy.variable_dtype

    @property
    def input_dtype(self):
        return self._dtype_policy.compute_dtype

    # -- state ---------------------------------------------------------------------
    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", overwrite_with_gradient=False, name=None):
        """Creates a variable of this layer (call it from ``build``)."""
        if args:
            if isinstance(args[0], str):
                raise ValueError(
                    f"The first positional argument of `add_weight()` is `shape`, but it received the string "
                    f"{args[0]!r}. Pass the variable's name by keyword: `add_weight(name={args[0]!r}, shape=...)`.")
            names = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer", "constraint",
                     "aggregation", "overwrite_with_gradient", "name")
            given = dict(zip(names, args))
            shape = given.get("shape", shape)
            initializer = given.get("initializer", initializer)
            dtype = given.get("dtype", dtype)
            trainable = given.get("trainable", trainable)
            regularizer = given.get("regularizer", regularizer)
            constraint = given.get("constraint", constraint)
            name = given.get("name", name)
        self._check_unlocked()
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = self.variable_dtype if dtype is None else getattr(dtype, "name", dtype)
        dtype = dtypes.as_dtype(dtype).name
        if initializer is None:
            initializer = "glorot_uniform" if dtype.startswith(("float", "bfloat")) else "zeros"
        initializer = initializers.get(initializer)
        with self._open_name_scope():
            variable = KerasVariable(initializer, shape=shape, dtype=dtype, trainable=trainable, autocast=autocast,
                                     aggregation=aggregation, name=name, regularizer=regularizers.get(regularizer),
                                     constraint=constraints.get(constraint),
                                     overwrite_with_gradient=overwrite_with_gradient)
        (self._trainable_variables if trainable else self._non_trainable_variables).append(variable)
        return variable

    add_variable = add_weight

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        value = bool(value)
        self.__dict__["_trainable"] = value
        for v in self._trainable_variables:
            v.trainable = value
        for layer in self._layers:
            layer.trainable = value

    def _flatten_layers(self, include_self=True, recursive=True):
        seen = set()
        out = []
        stack = [self] if include_self else list(reversed(self._layers))
        while stack:
            layer = stack.pop()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            out.append(layer)
            if recursive or layer is self:
                stack.extend(reversed(layer._layers))
        return out

    @property
    def weights(self):
        """Own trainable, own non-trainable, then every sub-layer's weights, depth first (no duplicates)."""
        out, seen = [], set()
        for layer in self._flatten_layers():
            for v in layer._trainable_variables + layer._non_trainable_variables:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [v for v in self.weights if v.trainable]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.weights
        return [v for v in self.weights if not v.trainable]

    @property
    def variables(self):
        return self.weights

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        return self.non_trainable_weights

    def get_weights(self):
        """The weights as numpy arrays, in ``weights`` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Sets the weights from numpy arrays given in ``weights`` order."""
        layer_weights = self.weights
        weights = list(weights)
        if len(layer_weights) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" with a weight list of length '
                             f"{len(weights)}, but the layer was expecting {len(layer_weights)} weights.")
        arrays = []
        for variable, value in zip(layer_weights, weights):
            value = host_array(value)
            if tuple(variable.shape) != value.shape:
                raise ValueError(f"Layer {self.name} weight shape {tuple(variable.shape)} is not compatible with "
                                 f"provided weight shape {value.shape}.")
            arrays.append(value)
        for variable, value in zip(layer_weights, arrays):
            variable.assign(value)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. "
                             "You can build it manually via: `layer.build(input_shape)`.")
        return int(sum(int(np.prod(v.shape)) for v in self.weights))

    # -- losses and metrics -----------------------------------------------------------
    def add_loss(self, loss):
        """Adds a scalar loss (e.g. an activity penalty) to ``losses`` for this call."""
        self._losses.append(loss)

    def _clear_losses(self):
        for layer in self._flatten_layers():
            if layer._losses:
                layer.__dict__["_losses"] = []

    @property
    def losses(self):
        """Losses added during the last call, then the weight regularization penalties."""
        out = []
        for layer in self._flatten_layers():
            out.extend(layer._losses)
        for v in self.trainable_weights:
            regularizer = getattr(v, "regularizer", None)
            if regularizer is not None:
                out.append(regularizer(v))
        return out

    @property
    def metrics(self):
        out = list(self._metrics)
        for layer in self._layers:
            out.extend(layer.metrics)
        return out

    # -- build / call ------------------------------------------------------------------
    def build(self, input_shape=None):
        """Creates the layer's state; the default only marks the layer built."""
        self.built = True

    def call(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` method implemented.")

    def __call__(self, *args, **kwargs):
        if not self.__dict__.get("_called_super_init"):
            raise RuntimeError(f"It looks like you forgot to call `super().__init__()` in the constructor of "
                               f"{type(self).__name__}.")
        if not args:
            if not kwargs:
                raise TypeError(f"Layer {self.name} was called without inputs.")
            first = next(iter(kwargs))
            args = (kwargs.pop(first),)
        if _contains_keras_tensor(args) or _contains_keras_tensor(kwargs):
            return self._symbolic_call(args, kwargs)
        inputs = self._convert_inputs(args[0])
        accepts_training, _, training_default = _call_spec(type(self))
        training = kwargs.pop("training", None)
        ctx = _context
        outer_training = ctx.training
        if training is None:
            training = outer_training
        if training is None:
            training = training_default
        outermost = ctx.depth == 0
        ctx.depth += 1
        if training is not None:
            ctx.training = training
        try:
            if outermost:
                self._clear_losses()
            if not self.built:
                self._maybe_build(inputs)
            if self.input_spec is not None:
                assert_input_compatibility(self.input_spec, inputs, self.name)
            if accepts_training:
                kwargs["training"] = training
            accepts_mask = _call_spec(type(self))[1]
            previous_mask = kwargs["mask"] if "mask" in kwargs else _masks_of(args[0])  # before any cast
            if accepts_mask and "mask" not in kwargs and previous_mask is not None:
                kwargs["mask"] = previous_mask
            if "mask" in kwargs and not accepts_mask:
                del kwargs["mask"]
            if self._fully_called:
                outputs = self.call(inputs, *args[1:], **kwargs)
            else:
                with self._open_name_scope():
                    outputs = self.call(inputs, *args[1:], **kwargs)
                self.__dict__["_fully_called"] = True
            outputs = rerun_at_every_call(lambda x: self.call(x, *args[1:], **kwargs), inputs, outputs,
                                          f"Layer {self.name!r}")
            self._set_output_masks(inputs, outputs, previous_mask)
            if self.activity_regularizer is not None:
                for output in tree.flatten(outputs):
                    if isinstance(output, Tensor):
                        self.add_loss(self.activity_regularizer(output))
        finally:
            ctx.depth -= 1
            ctx.training = outer_training
        return outputs

    # -- masks ----------------------------------------------------------------------------------
    def compute_mask(self, inputs, previous_mask):
        """The mask of the outputs: by default the inputs' mask if the layer supports masking, else None."""
        return previous_mask if self.supports_masking else None

    def _set_output_masks(self, inputs, outputs, previous_mask):
        """Attaches ``compute_mask``'s result to the outputs (Keras's ``_keras_mask``), for the next layer."""
        if previous_mask is None and not _overrides(type(self), "compute_mask"):
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        if isinstance(outputs, (list, tuple)) and isinstance(masks, (list, tuple)):
            for output, mask in zip(outputs, masks):
                set_keras_mask(output, mask)
        elif isinstance(outputs, Tensor):
            set_keras_mask(outputs, masks)

    # Sequential and functional models leave input dtypes to their layers (Keras 3 does not cast a model's
    # inputs to the model's own policy: a float64 Input stays float64).
    _autocast_inputs = True

    def _convert_inputs(self, x):
        if isinstance(x, Tensor):
            dtype = host_array(x).dtype
            if dtype.kind == "f" and dtype != self._np_compute_dtype and self.autocast and self._autocast_inputs:
                return math_ops.cast(x, self._np_compute_dtype.name)
            return x
        if isinstance(x, (list, tuple, dict)):
            return tree.map_structure(self._convert_inputs, x)
        if x is None or isinstance(x, (str, bool)) and not isinstance(x, np.ndarray):
            return x
        if isinstance(x, Variable):
            return self._convert_inputs(convert_to_tensor(x))
        arr = np.asarray(x)
        if arr.dtype.kind == "f" and arr.dtype != self._np_compute_dtype and self._autocast_inputs:
            arr = arr.astype(self._np_compute_dtype)
        return convert_to_tensor(arr)

    def _maybe_build(self, inputs):
        shapes = tree.map_structure(lambda t: tuple(getattr(t, "shape", ())), inputs)
        if isinstance(shapes, list) and shapes and all(isinstance(s, tuple) for s in shapes):
            shapes = list(shapes)
        if self.input_spec is not None:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        if self._parent_path is None:
            self.__dict__["_parent_path"] = backend.current_path()
        self.build(shapes)
        if not self.built:
            # A custom build that does not call super().build(); Keras still marks it built.
            self.built = True
            self._lock_state()

    def compute_output_shape(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} should implement `def compute_output_shape("
                                  "input_shape)`.")

    def compute_output_spec(self, *args, **kwargs):
        """KerasTensors for the outputs, from ``compute_output_shape`` or by running ``call`` on zeros."""
        inputs = args[0]
        if _overrides(type(self), "compute_output_shape"):
            in_shapes = tree.map_structure(lambda t: t.shape, inputs)
            out_shapes = self.compute_output_shape(in_shapes)
            return tree.map_shape_structure(lambda s: KerasTensor(s, dtype=self.compute_dtype), out_shapes)
        return self._output_spec_by_running(args, kwargs)

    def _output_spec_by_running(self, args, kwargs):
        batch_is_none = any(isinstance(t, KerasTensor) and t.shape and t.shape[0] is None
                            for t in tree.flatten((args, kwargs)))

        def concrete(t):
            if isinstance(t, KerasTensor):
                return Tensor(np.zeros(tuple(1 if d is None else d for d in t.shape), dtype=t.dtype))
            return t
        args = tree.map_structure(concrete, args)
        kwargs = tree.map_structure(concrete, kwargs)
        if _call_spec(type(self))[0]:
            kwargs["training"] = False
        ctx = _context
        ctx.depth += 1
        try:
            with self._open_name_scope():
                outputs = self.call(*args, **kwargs)
        finally:
            ctx.depth -= 1

        def symbolic(t):
            if isinstance(t, Tensor):
                shape = tuple(host_array(t).shape)
                if batch_is_none and shape:
                    shape = (None,) + shape[1:]
                return KerasTensor(shape, dtype=t.dtype.name)
            return t
        return tree.map_structure(symbolic, outputs)

    def _symbolic_output(self, *args, **kwargs):
        """Output KerasTensors for KerasTensor inputs, building and checking like a call but recording no Node."""
        inputs = args[0]
        if not self.built:
            self._maybe_build(inputs)
        if self.input_spec is not None:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        return self.compute_output_spec(*args, **{k: v for k, v in kwargs.items() if k != "training"})

    def _symbolic_call(self, args, kwargs):
        inputs = args[0]
        kwargs = dict(kwargs)
        if not self.built:
            self._maybe_build(inputs)
        if self.input_spec is not None:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        spec_kwargs = {k: v for k, v in kwargs.items() if k != "training"}
        if _call_spec(type(self))[1] and "mask" not in spec_kwargs:
            # A call that reads its mask sees one while its output shapes are worked out (ones: every step kept),
            # as it will at run time; the Node does not record it (masks travel with the tensors).
            mask = _symbolic_masks_of(inputs)
            if mask is not None:
                spec_kwargs["mask"] = tree.map_structure(
                    lambda m: m if m is None else Tensor(np.ones([1 if d is None else d for d in m.shape],
                                                                 dtype=np.dtype(m.dtype))), mask)
        outputs = self.compute_output_spec(*args, **spec_kwargs)
        Node(self, call_args=args, call_kwargs=kwargs, outputs=outputs)
        return outputs

    # -- functional-graph views ------------------------------------------------------------
    @property
    def input(self):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer '{self.name}' has never been called and thus has no defined input.")
        args = self._inbound_nodes[0].call_args
        return args[0] if len(args) == 1 else list(args)

    @property
    def output(self):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer '{self.name}' has never been called and thus has no defined output.")
        return self._inbound_nodes[0].outputs

    # -- config and saving ---------------------------------------------------------------------
    def get_config(self):
        """``name``, ``trainable`` and ``dtype``; a subclass adds its constructor arguments."""
        config = {"name": self.name}
        if not _overrides(type(self), "get_config"):
            auto = self._auto_config
            if auto is None:
                raise NotImplementedError(
                    f"Layer {type(self).__name__} has arguments in `__init__()` that are not plain values, so "
                    f"tapeflow cannot generate its config. Override `get_config()`:\n\n"
                    f"    def get_config(self):\n        config = super().get_config()\n"
                    f"        config.update({{'arg': self.arg, ...}})\n        return config")
            config.update(auto)
            spec = inspect.getfullargspec(type(self).__init__)
            if spec.varkw is None and "name" not in spec.args[1:] + spec.kwonlyargs:
                config.pop("name", None)
        config["trainable"] = self.trainable
        config["dtype"] = dtype_policy.serialize(self.dtype_policy)
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = serialize_keras_object(self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = dtype_policy.get(config["dtype"])
        try:
            return cls(**config)
        except Exception as e:
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using config={config}.\n\n"
                            f"Exception encountered: {e}") from e

    def get_build_config(self):
        if self._build_shapes_dict is None:
            return None
        shapes = self._build_shapes_dict
        if len(shapes) == 1:
            (value,) = shapes.values()
            return {"input_shape": _jsonable_shape(value)}
        return {"shapes_dict": {k: _jsonable_shape(v) for k, v in shapes.items()}}

    def build_from_config(self, config):
        if not config or self.built and _has_custom_build(type(self)):
            return
        if "input_shape" in config:
            self.build(_tuple_shape(config["input_shape"]))
        elif "shapes_dict" in config:
            self.build(**{k: _tuple_shape(v) for k, v in config["shapes_dict"].items()})

    def _own_variables(self):
        return self._trainable_variables + self._non_trainable_variables

    def save_own_variables(self, store):
        """Writes this layer's own variables to ``store["0"], store["1"], ...`` (trainable first)."""
        for i, v in enumerate(self._own_variables()):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store):
        """Reads what ``save_own_variables`` wrote; the counts and shapes must match."""
        variables = self._own_variables()
        keys = list(store.keys())
        if len(keys) != len(variables):
            if not variables and not self.built:
                raise ValueError(
                    f"Layer '{self.name}' was never built and thus it doesn't have any variables. However the "
                    f"weights file lists {len(keys)} variables for this layer. Build the layer (or implement "
                    f"`build_from_config`) before loading its weights.")
            raise ValueError(f"Layer '{self.name}' expected {len(variables)} variables, but received {len(keys)} "
                             f"variables during loading. Expected: {[v.name for v in variables]}")
        values = [np.asarray(store[str(i)]) for i in range(len(variables))]
        for v, value in zip(variables, values):
            if tuple(v.shape) != value.shape:
                raise ValueError(f"Layer '{self.name}': variable '{v.name}' has shape {tuple(v.shape)}, but the "
                                 f"stored value has shape {value.shape}.")
        for v, value in zip(variables, values):
            v.assign(value)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


# ------------------------------------------------------------------- masks ---
# A tensor's Keras mask (Keras's ``_keras_mask`` attribute): Tensors have fixed slots, so the masks live in a
# table keyed by the tensor's id, each entry dropped when its tensor is collected.
_keras_masks = {}


def set_keras_mask(tensor, mask):
    """Attaches ``mask`` to ``tensor`` (None removes it)."""
    if not isinstance(tensor, Tensor):
        return
    key = id(tensor)
    if mask is None:
        _keras_masks.pop(key, None)
        return
    _keras_masks[key] = (weakref.ref(tensor, lambda _, key=key: _keras_masks.pop(key, None)), mask)


def get_keras_mask(tensor):
    """The mask a layer attached to ``tensor``, or None."""
    entry = _keras_masks.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1]


def _masks_of(inputs):
    """The mask of a tensor, a list of the masks of a list of tensors (None where none), or None."""
    if isinstance(inputs, Tensor):
        return get_keras_mask(inputs)
    if isinstance(inputs, (list, tuple)) and inputs:
        masks = [get_keras_mask(x) if isinstance(x, Tensor) else None for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return None


def _symbolic_keras_mask(tensor):
    """The mask a layer would attach to the KerasTensor ``tensor`` (a bool KerasTensor), or None.

    Computed on demand (``x._keras_mask`` of a functional graph), never while building: the producing layer's
    ``compute_mask`` runs on zeros standing for its inputs and ones for their masks, as ``compute_output_spec``
    runs ``call``. Unknown axes are sized 2, then 3: the mask's axes that change size are the unknown ones."""
    cached = tensor.__dict__.get("_symbolic_mask_cache", _NOT_COMPUTED)
    if cached is _NOT_COMPUTED:
        cached = tensor.__dict__["_symbolic_mask_cache"] = _compute_symbolic_keras_mask(tensor)
    return cached


_NOT_COMPUTED = object()


def _compute_symbolic_keras_mask(tensor):
    history = tensor._keras_history
    if history is None:
        return None
    layer, node_index, tensor_index = history
    node = layer._inbound_nodes[node_index]
    if node.is_input or not isinstance(layer, Layer) or not node.call_args:
        return None
    inputs = node.call_args[0]
    previous = node.call_kwargs.get("mask")
    if previous is None:
        previous = _symbolic_masks_of(inputs)
    if previous is None and not _overrides(type(layer), "compute_mask"):
        return None

    def mask_with_unknown_axes_sized(size):
        def concrete(t, fill):
            shape = tuple(size if d is None else d for d in t.shape)
            return Tensor(np.full(shape, fill, dtype=np.dtype(t.dtype)))
        concrete_inputs = tree.map_structure(
            lambda t: concrete(t, 0) if isinstance(t, KerasTensor) else t, inputs)
        concrete_previous = tree.map_structure(
            lambda t: concrete(t, True) if isinstance(t, KerasTensor) else t, previous)
        masks = layer.compute_mask(concrete_inputs, concrete_previous)
        if isinstance(masks, (list, tuple)) and len(node.output_tensors) > 1:
            masks = masks[tensor_index] if tensor_index < len(masks) else None
        return None if masks is None else convert_to_tensor(masks)

    small, large = mask_with_unknown_axes_sized(2), mask_with_unknown_axes_sized(3)
    if small is None:
        return None
    shape = tuple(a if a == b else None for a, b in zip(small.shape.as_list(), large.shape.as_list()))
    return KerasTensor(shape, dtype=small.dtype.name, record_history=False)


def _symbolic_masks_of(inputs):
    if isinstance(inputs, KerasTensor):
        return _symbolic_keras_mask(inputs)
    if isinstance(inputs, (list, tuple)) and inputs:
        masks = [_symbolic_keras_mask(x) if isinstance(x, KerasTensor) else None for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return None


Tensor.keras_mask_accessors = (get_keras_mask, set_keras_mask)
KerasTensor.symbolic_mask_of = _symbolic_keras_mask


# ----------------------------------------------------------------- helpers ---
def _overrides(cls, method):
    return getattr(cls, method) is not getattr(Layer, method)


def _has_custom_build(cls):
    return getattr(cls, "build") is not Layer.build


def _contains_keras_tensor(structure):
    if isinstance(structure, KerasTensor):
        return True
    if isinstance(structure, (list, tuple)):
        return any(_contains_keras_tensor(x) for x in structure)
    if isinstance(structure, dict):
        return any(_contains_keras_tensor(x) for x in structure.values())
    return False


def _jsonable_shape(shape):
    if tree.is_shape(shape):
        return [None if d is None else int(d) for d in shape]
    if isinstance(shape, (list, tuple)):
        return [_jsonable_shape(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _jsonable_shape(v) for k, v in shape.items()}
    return shape


def _tuple_shape(shape):
    if tree.is_shape(shape):
        return tuple(shape)
    if isinstance(shape, (list, tuple)):
        return [_tuple_shape(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _tuple_shape(v) for k, v in shape.items()}
    return shape


def warn_once(message, _seen=set()):
    if message not in _seen:
        _seen.add(message)
        warnings.warn(message, stacklevel=3)
