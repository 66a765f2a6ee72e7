"""tf.keras.models: Model, Sequential, cloning, JSON, and loading (which lives in tapeflow.saving)."""
from tapeflow.layers import Model, Sequential  # noqa: F401
from tapeflow.layers.models.cloning import clone_model  # noqa: F401
from tapeflow.layers.models.model import model_from_json  # noqa: F401


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved with ``model.save`` (implemented by tapeflow.saving)."""
    from tapeflow import saving
    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """tf.keras.models.save_model: the same as ``model.save(filepath)``."""
    from tapeflow import saving
    return saving.save_model(model, filepath, overwrite=overwrite, zipped=zipped, **kwargs)
