"""The ``.keras`` format: a stored zip of ``metadata.json``, ``config.json`` and ``model.weights.h5``.

``config.json`` is ``serialize_keras_object(model)`` with Keras's public
module names and the ``compile_config``; ``model.weights.h5`` has the layout
of ``weights_h5``; ``metadata.json`` is ``{"keras_version", "date_saved"}``
and is not read back. Loading checks the whole config (``registry``) before
it builds anything, rebuilds the model, compiles it (optimizer built), then
loads every variable, optimizer state included.

With ``zipped=False`` the same three files go in a directory.
"""
import datetime
import json
import os

import h5py

from tapeflow.layers.serialization_lib import custom_object_scope, deserialize_keras_object, serialize_keras_object

from . import zip_io
from .atomic import atomic_directory
from .release import replacing
from .compile_config import compile_config_of, try_compile
from .registry import check_config
from .state_loading import load_state
from .errors import FileContentError
from .weights_h5 import read_weights, write_weights

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"
_MAX_CONFIG_BYTES = 256 << 20


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
    members = [(METADATA, _metadata()), (CONFIG, config)]
    if not zipped:
        with atomic_directory(filepath) as tmp:
            for name, data in members:
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(data)
            with h5py.File(os.path.join(tmp, WEIGHTS), "w") as h5:
                write_weights(h5, model)
        return
    with replacing(filepath) as tmp:
        zip_io.write_archive(tmp, members, WEIGHTS, lambda h5, checksums: write_weights(h5, model, checksums))


# ------------------------------------------------------------------ load ---
def parse_config(raw, source):
    try:
        config = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FileContentError(f"'{source}': config.json is not valid JSON ({e}).") from e
    if not isinstance(config, dict) or not isinstance(config.get("class_name"), str) \
            or not isinstance(config.get("config"), dict):
        raise FileContentError(f"'{source}': config.json does not describe a model (expected an object with "
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


def load_weights_from_archive(model, filepath, skip_mismatch=False):
    if os.path.isdir(filepath):
        _refuse_npz(os.listdir(filepath), filepath)
        return _load_h5_weights(model, os.path.join(filepath, WEIGHTS), filepath, skip_mismatch)
    with zip_io.Archive(filepath) as archive:
        _refuse_npz(archive.names(), filepath)
        source = archive.h5_source(WEIGHTS)
        check = archive.check_member(WEIGHTS)   # runs while h5py reads
        try:
            entries = _read_h5_weights(model, source, filepath)
        except Exception:
            check.result()   # a damaged archive explains a damaged HDF5 member best
            raise
        check.result()
    load_state(entries, model, filepath, skip_mismatch=skip_mismatch)


def _read_h5_weights(model, file_or_path, source):
    try:
        try:
            h5 = h5py.File(file_or_path, "r")
        except (OSError, ValueError) as e:
            raise FileContentError(f"'{source}': {WEIGHTS} is not a readable HDF5 file ({e}).") from e
        with h5:
            return read_weights(h5, model, source)
    finally:
        if not isinstance(file_or_path, str):
            file_or_path.close()


def _load_h5_weights(model, path, source, skip_mismatch):
    load_state(_read_h5_weights(model, path, source), model, source, skip_mismatch=skip_mismatch)


def load_keras(filepath, custom_objects=None, compile=True, safe_mode=True):
    if os.path.isdir(filepath):
        config_path = os.path.join(filepath, CONFIG)
        if not os.path.isfile(config_path):
            raise FileContentError(f"'{filepath}' is a directory without {CONFIG}: not an unzipped .keras model.")
        with open(config_path, "rb") as f:
            raw = f.read()
    else:
        with zip_io.Archive(filepath) as archive:
            raw = archive.read(CONFIG, max_size=_MAX_CONFIG_BYTES)
    model = build_model(parse_config(raw, filepath), filepath, custom_objects, compile, safe_mode)
    load_weights_from_archive(model, filepath)
    return model
