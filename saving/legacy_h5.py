"""Legacy HDF5 files (``.h5``/``.hdf5``): Keras 3's ``model.save('m.h5')`` layout, and reading TF-Keras 2's.

Layout written (Keras 3's)::

    /  @backend @keras_version @model_config (JSON) [@training_config (JSON)]
      model_weights/  @backend @keras_version @layer_names
        <layer name>/  @weight_names = [variable paths]   datasets at those paths
        top_level_model_weights/  @weight_names
      optimizer_weights/  @weight_names = [optimizer variable paths]   datasets

Loading is by order (the k-th saved layer with weights goes to the k-th
model layer with weights, its values in ``weight_names`` order) or, with
``by_name=True``, by layer name. Every value is read and checked before any
variable changes. The model config passes through the same safety checks as
a ``.keras`` config: a Lambda layer or an unknown class is refused here too.
"""
import json
import warnings

import h5py
import numpy as np

from tapeflow.layers.serialization_lib import serialize_keras_object
from tapeflow.optimizers import SGD, Adam

from .release import replacing
from .compile_config import training_config_of, try_compile
from .h5_attrs import get_string, get_string_list, has_list, set_string, set_string_list
from .keras_archive import build_model, keras_version, parse_config
from .state_loading import assign_pairs
from .errors import FileContentError
from .weights_h5 import read_dataset

BACKEND = "tensorflow"  # tapeflow lays weights out as TensorFlow does (channels_last, kernel (in, out))


def legacy_weights(layer):
    """A layer's weights in legacy order: all trainable ones, then all non-trainable ones."""
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


# ----------------------------------------------------------------- write ---
def _legacy_entry(entry):
    """A layer entry of a model config in the legacy form: ``{"class_name", "config"}`` (plus graph keys)."""
    if not isinstance(entry, dict) or "class_name" not in entry:
        return entry
    out = {"class_name": entry.get("registered_name") or entry["class_name"],
           "config": _legacy_model_body(entry.get("config"))}
    for key in ("name", "inbound_nodes"):
        if key in entry:
            out[key] = entry[key]
    return out


def _legacy_model_body(config):
    if isinstance(config, dict) and isinstance(config.get("layers"), list):
        return dict(config, layers=[_legacy_entry(e) for e in config["layers"]])
    return config


def legacy_model_config(model):
    return _legacy_entry(serialize_keras_object(model))


def _parents(name):
    parts = name.split("/")
    return {"/".join(parts[:i]) for i in range(1, len(parts))}


def unique_names(names):
    """Dataset names that HDF5 can hold side by side: a repeated name, or a name that is also the
    group of another one, gets a suffix ``_1``, ``_2``, ... (Keras fails on these)."""
    used, groups, out = set(), set(), []
    for name in names:
        candidate, k = name, 0
        while candidate in used or candidate in groups or _parents(candidate) & used:
            k += 1
            candidate = f"{name}_{k}"
        used.add(candidate)
        groups |= _parents(candidate)
        out.append(candidate)
    return out


def _write_weight_group(group, variables):
    names = unique_names([getattr(v, "path", None) or v.name for v in variables])
    set_string_list(group, "weight_names", names)
    for name, variable in zip(names, variables):
        group.create_dataset(name, data=np.asarray(variable))


def write_model_weights(group, model):
    set_string(group, "backend", BACKEND, "ascii")
    set_string(group, "keras_version", keras_version(), "ascii")
    layers = model.layers
    set_string_list(group, "layer_names", [layer.name for layer in layers])
    for layer in layers:
        _write_weight_group(group.create_group(layer.name), legacy_weights(layer))
    _write_weight_group(group.create_group("top_level_model_weights"), model._own_variables())


def save_legacy(model, filepath, include_optimizer=True):
    model_config = json.dumps(legacy_model_config(model))  # before any file is touched
    training_config = training_config_of(model) if include_optimizer else None
    optimizer = getattr(model, "optimizer", None) if include_optimizer else None
    with replacing(filepath) as tmp:
        with h5py.File(tmp, "w") as f:
            set_string(f, "backend", BACKEND)
            set_string(f, "keras_version", keras_version())
            set_string(f, "model_config", model_config, "ascii")
            if training_config is not None:
                set_string(f, "training_config", json.dumps(training_config), "ascii")
            write_model_weights(f.create_group("model_weights"), model)
            if optimizer is not None and getattr(optimizer, "built", False):
                _write_weight_group(f.create_group("optimizer_weights"), optimizer.variables)


# ------------------------------------------------------------------ read ---
def open_h5(filepath):
    try:
        return h5py.File(filepath, "r")
    except (OSError, ValueError) as e:
        raise FileContentError(f"Cannot read '{filepath}': it is not a valid HDF5 file, or it is truncated or "
                               f"corrupted ({e}).") from e


def weights_root(f):
    """The group holding ``layer_names`` (the file root, or ``model_weights``), or None."""
    if has_list(f, "layer_names"):
        return f
    group = f.get("model_weights")
    if isinstance(group, h5py.Group) and has_list(group, "layer_names"):
        return group
    return None


def _saved_layers(group, source):
    names = get_string_list(group, "layer_names") or []
    out = []
    for name in names:
        layer_group = group.get(name)
        if not isinstance(layer_group, h5py.Group):
            raise FileContentError(f"Cannot read '{source}': layer '{name}' is listed in layer_names, but the "
                                   f"file has no group '{group.name.rstrip('/')}/{name}'.")
        weight_names = get_string_list(layer_group, "weight_names") or []
        values = []
        for weight_name in weight_names:
            item = layer_group.get(weight_name)
            if item is None:
                raise FileContentError(f"Cannot read '{source}': weight '{weight_name}' of layer '{name}' is "
                                       "listed in weight_names, but the file has no such dataset.")
            values.append(read_dataset(item, source))
        out.append((name, weight_names, values))
    return out


def _match(layer, label, saved_name, values, problems):
    variables = legacy_weights(layer)
    if len(variables) != len(values):
        problems.append(f"{label} (layer '{layer.name}' of the model) corresponds to layer '{saved_name}' in the "
                        f"file, but it has {len(variables)} weights and the file has {len(values)}")
        return []
    pairs = []
    for variable, value in zip(variables, values):
        if tuple(variable.shape) != tuple(value.shape):
            problems.append(f"{label} (layer '{layer.name}'): weight '{getattr(variable, 'path', variable.name)}' "
                            f"has shape {tuple(variable.shape)}, the file's '{saved_name}' has {tuple(value.shape)}")
            return []
        pairs.append((variable, value))
    return pairs


def _pairs_by_order(model, saved, problems):
    layers = [layer for layer in model.layers if legacy_weights(layer)]
    saved = [entry for entry in saved if entry[2]]
    if len(layers) != len(saved):
        problems.append(f"Layer count mismatch: the model has {len(layers)} layers with weights "
                        f"{[layer.name for layer in layers]}, the file has {len(saved)} "
                        f"{[entry[0] for entry in saved]}")
        return []
    pairs = []
    for k, (layer, (name, _, values)) in enumerate(zip(layers, saved)):
        pairs += _match(layer, f"Layer #{k}", name, values, problems)
    return pairs


def _pairs_by_name(model, saved, problems):
    index = {}
    for layer in model.layers:
        if legacy_weights(layer):
            index.setdefault(layer.name, []).append(layer)
    pairs = []
    for name, _, values in saved:
        for layer in index.get(name, []):
            pairs += _match(layer, f"Layer '{name}'", name, values, problems)
    return pairs


def load_weights_group(model, group, source, by_name=False, skip_mismatch=False):
    saved = _saved_layers(group, source)
    problems = []
    pairs = (_pairs_by_name if by_name else _pairs_by_order)(model, saved, problems)
    top = group.get("top_level_model_weights")
    if isinstance(top, h5py.Group):
        names = get_string_list(top, "weight_names") or []
        if names:
            values = [read_dataset(top[n], source) if n in top else None for n in names]
            own = model._own_variables()
            if any(v is None for v in values) or len(own) != len(values) or any(
                    tuple(v.shape) != tuple(x.shape) for v, x in zip(own, values)):
                problems.append(f"the model's own weights do not match top_level_model_weights {names}")
            else:
                pairs += list(zip(own, values))
    if problems:
        if not (skip_mismatch and by_name):
            raise FileContentError(f"Cannot load the weights of '{source}' into model '{model.name}' "
                                   f"({'by name' if by_name else 'by order'}); no variable was changed:\n"
                                   + "\n".join(f"  - {p}" for p in problems))
        for problem in problems:
            warnings.warn(f"Skipping loading weights from '{source}': {problem}", stacklevel=3)
    assign_pairs(pairs, source)


def _keras2_slots_match(optimizer, names):
    slots = [n.split("/") for n in names[1:]]
    if type(optimizer) is Adam and not optimizer.amsgrad:
        return all(len(s) > 2 and s[1] == ("m" if i % 2 == 0 else "v") for i, s in enumerate(slots))
    if type(optimizer) is SGD:
        return all(len(s) > 2 and s[1] == "m" for s in slots)
    return False


def _optimizer_values(optimizer, names, values, keras_2):
    own = optimizer.variables
    if not keras_2:
        return values if len(values) == len(own) else None
    # TF-Keras 2 saved [iteration, slots...] with no learning_rate variable; Adam's m/v and SGD's m are
    # Keras 3's momentum/velocity in the same order.
    lr_is_variable = len(own) > 1 and str(getattr(own[1], "name", "")).split(":")[0] == "learning_rate"
    if (lr_is_variable and len(values) == len(own) - 1 and names and names[0].split("/")[-1].startswith("iteration")
            and _keras2_slots_match(optimizer, names)):
        return [values[0], np.asarray(own[1])] + values[1:]
    return None


def load_optimizer_group(model, group, source, keras_2):
    optimizer = model.optimizer
    names = get_string_list(group, "weight_names") or []
    values = [read_dataset(group[n], source) if n in group else None for n in names]
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    mapped = None if any(v is None for v in values) else _optimizer_values(optimizer, names, values, keras_2)
    own = optimizer.variables
    if mapped is None or any(tuple(v.shape) != tuple(np.shape(x)) for v, x in zip(own, mapped)):
        warnings.warn(f"'{source}': Error in loading the saved optimizer state. As a result, your model is "
                      f"starting with a freshly initialized optimizer (the file has {len(values)} optimizer "
                      f"variables, optimizer '{optimizer.name}' has {len(own)}).", stacklevel=3)
        return
    assign_pairs(list(zip(own, mapped)), source)


def load_legacy_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    with open_h5(filepath) as f:
        raw = get_string(f, "model_config")
        if raw is None:
            raise FileContentError(f"No model config found in the file at {filepath}: it holds weights only. "
                                   "Build the model in Python and call model.load_weights() on it.")
        model = build_model(parse_config(raw, filepath), filepath, custom_objects, compile=False,
                            safe_mode=safe_mode)
        group = weights_root(f)
        if group is not None:
            load_weights_group(model, group, filepath)
        training = get_string(f, "training_config")
        if compile and training:
            try:
                training_config = json.loads(training)
            except json.JSONDecodeError as e:
                raise FileContentError(f"'{filepath}': training_config is not valid JSON ({e}).") from e
            if try_compile(model, training_config, filepath, custom_objects, optimizer_key="optimizer_config"):
                optimizer_group = f.get("optimizer_weights")
                if isinstance(optimizer_group, h5py.Group) and has_list(optimizer_group, "weight_names"):
                    version = get_string(f, "keras_version") or ""
                    load_optimizer_group(model, optimizer_group, filepath, keras_2=version.startswith("2."))
    return model
