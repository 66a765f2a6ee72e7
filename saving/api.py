"""The public entry points: ``save_model``, ``load_model``, ``save_weights``, ``load_weights``.

Each one dispatches on the file name's suffix as Keras 3 does: ``.keras``
(the zip archive), ``.weights.h5`` (weights only), ``.h5``/``.hdf5``
(legacy HDF5). Every write builds the file beside the target and renames it
into place, so a failed save leaves the previous file intact. Every read goes
through ``h5_reader`` (never libhdf5), which refuses anything that points
outside the file.
"""
import os
import sys
import warnings

import h5py

from . import keras_archive, legacy_h5
from .atomic import make_directories
from .release import replacing
from .state_loading import load_state
from .errors import FileContentError
from .h5_reader import H5File
from .weights_h5 import read_weights, write_weights

_LEGACY = (".h5", ".hdf5")


def _path(filepath):
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f"`filepath` must be a path (str or os.PathLike). Received: filepath={filepath!r} of type "
                        f"{type(filepath).__name__}")
    return os.fspath(filepath)


def _may_write(filepath, overwrite):
    """Keras asks before overwriting; without a terminal to ask on, an existing file is an error."""
    if overwrite or not os.path.exists(filepath):
        return True
    if not sys.stdin or not sys.stdin.isatty():
        raise FileExistsError(f"'{filepath}' already exists and overwrite=False.")
    answer = ""
    while answer not in ("y", "n"):
        answer = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]").strip().lower()
    return answer == "y"


def _check_model(model, what):
    from tapeflow.layers.layer import Layer
    if not isinstance(model, Layer):
        raise TypeError(f"{what} expects a Keras model (a tf.keras.Model or Layer). Received: {model!r} of type "
                        f"{type(model).__name__}")


# ----------------------------------------------------------------- model ---
def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves ``model`` as ``.keras`` (config, weights, optimizer state) or as a legacy ``.h5``."""
    _check_model(model, "save_model")
    filepath = _path(filepath)
    include_optimizer = kwargs.pop("include_optimizer", True)
    if "save_format" in kwargs:
        raise ValueError("The `save_format` argument is deprecated in Keras 3. Please remove this argument and "
                         "pass a file path with either `.keras` or `.h5` extension. Received: "
                         f"save_format={kwargs['save_format']}")
    if kwargs:
        raise ValueError(f"The following argument(s) are not supported: {sorted(kwargs)}")
    if filepath.endswith(".keras"):
        if not include_optimizer:
            raise ValueError("include_optimizer=False is only supported for the legacy .h5 format; the .keras "
                             "format always stores the optimizer state.")
        if _may_write(filepath, overwrite):
            keras_archive.save_keras(model, filepath, zipped=zipped is not False)
        return
    if filepath.endswith(_LEGACY):
        if zipped:
            raise ValueError("zipped=True is only supported for the .keras format.")
        warnings.warn("You are saving your model as an HDF5 file via `model.save()` or "
                      "`keras.saving.save_model(model)`. This file format is considered legacy. We recommend "
                      "using instead the native Keras format, e.g. `model.save('my_model.keras')` or "
                      "`keras.saving.save_model(model, 'my_model.keras')`.", stacklevel=3)
        if _may_write(filepath, overwrite):
            # Keras 3 creates the missing parent directories of a legacy .h5 file (not of .keras files or of
            # save_weights: those raise FileNotFoundError, as here).
            make_directories(os.path.dirname(os.path.abspath(filepath)))
            legacy_h5.save_legacy(model, filepath, include_optimizer=include_optimizer)
        return
    raise ValueError("Invalid filepath extension for saving. Please add either a `.keras` extension for the native "
                     "Keras format (recommended) or a `.h5` extension. Use `tf.saved_model.save(model, path)` to "
                     f"export a SavedModel directory. Received: filepath={filepath}.")


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved as ``.keras`` (file or unzipped directory) or legacy ``.h5``."""
    filepath = _path(filepath)
    if not os.path.exists(filepath):
        raise ValueError(f"File not found: filepath={filepath}. Please ensure the file is an accessible `.keras` "
                         "zip file.")
    if os.path.isdir(filepath):
        if os.path.isfile(os.path.join(filepath, "saved_model.json")):
            raise ValueError(f"'{filepath}' is a SavedModel directory written by tf.saved_model.save; load it with "
                             "tf.saved_model.load(), not tf.keras.models.load_model().")
        return keras_archive.load_keras(filepath, custom_objects, compile, safe_mode)
    if filepath.endswith(".keras"):
        return keras_archive.load_keras(filepath, custom_objects, compile, safe_mode)
    if filepath.endswith(_LEGACY):
        return legacy_h5.load_legacy_model(filepath, custom_objects, compile, safe_mode)
    raise ValueError(f"File format not supported: filepath={filepath}. tapeflow, like Keras 3, only supports "
                     "`.keras` files and legacy H5 files (`.h5` extension); SavedModel directories load with "
                     "tf.saved_model.load().")


# --------------------------------------------------------------- weights ---
def save_weights(model, filepath, overwrite=True, max_shard_size=None, **kwargs):
    """Saves the weights (and optimizer state) of ``model`` in Keras 3's ``.weights.h5`` layout."""
    _check_model(model, "save_weights")
    filepath = _path(filepath)
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    if max_shard_size is not None or filepath.endswith(".weights.json"):
        raise ValueError("Sharded weights (max_shard_size, .weights.json) are not supported by tapeflow; save "
                         "them to a single `.weights.h5` file.")
    if not filepath.endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")
    if not _may_write(filepath, overwrite):
        return
    with replacing(filepath) as tmp:
        with h5py.File(tmp, "w") as f:
            write_weights(f, model)


def _require_built(model, filepath):
    if not getattr(model, "built", True):
        raise ValueError(f"Cannot load weights from '{filepath}' into model '{model.name}': the model has not "
                         "been built yet, so it has no variables. Build it first (call it on a batch of data, or "
                         "call model.build(input_shape)), then call load_weights().")


def _load_new_format(model, filepath, skip_mismatch):
    with H5File.open(filepath) as f:
        load_state(read_weights(f.root, model, filepath), model, filepath, skip_mismatch=skip_mismatch)


def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """Loads weights from ``.keras``, ``.weights.h5`` or legacy ``.h5`` (with ``by_name``) into ``model``.

    Everything is read and checked before anything is assigned: a damaged or
    mismatched file raises and leaves every variable of ``model`` unchanged.
    """
    _check_model(model, "load_weights")
    filepath = _path(filepath)
    by_name = kwargs.pop("by_name", False)
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"Cannot load weights: '{filepath}' does not exist.")
    if by_name and (not filepath.endswith(_LEGACY) or filepath.endswith(".weights.h5")):
        raise ValueError(f"Invalid keyword arguments: {{'by_name': {by_name}}} (by_name is only supported for "
                         "legacy .h5 files).")
    _require_built(model, filepath)
    if filepath.endswith(".keras"):
        return keras_archive.load_weights_from_archive(model, filepath, skip_mismatch)
    if filepath.endswith(".weights.h5"):
        return _load_new_format(model, filepath, skip_mismatch)
    if filepath.endswith(".weights.json"):
        raise ValueError("Sharded weights (.weights.json) are not supported by tapeflow.")
    if filepath.endswith(_LEGACY):
        with H5File.open(filepath) as f:
            group = legacy_h5.weights_root(f.root)
            if group is not None:
                return legacy_h5.load_weights_group(model, group, filepath, by_name, skip_mismatch)
            if "layers" in f.root or "vars" in f.root:  # the new layout under a legacy name
                return load_state(read_weights(f.root, model, filepath), model, filepath,
                                  skip_mismatch=skip_mismatch)
            raise FileContentError(f"'{filepath}' holds no Keras weights: it has neither 'layer_names' "
                                   "(legacy layout) nor 'layers'/'vars' groups (Keras 3 layout).")
    raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` and "
                     "`.weights.h5` files, or legacy V1/V2 `.h5` files.")
