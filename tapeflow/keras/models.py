"""tf.keras.models: Model, Sequential, and loading (which lives in tapeflow.saving)."""
from tapeflow.layers import Model, Sequential  # noqa: F401


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved with ``model.save`` (implemented by tapeflow.saving)."""
    from tapeflow import saving
    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """tf.keras.models.save_model: the same as ``model.save(filepath)``."""
    from tapeflow import saving
    return saving.save_model(model, filepath, overwrite=overwrite, zipped=zipped, **kwargs)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same architecture (fresh weights), built from the model's config."""
    if input_tensors is not None or clone_function is not None:
        raise ValueError("clone_model: input_tensors and clone_function are not supported by tapeflow.")
    from tapeflow.layers.serialization_lib import deserialize_keras_object, serialize_keras_object
    config = serialize_keras_object(model)
    config.pop("compile_config", None)
    clone = deserialize_keras_object(config)
    return clone
