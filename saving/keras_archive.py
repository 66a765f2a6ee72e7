"""The ``.keras`` format: a stored zip of ``metadata.json``, ``config.json`` and ``model.weights.h5``.

Layers that keep files beside their variables (a vocabulary) store them as
members ``assets/<path>/<name>`` (``assets``). ``config.json`` is
``serialize_keras_object(model)`` with Keras's public
module names and the ``compile_config``; ``model.weights.h5`` has the layout
of ``weights_h5``; ``metadata.json`` is ``{"keras_version", "date_saved"}``
and is not read back. Loading checks the whole config (``registry``) before
it builds anything, rebuilds the model, compiles it (optimizer built), then
loads every variable, optimizer state included. A directory's members must
be regular files (a symbolic link could read any file); an archive's members
are checked (size, CRC-32) before they are parsed; ``config.json`` may not
nest deeper than MAX_CONFIG_DEPTH.

With ``zipped=False`` the same three files go in a directory.
"""
import datetime
import json
import os

import h5py

from . import assets, zip_io
from .atomic import atomic_directory
from .release import replacing
from .compile_config import compile_config_of, try_compile
from .config_check import check_config
from .registry import custom_object_scope
from .serialization_lib import deserialize_keras_object, serialize_keras_object
from .state_loading import load_state
from .errors import ArchiveError, ExternalReferenceError, FileContentError, OversizedContentError
from .h5_reader import H5File
from .weights_h5 import read_weights, weights_file_limit, write_weights

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"
_MAX_CONFIG_BYTES = 64 << 20
MAX_CONFIG_DEPTH = 100   # a Sequential in a Functional in a Functional ... is about 10 levels per model


def keras_version():
    from tapeflow.keras import __version__
    return __version__


def model_config(model):
    """``config.json`` of ``model`` as a dict."""
    config = serialize_keras_object(model)
    compile_config = compile_config_of(model)
    config["compile_config"] = serialize_keras_object(compile_config) if compile_config else {}
    return config


def _metadata():
    stamp = datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")
    return json.dumps({"keras_version": keras_version(), "date_saved": stamp}).encode("utf-8")


def save_keras(model, filepath, zipped=True):
    config = json.dumps(model_config(model)).encode("utf-8")  # before any file is touched
    members = [(METADATA, _metadata()), (CONFIG, config)] + assets.asset_members(model)
    if not zipped:
        with atomic_directory(filepath) as tmp:
            assets.write_members_to_directory(tmp, members)
            with h5py.File(os.path.join(tmp, WEIGHTS), "w") as h5:
                write_weights(h5, model)
        return
    with replacing(filepath) as tmp:
        zip_io.write_archive(tmp, members, WEIGHTS, lambda h5, checksums: write_weights(h5, model, checksums))


# ------------------------------------------------------------------ load ---
def _depth(value):
    """How deeply ``value`` (parsed JSON) nests lists and dicts; stops counting past MAX_CONFIG_DEPTH."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_CONFIG_DEPTH:
            break
        stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_json(raw, source, what):
    """JSON read from a file: a FileContentError if it is not JSON, an OversizedContentError if it nests
    deeper than any model config does."""
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FileContentError(f"'{source}': {what} is not valid JSON ({e}).") from e
    except RecursionError:
        raise OversizedContentError(f"'{source}': {what} nests lists and objects too deeply to be a model "
                                    "config.") from None
    if _depth(value) > MAX_CONFIG_DEPTH:
        raise OversizedContentError(f"'{source}': {what} nests lists and objects more than {MAX_CONFIG_DEPTH} "
                                    "levels deep; no model config is that deep.")
    return value


def parse_config(raw, source, what=CONFIG):
    config = parse_json(raw, source, what)
    if not isinstance(config, dict) or not isinstance(config.get("class_name"), str) \
            or not isinstance(config.get("config"), dict):
        raise FileContentError(f"'{source}': {what} does not describe a model (expected an object with "
                               "'class_name' and 'config').")
    return config


def build_model(config, source, custom_objects=None, compile=True, safe_mode=True):
    """The model described by a Keras 3 config: checked, rebuilt, built and (optionally) compiled."""
    check_config(config, source, custom_objects)
    config = dict(config)
    compile_config = config.pop("compile_config", None)
    try:
        with custom_object_scope(custom_objects):
            model = deserialize_keras_object(config, custom_objects=custom_objects, safe_mode=safe_mode)
    except Exception as e:
        raise FileContentError(f"Cannot rebuild the model saved in '{source}': {type(e).__name__}: {e}") from e
    if compile and compile_config:
        try_compile(model, compile_config, source, custom_objects)
    return model


def _refuse_npz(names, source):
    if WEIGHTS not in names and "model.weights.npz" in names:
        raise FileContentError(f"'{source}' stores its weights as model.weights.npz, whose values are pickled "
                               "Python objects; tapeflow never unpickles data from a file. Re-save the model "
                               "with the default weights format.")


def _member_path(directory, name):
    """The path of member ``name`` of an unzipped .keras directory: a regular file, not a link."""
    path = os.path.join(directory, name)
    if os.path.islink(path):
        raise ExternalReferenceError(f"'{directory}': {name} is a symbolic link; the files of a model directory "
                                     "must be the files themselves.")
    if not os.path.isfile(path):
        raise ArchiveError(f"'{directory}' is a directory without {name}: not an unzipped .keras model.")
    return path


def _read_member_file(directory, name, max_size):
    fd = os.open(_member_path(directory, name), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_size + 1)
    if len(data) > max_size:
        raise OversizedContentError(f"'{directory}': {name} is more than the {max_size} bytes allowed for it.")
    return data


def load_weights_from_archive(model, filepath, skip_mismatch=False):
    if os.path.isdir(filepath):
        _refuse_npz(os.listdir(filepath), filepath)
        h5 = H5File.open(_member_path(filepath, WEIGHTS), f"{filepath}/{WEIGHTS}", follow_symlinks=False)
    else:
        with zip_io.Archive(filepath) as archive:
            _refuse_npz(archive.names(), filepath)
            with archive.open_hdf5(WEIGHTS, max_size=weights_file_limit(model)) as h5:
                return load_state(read_weights(h5.root, model, filepath), model, filepath,
                                  skip_mismatch=skip_mismatch)
    with h5:
        load_state(read_weights(h5.root, model, filepath), model, filepath, skip_mismatch=skip_mismatch)


def load_keras(filepath, custom_objects=None, compile=True, safe_mode=True):
    if os.path.isdir(filepath):
        raw = _read_member_file(filepath, CONFIG, _MAX_CONFIG_BYTES)
    else:
        with zip_io.Archive(filepath) as archive:
            raw = archive.read(CONFIG, max_size=_MAX_CONFIG_BYTES)
    model = build_model(parse_config(raw, filepath), filepath, custom_objects, compile, safe_mode)
    load_weights_from_archive(model, filepath)
    if os.path.isdir(filepath):
        assets.load_assets(model, assets.DirectoryMembers(filepath), filepath)
    else:
        with zip_io.Archive(filepath) as archive:
            assets.load_assets(model, assets.ArchiveMembers(archive), filepath)
    return model
