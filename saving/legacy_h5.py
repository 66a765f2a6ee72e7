"""Legacy HDF5 files (``.h5``/``.hdf5``): Keras 3's ``model.save('m.h5')`` layout, and reading TF-Keras 2's.

Layout written (Keras 3's)::

    /  @backend @keras_version @model_config (JSON) [@training_config (JSON)]
      model_weights/  @backend @keras_version @layer_names
        <layer name>/  @weight_names = [variable paths]   datasets at those paths
        top_level_model_weights/  @weight_names
      optimizer_weights/  @weight_names = [optimizer variable paths]   datasets

Loading is by order (the k-th saved layer with weights goes to the k-th
model layer with weights, its values in ``weight_names`` order) or, with
``by_name=True``, by layer name. Files are read through ``h5_reader``: a file
loaded by order may list at most ``max_saved_layers(model)`` layers, only the
layer groups matched with the model are opened, and every dataset's declared
shape is checked before any value is read; every value is read before any
variable changes. The model config passes through the same safety checks as
a ``.keras`` config: a Lambda layer or an unknown class is refused here too.
"""
import json
import warnings

import h5py
import numpy as np

from .serialization_lib import serialize_keras_object
from tapeflow.optimizers import SGD, Adam

from .release import replacing
from .compile_config import training_config_of, try_compile
from .h5_attrs import get_string, get_string_list, has_list, set_string, set_string_list
from .h5_reader import Dataset, Group, H5File
from .keras_archive import build_model, keras_version, parse_config, parse_json
from .state_loading import assign_pairs
from .errors import FileContentError, OversizedContentError

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
# Files are read through ``h5_reader``. Each layer group is looked at only when it is matched with a
# layer of the model (by order or by name), and its datasets' declared shapes are compared with the
# model's variables before any data is read.
def max_saved_layers(model):
    """The most layers a file loaded by order may list for ``model``: a file saved from the same
    architecture lists about ``len(model.layers)`` (with or without its input layers)."""
    return max(64, 4 * len(model.layers))


def weights_root(root):
    """The group holding ``layer_names`` (the file root, or ``model_weights``), or None."""
    if has_list(root, "layer_names"):
        return root
    group = root.get("model_weights")
    if isinstance(group, Group) and has_list(group, "layer_names"):
        return group
    return None


def _layer_group(group, name, source):
    layer_group = group.get(name)
    if not isinstance(layer_group, Group):
        raise FileContentError(f"Cannot read '{source}': layer '{name}' is listed in layer_names, but the "
                               f"file has no group '{group.name.rstrip('/')}/{name}'.")
    return layer_group


def _declared(group, names, source, owner):
    """The datasets ``names`` of ``group``, declared (shape and dtype), not read."""
    out = []
    for weight_name in names:
        item = group.get(weight_name)
        if item is None:
            raise FileContentError(f"Cannot read '{source}': weight '{weight_name}' of {owner} is listed in "
                                   "weight_names, but the file has no such dataset.")
        if not isinstance(item, Dataset):
            raise FileContentError(f"Cannot read '{source}': weight '{weight_name}' of {owner} should hold a "
                                   "variable's values, but it is a group.")
        out.append(item)
    return out


def _match(layer, label, saved_name, group, weight_names, source, problems):
    """[(variable, dataset)] of ``layer`` and its saved group, when counts and declared shapes agree."""
    variables = legacy_weights(layer)
    if len(variables) != len(weight_names):
        problems.append(f"{label} (layer '{layer.name}' of the model) corresponds to layer '{saved_name}' in the "
                        f"file, but it has {len(variables)} weights and the file has {len(weight_names)}")
        return []
    datasets = _declared(group, weight_names, source, f"layer '{saved_name}'")
    for variable, dataset in zip(variables, datasets):
        if tuple(variable.shape) != tuple(dataset.shape):
            problems.append(f"{label} (layer '{layer.name}'): weight '{getattr(variable, 'path', variable.name)}' "
                            f"has shape {tuple(variable.shape)}, the file's '{saved_name}' has "
                            f"{tuple(dataset.shape)}")
            return []
    return list(zip(variables, datasets))


def _pairs_by_order(model, group, names, source, problems):
    limit = max_saved_layers(model)
    if len(names) > limit:
        raise OversizedContentError(f"Cannot load '{source}' into model '{model.name}' by order: the file lists "
                                    f"{len(names)} layers, the model has {len(model.layers)} (a file saved from "
                                    f"this architecture lists about as many; at most {limit} are accepted).")
    layers = [layer for layer in model.layers if legacy_weights(layer)]
    saved = []
    for name in names:
        layer_group = _layer_group(group, name, source)
        weight_names = get_string_list(layer_group, "weight_names") or []
        if weight_names:
            saved.append((name, layer_group, weight_names))
            if len(saved) > len(layers):
                break
    if len(layers) != len(saved):
        found = f"more than {len(layers)}" if len(saved) > len(layers) else str(len(saved))
        problems.append(f"Layer count mismatch: the model has {len(layers)} layers with weights "
                        f"{[layer.name for layer in layers]}, the file has {found} {[e[0] for e in saved][:20]}")
        return []
    pairs = []
    for k, (layer, (name, layer_group, weight_names)) in enumerate(zip(layers, saved)):
        pairs += _match(layer, f"Layer #{k}", name, layer_group, weight_names, source, problems)
    return pairs


def _pairs_by_name(model, group, names, source, problems):
    index = {}
    for layer in model.layers:
        if legacy_weights(layer):
            index.setdefault(layer.name, []).append(layer)
    pairs = []
    for name in dict.fromkeys(names):
        if name not in index:
            continue   # only the model's layers are looked up in the file
        layer_group = _layer_group(group, name, source)
        weight_names = get_string_list(layer_group, "weight_names") or []
        for layer in index[name]:
            pairs += _match(layer, f"Layer '{name}'", name, layer_group, weight_names, source, problems)
    return pairs


def _read_pairs(pairs):
    """[(variable, array)]: each dataset read once (by_name may give one to two variables)."""
    arrays = {}
    for _, dataset in pairs:
        if id(dataset) not in arrays:
            arrays[id(dataset)] = dataset.read()
    return [(variable, arrays[id(dataset)]) for variable, dataset in pairs]


def load_weights_group(model, group, source, by_name=False, skip_mismatch=False):
    names = get_string_list(group, "layer_names") or []
    problems = []
    pairs = (_pairs_by_name if by_name else _pairs_by_order)(model, group, names, source, problems)
    top = group.get("top_level_model_weights")
    if isinstance(top, Group):
        weight_names = get_string_list(top, "weight_names") or []
        if weight_names:
            own = model._own_variables()
            datasets = [top.get(n) for n in weight_names] if len(own) == len(weight_names) else None
            if datasets is None or any(not isinstance(d, Dataset) for d in datasets) or any(
                    tuple(d.shape) != tuple(v.shape) for v, d in zip(own, datasets)):
                problems.append(f"the model's own weights do not match top_level_model_weights {weight_names[:20]}")
            else:
                pairs += list(zip(own, datasets))
    if problems:
        if not (skip_mismatch and by_name):
            raise FileContentError(f"Cannot load the weights of '{source}' into model '{model.name}' "
                                   f"({'by name' if by_name else 'by order'}); no variable was changed:\n"
                                   + "\n".join(f"  - {p}" for p in problems))
        for problem in problems:
            warnings.warn(f"Skipping loading weights from '{source}': {problem}", stacklevel=3)
    assign_pairs(_read_pairs(pairs), source)


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
        return [values[0], own[1]] + values[1:]
    return None


def load_optimizer_group(model, group, source, keras_2):
    optimizer = model.optimizer
    names = get_string_list(group, "weight_names") or []
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    own = optimizer.variables
    datasets = [group.get(n) for n in names] if len(names) <= len(own) else None
    mapped = None
    if datasets is not None and all(isinstance(d, Dataset) for d in datasets):
        mapped = _optimizer_values(optimizer, names, datasets, keras_2)
    if mapped is None or any(tuple(v.shape) != tuple(np.shape(x) if x is own[1] else x.shape)
                             for v, x in zip(own, mapped)):
        warnings.warn(f"'{source}': Error in loading the saved optimizer state. As a result, your model is "
                      f"starting with a freshly initialized optimizer (the file has {len(names)} optimizer "
                      f"variables, optimizer '{optimizer.name}' has {len(own)}).", stacklevel=3)
        return
    values = [np.asarray(x) if x is own[1] else x.read() for x in mapped]
    assign_pairs(list(zip(own, values)), source)


def load_legacy_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    with H5File.open(filepath) as f:
        root = f.root
        raw = get_string(root, "model_config")
        if raw is None:
            raise FileContentError(f"No model config found in the file at {filepath}: it holds weights only. "
                                   "Build the model in Python and call model.load_weights() on it.")
        model = build_model(parse_config(raw, filepath, "model_config"), filepath, custom_objects, compile=False,
                            safe_mode=safe_mode)
        group = weights_root(root)
        if group is not None:
            load_weights_group(model, group, filepath)
        training = get_string(root, "training_config")
        if compile and training:
            training_config = parse_json(training, filepath, "training_config")
            if try_compile(model, training_config, filepath, custom_objects, optimizer_key="optimizer_config"):
                optimizer_group = root.get("optimizer_weights")
                if isinstance(optimizer_group, Group) and has_list(optimizer_group, "weight_names"):
                    version = get_string(root, "keras_version") or ""
                    load_optimizer_group(model, optimizer_group, filepath, keras_2=version.startswith("2."))
    return model
