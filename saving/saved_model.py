"""tf.saved_model: save a tf.Module tree with its traced functions to a directory, and load it back.

Layout of the directory:
  saved_model.json  the object graph (modules, variables, functions), every traced
                    function's graph of ops, and (with experimental_custom_gradients)
                    the traced gradient graphs of custom gradients
  variables.h5      variable values and the constants of the graphs

Loading needs nothing else: it checks every field first (graph_validation,
saved_model_arrays), then rebuilds only registered ops from data, never code.
A loaded custom gradient belongs to the loaded functions alone. Without the custom gradients saved, differentiating a loaded function
in a fresh process raises ``LookupError: No gradient defined for operation
'IdentityN' (op type: IdentityN)``, as in TensorFlow.
"""
import json
import os

import numpy as np

from tapeflow.framework.logging_util import warn
from tapeflow.framework.registry import bound_gradient_name, is_registered, register_bound_gradient
from tapeflow.framework.tensor import host_array
from tapeflow.framework.tensor_spec import TensorSpec
from tapeflow.framework.variables import Variable
from tapeflow.function import ConcreteFunction, Function, custom_gradient_function
from tapeflow.module import Module

from .atomic import atomic_directory, make_directories
from .errors import FileContentError
from .graph_io import LoadedGraph, graph_to_data
from .graph_validation import constant_specs, validate_document, variable_specs
from .saved_model_arrays import read_arrays
from .saved_model_inputs import decode_inputs, encode_inputs, match_inputs

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
        if isinstance(value, (Function, RestoredFunction)):   # a loaded object can be saved again
            found[name] = value
    return sorted(found.items())


def _concretes(function):
    out = function.traced_concrete_functions()
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
            self.arrays[f"variables/{i}"] = host_array(obj)
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
            "concretes": [{"polymorphic": c.polymorphic, "graph": self._graph(c.graph, f"{key}/{k}"),
                           "input_structure": encode_inputs(c.graph)}
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
    parent = os.path.dirname(os.path.abspath(os.fspath(export_dir)))
    make_directories(parent)   # as TensorFlow, the missing parent directories are created
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

    def __call__(self, *args, **kwargs):
        function = vars(self).get("__call__")   # a saved tf.function __call__ is restored per instance
        if function is None:
            raise TypeError(f"the loaded object {self.name!r} has no saved __call__ function")
        return function(*args, **kwargs)


class RestoredFunction:
    """A loaded tf.function: dispatches to the saved trace whose signature matches the arguments."""

    def __init__(self, name, concretes, input_signature, input_structures=None):
        self.__name__ = name
        self._concretes = concretes
        self.input_signature = input_signature
        self._input_structures = input_structures or [None] * len(concretes)

    def concrete_functions(self):
        return list(self._concretes)

    traced_concrete_functions = concrete_functions   # a loaded trace holds no specialised ones

    def __call__(self, *args, **kwargs):
        from tapeflow.framework import nest
        from tapeflow.framework.conversion import convert_to_tensor
        errors = []
        for concrete, structure in zip(self._concretes, self._input_structures):
            if structure is None:
                continue
            given = match_inputs(structure, args, kwargs)   # the call's arguments as the trace's were laid out
            if given is None:
                continue
            try:
                converted = [convert_to_tensor(a._as_tensor() if isinstance(a, Variable) else a, dtype=s.dtype)
                             for a, s in zip(given, concrete.structured_input_signature)]
                concrete._check_inputs(converted)
            except (TypeError, ValueError) as err:
                errors.append(str(err))
                continue
            return concrete.call_flat(converted)
        if kwargs:
            raise ValueError(f"Could not find a saved trace of {self.__name__!r} matching the arguments {args!r} "
                             f"and keyword arguments {kwargs!r}" + (f" ({errors[-1]})" if errors else ""))
        flat = nest.flatten(list(args))
        tensors = [a._as_tensor() if isinstance(a, Variable) else a for a in flat]
        for concrete, structure in zip(self._concretes, self._input_structures):
            if structure is not None:
                continue
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
    if not os.path.isfile(path):
        raise OSError(f"{export_dir!r} is not a tapeflow SavedModel directory: {GRAPH_FILE} is missing")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:   # ValueError: JSONDecodeError, or an integer too long
        raise FileContentError(f"Corrupt SavedModel: {path} is not valid JSON ({err})") from None
    except RecursionError:
        raise FileContentError(f"Corrupt SavedModel: {path} nests its JSON too deeply") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise FileContentError(f"{path} is not a tapeflow SavedModel description (no \"format\": \"{FORMAT}\")")
    if document.get("version") != VERSION:
        version = document.get("version")
        raise FileContentError(f"Unsupported SavedModel version {str(version)[:40]} in {path}")
    validate_document(document, path)
    return document


def _graphs(document):
    """Every saved graph of a validated document."""
    for info in (document.get("custom_gradients") or {}).values():
        yield info["graph"]
    for info in (document.get("signatures") or {}).values():
        yield info["graph"]
    for entry in document["objects"]:
        if entry["kind"] == "module":
            for function in entry["functions"].values():
                for concrete in function["concretes"]:
                    yield concrete["graph"]


def _expected_arrays(document):
    """variables.h5 members to read: {member: (declared shape or None, numpy dtype or None)}."""
    expected = {f"variables/{i}": spec for i, spec in variable_specs(document).items()}
    for graph in _graphs(document):
        for j, spec in enumerate(constant_specs(graph)):
            expected[f"constants/{graph['constants_key']}/{j}"] = spec
    return expected


def load(export_dir, tags=None, options=None):
    """Loads a directory written by ``save``; returns an object with the saved attributes.

    Every field is checked before anything is built, and the custom gradients the file holds
    are bound to its functions (unique names, registered only once everything is built, and only
    as long as the loaded functions live): a load changes nothing else in the process, and a
    failed load changes nothing at all.
    """
    document = _read_document(export_dir)
    arrays = read_arrays(os.path.join(export_dir, VARIABLES_FILE), _expected_arrays(document))
    return _Loader(document, arrays).build()


class _Loader:
    def __init__(self, document, arrays):
        self.document = document
        self.arrays = arrays
        self.objects = []
        self.graphs = []
        saved = document.get("custom_gradients") or {}
        self.gradient_names = {name: bound_gradient_name("CustomGradient") for name in saved}

    def graph(self, data):
        key = data["constants_key"]
        constants = [self.arrays[f"constants/{key}/{j}"] for j in range(data["n_constants"])]
        graph = LoadedGraph(data, constants, self.objects, self.gradient_names)
        self.graphs.append(graph)
        return graph

    def _attach_gradients(self, saved):
        """Gives each loaded graph the saved gradients its nodes name, as a trace has them, so that
        saving the loaded object again keeps them."""
        for graph in self.graphs:
            for _, _, attrs, _ in graph.nodes:
                name = attrs.get("_gradient_op_type")
                if name in saved:
                    graph.custom_gradients[name] = saved[name]

    def child(self, value):
        if "object" in value:
            return self.objects[value["object"]]
        if "list" in value:
            return [None if v is None else self.child(v) for v in value["list"]]
        return {k: None if v is None else self.child(v) for k, v in value["dict"].items()}

    def build(self):
        entries = self.document["objects"]
        for i, entry in enumerate(entries):
            if entry["kind"] == "variable":
                self.objects.append(Variable(self.arrays[f"variables/{i}"], trainable=entry["trainable"],
                                             name=entry["name"], dtype=entry["dtype"]))
            else:
                self.objects.append(_UserObject(entry.get("name")))
        gradients, saved = [], {}
        for name, info in (self.document.get("custom_gradients") or {}).items():
            bound = self.gradient_names[name]
            counts = {key: info[key] for key in ("n_outputs", "n_differentiable", "n_captures")}
            graph = self.graph(info["graph"])
            saved[bound] = dict(graph=graph, **counts)
            # Named with a plain str: the registry entry must not keep its own bound name alive.
            function = ConcreteFunction(graph, name=str(bound))
            gradients.append((bound, custom_gradient_function(function, *counts.values())))
        loaded = []
        for obj, entry in zip(self.objects, entries):
            if entry["kind"] != "module":
                continue
            for attr, value in entry["children"].items():
                setattr(obj, attr, self.child(value))
            for attr, fdata in entry["functions"].items():
                concretes = [ConcreteFunction(self.graph(c["graph"]), polymorphic=c["polymorphic"], name=attr)
                             for c in fdata["concretes"]]
                loaded.extend((attr, c) for c in concretes)
                specs = fdata["input_signature"]
                signature = None if specs is None else [TensorSpec.from_json(s) for s in specs]
                structures = [None if c.get("input_structure") is None else
                              decode_inputs(c["input_structure"], len(concrete.graph.input_specs),
                                            f"{attr}.concretes[{k}].input_structure")
                              for k, (c, concrete) in enumerate(zip(fdata["concretes"], concretes))]
                setattr(obj, attr, RestoredFunction(attr, concretes, signature, structures))
        root = self.objects[0]
        for name, sdata in (self.document.get("signatures") or {}).items():
            root.signatures[name] = ConcreteFunction(self.graph(sdata["graph"]), polymorphic=sdata["polymorphic"],
                                                     name=name)
        self._attach_gradients(saved)
        for bound, gradient in gradients:   # the only change to the process, made once nothing can fail
            register_bound_gradient(bound, gradient)
        for attr, concrete in loaded:
            _warn_unsaved_gradients(concrete, attr)
        return root


def _warn_unsaved_gradients(concrete, name):
    for _, _, attrs, _ in concrete.graph.nodes:
        op = attrs.get("_gradient_op_type")
        if op is not None and not is_registered(op):
            warn(f"Importing a function ({name}) with ops with unsaved custom gradients. Will likely fail if a "
                 "gradient is requested.")
            return
