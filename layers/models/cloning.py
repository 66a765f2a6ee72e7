"""clone_model: the same architecture with fresh layers (``keras.models.clone_model``).

Sequential and functional models are rebuilt layer by layer: each layer goes
through ``clone_function`` (by default ``cls.from_config(layer.get_config())``,
so a custom layer needs no registration) and the functional graph is replayed
on new inputs, a shared layer being cloned once. Other models are rebuilt
from their config.
"""
from tapeflow.framework import nest

from ..core.input_layer import Input, InputLayer
from ..keras_tensor import KerasTensor
from ..serialization_lib import deserialize_keras_object, serialize_keras_object
from ..utils import tree
from .functional import Functional
from .sequential import Sequential


def _from_config(layer):
    return layer.__class__.from_config(layer.get_config())


def _layer_cloner(clone_function, call_function, recursive):
    """clone(layer): the user's clone_function, or from_config; nested models cloned recursively if asked."""
    def clone(layer):
        if recursive and isinstance(layer, (Sequential, Functional)):
            return clone_model(layer, clone_function=clone_function, call_function=call_function, recursive=True)
        return (clone_function or _from_config)(layer)
    return clone


def _checked_input_tensors(input_tensors, expected):
    flat = nest.flatten(input_tensors)
    bad = [t for t in flat if not isinstance(t, KerasTensor) or t._keras_history is None]
    if bad:
        raise ValueError(f"All entries in `input_tensors` must be KerasTensors (from `keras.Input`). Received "
                         f"invalid values: input_tensors={input_tensors}")
    if len(flat) != expected:
        raise ValueError(f"`input_tensors` must hold {expected} tensor(s), one per model input; received "
                         f"{len(flat)}.")
    return flat


def _fresh_input(tensor):
    layer = tensor._keras_history[0]
    return Input(batch_shape=layer.batch_shape, dtype=tensor.dtype, name=layer.name, optional=layer.optional)


def _clone_functional(model, input_tensors, clone, call_function):
    if input_tensors is None:
        new_inputs = [_fresh_input(t) for t in model._inputs]
    else:
        new_inputs = _checked_input_tensors(input_tensors, len(model._inputs))
    values = {id(old): new for old, new in zip(model._inputs, new_inputs)}
    call = call_function or (lambda layer, *args, **kwargs: layer(*args, **kwargs))
    clones = {}
    for node in model._run_nodes:
        layer = node.operation
        if id(layer) not in clones:
            clones[id(layer)] = clone(layer)
        args, kwargs = node.arguments(values)
        outputs = call(clones[id(layer)], *args, **kwargs)
        for t, value in zip(node.output_tensors, tree.flatten(outputs)):
            values[id(t)] = value
    outputs = [values[id(t)] for t in model._outputs]
    inputs_struct, outputs_struct = model._inputs_struct, model._outputs_struct
    inputs = (dict(zip(inputs_struct, new_inputs)) if isinstance(inputs_struct, dict)
              else nest.pack_sequence_as(inputs_struct, new_inputs) if isinstance(inputs_struct, (list, tuple))
              else new_inputs[0])
    outputs = (nest.pack_sequence_as(outputs_struct, outputs) if isinstance(outputs_struct, (list, tuple, dict))
               else outputs[0])
    return Functional(inputs, outputs, name=model.name, trainable=model.trainable)


def _clone_sequential(model, input_tensors, clone):
    layers = [clone(layer) for layer in model.layers]
    if input_tensors is not None:
        (tensor,) = _checked_input_tensors(input_tensors, 1)
        return Sequential([tensor, *layers], name=model.name, trainable=model.trainable)
    first = model._layers[0] if model._layers else None
    if isinstance(first, InputLayer):
        layers.insert(0, InputLayer.from_config(first.get_config()))
    clone_ = Sequential(layers, name=model.name, trainable=model.trainable)
    shapes = model._build_shapes_dict
    if not clone_.built and model.built and shapes is not None and len(shapes) == 1:
        (shape,) = shapes.values()
        clone_.build(tuple(shape))
    return clone_


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """A new model with the same architecture and new layers (freshly initialised weights)."""
    if kwargs:
        raise ValueError(f"clone_model: unrecognized keyword arguments {sorted(kwargs)}")
    for label, fn in (("clone_function", clone_function), ("call_function", call_function)):
        if fn is not None and not callable(fn):
            raise TypeError(f"`{label}` must be a callable; received {fn!r} of type {type(fn).__name__}")
    clone = _layer_cloner(clone_function, call_function, recursive)
    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError("`call_function` is only supported for functional models; this one is Sequential.")
        return _clone_sequential(model, input_tensors, clone)
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, clone, call_function)
    if clone_function is not None or input_tensors is not None or call_function is not None:
        raise ValueError(f"Arguments `clone_function`, `call_function` and `input_tensors` are only supported for "
                         f"Sequential and functional models. Received a model of type "
                         f"'{type(model).__name__}'.")
    config = serialize_keras_object(model)
    config.pop("compile_config", None)
    return deserialize_keras_object(config, custom_objects={type(model).__name__: type(model)})
