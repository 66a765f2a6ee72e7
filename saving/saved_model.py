"""tf.saved_model: save a tf.Module tree with its traced functions to a directory, and load it back.

Layout of the directory:
  saved_model.json  the object graph (modules, variables, functions), every traced
                    function's graph of ops, and (with experimental_custom_gradients)
                    the traced gradient graphs of custom gradients
  variables.h5      variable values and the constants of the graphs

Loading needs nothing else: it rebuilds only registered ops from data, never
code. Without the custom gradients saved, differentiating a loaded function
in a fresh process raises ``LookupError: No gradient defined for operation
'IdentityN' (op type: IdentityN)``, as in TensorFlow.
"""
import json
import os

import numpy as np

from tapeflow.framework.logging_util import warn
from tapeflow.framework.registry import is_registered
from tapeflow.framework.tensor_spec import TensorSpec
from tapeflow.framework.variables import Variable
from tapeflow.function import ConcreteFunction, Function, register_custom_gradient
from tapeflow.module import Module

from .atomic import atomic_directory
from .graph_io import LoadedGraph, graph_to_data

FORMAT = "tapeflow-saved-model"
VERSION = 1
GRAPH_FILE = "saved_model.json"
VARIABLES_FILE = "variables.h5"


class SaveOptions:
    """Options for tf.saved_model.save; ``experimental_custom_gradients`` defaults to True, as in TensorFlow."""

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_io_device=None, experimental_variable_policy=None,
                 experimental_custom_gradients=True, experimental_image_format=False,
                 experimental_skip_saver=False, experimental_sharding_callback=None, extra_tags=None):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)
        self.function_aliases = function_aliases


class LoadOptions:
    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        pass


# ------------------------------------------------------------------ save ---
def _functions_of(obj):
    """(attribute name, Function) pairs for the tf.functions reachable on ``obj``."""
    found = {}
    for name in dir(type(obj)):
        if isinstance(getattr(type(obj), name, None), Function):
            found[name] = getattr(obj, name)
    for name, value in vars(obj).items():
        if isinstance(value, Function):
            found[name] = value
    return sorted(found.items())


def _concretes(function):
    out = []
    for entry in function.concrete_functions():
        out.append(entry)
        out.extend(getattr(entry, "specialised", {}).values())
    if not out and function.input_signature is not None:
        out.append(function.get_concrete_function())
    return out


class _Saver:
    def __init__(self, options):
        self.options = options
        self.objects = []
        self.index = {}
        self.arrays = {}
        self.gradients = {}

    def add(self, obj):
        key = id(obj)
        if key in self.index:
            return self.index[key]
        i = len(self.objects)
        self.index[key] = i
        if isinstance(obj, Variable):
            self.objects.append({"kind": "variable", "name": obj._shared_name, "trainable": obj.trainable,
                                 "dtype": obj.dtype.name, "shape": list(obj.shape)})
            self.arrays[f"variables/{i}"] = np.asarray(obj._value)
            return i
        entry = {"kind": "module", "name": getattr(obj, "name", type(obj).__name__), "children": {}, "functions": {}}
        self.objects.append(entry)
        for attr, value in obj._tracked_attributes():
            child = self._child(value)
            if child is not None:
                entry["children"][attr] = child
        for attr, function in _functions_of(obj):
            entry["functions"][attr] = self._function(function, f"{i}.{attr}")
        return i

    def _child(self, value):
        if isinstance(value, (Variable, Module)):
            return {"object": self.add(value)}
        if isinstance(value, (list, tuple)):
            items = [self._child(v) for v in value]
            if any(item is not None for item in items):
                return {"list": items}
        if isinstance(value, dict):
            items = {str(k): self._child(v) for k, v in value.items()}
            if any(item is not None for item in items.values()):
                return {"dict": items}
        return None

    def _graph(self, graph, key):
        for var in graph.variables:
            self.add(var)
        variable_ids = {id(v): self.index[id(v)] for v in graph.variables}
        for name, info in graph.custom_gradients.items():
            if self.options.experimental_custom_gradients and name not in self.gradients:
                self.gradients[name] = None  # placeholder against recursion
                data = self._graph(info["graph"], f"gradients/{len(self.gradients)}")
                self.gradients[name] = {"graph": data, "n_outputs": info["n_outputs"],
                                        "n_differentiable": info["n_differentiable"],
                                        "n_captures": info["n_captures"]}
        data, constants = graph_to_data(graph, variable_ids, {})
        data["constants_key"] = key
        for j, c in enumerate(constants):
            self.arrays[f"constants/{key}/{j}"] = np.asarray(c)
        return data

    def _function(self, function, key):
        concretes = _concretes(function)
        return {
            "input_signature": None if function.input_signature is None else
            [s.to_json() for s in function.input_signature],
            "concretes": [{"polymorphic": c.polymorphic, "graph": self._graph(c.graph, f"{key}/{k}")}
                          for k, c in enumerate(concretes)],
        }


def save(obj, export_dir, signatures=None, options=None):
    """Saves ``obj`` (a tf.Module) and its traced tf.functions to the directory ``export_dir``."""
    if not isinstance(obj, Module):
        raise ValueError(f"Expected a tf.Module (or a Keras model/layer) to save, got {type(obj).__name__}")
    options = options or SaveOptions()
    saver = _Saver(options)
    saver.add(obj)
    signature_data = {}
    if signatures is not None:
        if not isinstance(signatures, dict):
            signatures = {"serving_default": signatures}
        for name, fn in signatures.items():
            if isinstance(fn, Function):
                fn = fn.get_concrete_function()
            if not isinstance(fn, ConcreteFunction):
                raise ValueError(f"signature {name!r} must be a tf.function with an input_signature or a "
                                 "concrete function")
            signature_data[name] = {"polymorphic": fn.polymorphic,
                                    "graph": saver._graph(fn.graph, f"signatures/{name}")}
    document = {"format": FORMAT, "version": VERSION, "objects": saver.objects,
                "custom_gradients": saver.gradients, "signatures": signature_data,
                "options": {"experimental_custom_gradients": options.experimental_custom_gradients}}
    import h5py
    with atomic_directory(export_dir) as tmp:
        with h5py.File(os.path.join(tmp, VARIABLES_FILE), "w") as f:
            for name, array in saver.arrays.items():
                f.create_dataset(name, data=array)
        with open(os.path.join(tmp, GRAPH_FILE), "w") as f:
            json.dump(document, f)
        os.makedirs(os.path.join(tmp, "assets"))


# ------------------------------------------------------------------ load ---
class _UserObject(Module):
    """A loaded tf.Module: its attributes are the saved variables, submodules and functions."""

    def __init__(self, name):
        super().__init__(name=name if name and name.isidentifier() else None)
        self.signatures = {}


class RestoredFunction:
    """A loaded tf.function: dispatches to the saved trace whose signature matches the arguments."""

    def __init__(self, name, concretes, input_signature):
        self.__name__ = name
        self._concretes = concretes
        self.input_signature = input_signature

    def concrete_functions(self):
        return list(self._concretes)

    def __call__(self, *args):
        from tapeflow.framework import nest
        from tapeflow.framework.conversion import convert_to_tensor
        flat = nest.flatten(list(args))
        tensors = [a._as_tensor() if isinstance(a, Variable) else a for a in flat]
        errors = []
        for concrete in self._concretes:
            specs = concrete.structured_input_signature
            if len(specs) != len(tensors):
                continue
            try:
                converted = [convert_to_tensor(t, dtype=s.dtype) for t, s in zip(tensors, specs)]
                concrete._check_inputs(converted)
            except (TypeError, ValueError) as err:
                errors.append(str(err))
                continue
            return concrete.call_flat(converted)
        available = [list(c.structured_input_signature) for c in self._concretes]
        raise ValueError(f"Could not find a saved trace of {self.__name__!r} matching the arguments "
                         f"{[getattr(t, 'shape', t) for t in tensors]}. Saved signatures: {available}"
                         + (f" ({errors[-1]})" if errors else ""))


def _read_document(export_dir):
    path = os.path.join(export_dir, GRAPH_FILE)
    if not os.path.isdir(export_dir):
        raise OSError(f"SavedModel file does not exist at: {export_dir}")
    if not os.path.exists(path):
        raise OSError(f"{export_dir!r} is not a tapeflow SavedModel directory: {GRAPH_FILE} is missing")
    try:
        with open(path) as f:
            document = json.load(f)
    except (ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"Corrupt SavedModel: {path} is not valid JSON ({err})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a tapeflow SavedModel description")
    if document.get("version") != VERSION:
        raise ValueError(f"Unsupported SavedModel version {document.get('version')} in {path}")
    return document


def load(export_dir, tags=None, options=None):
    """Loads a directory written by ``save``; returns an object with the saved attributes."""
    import h5py
    document = _read_document(export_dir)
    with h5py.File(os.path.join(export_dir, VARIABLES_FILE), "r") as f:
        arrays = {}
        f.visititems(lambda name, item: arrays.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
    entries = document["objects"]
    objects = [None] * len(entries)
    for i, entry in enumerate(entries):
        if entry["kind"] == "variable":
            value = arrays.get(f"variables/{i}")
            if value is None:
                raise ValueError(f"Corrupt SavedModel: the value of variable {entry['name']!r} is missing")
            if list(np.shape(value)) != entry["shape"]:
                raise ValueError(f"Corrupt SavedModel: variable {entry['name']!r} has shape {np.shape(value)}, "
                                 f"expected {entry['shape']}")
            objects[i] = Variable(value, trainable=entry["trainable"], name=entry["name"], dtype=entry["dtype"])
        elif entry["kind"] == "module":
            objects[i] = _UserObject(entry.get("name"))
        else:
            raise ValueError(f"Corrupt SavedModel: unknown object kind {entry['kind']!r}")

    def graph(data):
        key = data["constants_key"]
        constants = [np.asarray(arrays[f"constants/{key}/{j}"]) for j in range(data["n_constants"])]
        return LoadedGraph(data, constants, objects)

    saved_gradients = document.get("custom_gradients") or {}
    for name, info in saved_gradients.items():
        gradient = ConcreteFunction(graph(info["graph"]), name=name)
        register_custom_gradient(name, gradient, info["n_outputs"], info["n_differentiable"], info["n_captures"])

    def child(value):
        if "object" in value:
            return objects[value["object"]]
        if "list" in value:
            return [None if v is None else child(v) for v in value["list"]]
        return {k: None if v is None else child(v) for k, v in value["dict"].items()}

    for obj, entry in zip(objects, entries):
        if entry["kind"] != "module":
            continue
        for attr, value in entry["children"].items():
            setattr(obj, attr, child(value))
        for attr, fdata in entry["functions"].items():
            concretes = []
            for c in fdata["concretes"]:
                concrete = ConcreteFunction(graph(c["graph"]), polymorphic=c["polymorphic"], name=attr)
                _warn_unsaved_gradients(concrete, attr)
                concretes.append(concrete)
            specs = fdata["input_signature"]
            signature = None if specs is None else [TensorSpec.from_json(s) for s in specs]
            setattr(obj, attr, RestoredFunction(attr, concretes, signature))
    root = objects[0]
    for name, sdata in document.get("signatures", {}).items():
        root.signatures[name] = ConcreteFunction(graph(sdata["graph"]), polymorphic=sdata["polymorphic"], name=name)
    return root


def _warn_unsaved_gradients(concrete, name):
    for _, _, attrs, _ in concrete.graph.nodes:
        op = attrs.get("_gradient_op_type")
        if op is not None and not is_registered(op):
            warn(f"Importing a function ({name}) with ops with unsaved custom gradients. Will likely fail if a "
                 "gradient is requested.")
            return

