"""A model's compile settings in files: Keras 3's ``compile_config`` and the legacy ``training_config``.

Writing uses Keras's public names (``{"module": "keras.optimizers",
"class_name": "Adam", ...}``) so that real Keras recompiles the model.
Reading accepts Keras 3 configs and TF-Keras 2 ``training_config``
(``"Custom>Adam"`` optimizers with their extra keys, metrics wrapped as
``MeanMetricWrapper``); optimizer classes come only from the built-in table,
the registry and ``custom_objects``.
"""
import inspect
import warnings

from tapeflow import optimizers
from tapeflow.optimizers import Optimizer

from .registry import custom_object_scope
from .serialization_lib import deserialize_keras_object, instantiate

_COMPILE_KEYS = ("loss", "loss_weights", "metrics", "weighted_metrics", "run_eagerly", "steps_per_execution",
                 "jit_compile")


def compile_config_of(model):
    """Keras's ``compile_config`` for ``model`` ({} when it is not compiled)."""
    config = model.get_compile_config() if hasattr(model, "get_compile_config") else {}
    if config and isinstance(getattr(model, "optimizer", None), Optimizer):
        config = dict(config, optimizer=optimizers.serialize(model.optimizer))
    return config


def training_config_of(model):
    """The legacy ``training_config``: the compile settings with the optimizer as ``optimizer_config``."""
    config = compile_config_of(model)
    if not config:
        return None
    out = {key: config.get(key) for key in _COMPILE_KEYS}
    optimizer = config.get("optimizer")
    if isinstance(optimizer, dict):
        out["optimizer_config"] = {"class_name": optimizer.get("registered_name") or optimizer["class_name"],
                                   "config": optimizer["config"]}
    return out


# ------------------------------------------------------------------ read ---
def _accepted(cls):
    names = set()
    for klass in cls.__mro__:
        if klass is object:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters
        names |= {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break
    return names - {"self"}


def deserialize_optimizer(config, custom_objects=None):
    """An optimizer from a Keras 3 or TF-Keras 2 config dict, or a name."""
    if isinstance(config, str):
        return optimizers.get(config)
    cls = optimizers.optimizer_class(config, custom_objects)
    class_name = config.get("class_name")
    if cls is None and isinstance(class_name, str) and class_name.startswith("Custom>"):
        # TF-Keras 2 wrote its own optimizers so
        cls = optimizers.optimizer_class(dict(config, class_name=class_name[len("Custom>"):]), custom_objects)
    if cls is None:
        raise TypeError(f"Unknown optimizer class '{class_name}': it is neither built in nor "
                        "registered with @tf.keras.saving.register_keras_serializable(); pass it in custom_objects.")
    if optimizers.ALL_OBJECTS_DICT.get(cls.__name__.lower()) is not cls:
        return instantiate(cls, dict(config.get("config") or {}), custom_objects)
    inner = dict(config.get("config") or {})
    if "lr" in inner and "learning_rate" not in inner:
        inner["learning_rate"] = inner.pop("lr")
    accepted = _accepted(cls) | {"decay"}
    dropped = sorted(k for k in inner if k not in accepted)
    for key in dropped:
        inner.pop(key)
    if isinstance(inner.get("learning_rate"), dict):
        return cls.from_config(inner, custom_objects=custom_objects)
    return cls.from_config(inner)


def _metric_entry(entry):
    if isinstance(entry, dict) and entry.get("class_name") == "MeanMetricWrapper":
        inner = entry.get("config") or {}
        return inner.get("name") or inner.get("fn")
    return entry


def _metrics(value):
    """Keras 2 nested metrics per output ([[...]]) for a single output, and wrapped built-in metrics, as names."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list):
        return [_metric_entry(v) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _metrics(v) for k, v in value.items()}
    return _metric_entry(value)


def _objects(value, custom_objects):
    if isinstance(value, dict) and "class_name" in value:
        return deserialize_keras_object(value, custom_objects=custom_objects)
    if isinstance(value, list):
        return [_objects(v, custom_objects) for v in value]
    if isinstance(value, dict):
        return {k: _objects(v, custom_objects) for k, v in value.items()}
    return value


def compile_from_config(model, config, custom_objects=None, optimizer_key="optimizer"):
    """Compiles ``model`` from a ``compile_config`` (or, with ``optimizer_key="optimizer_config"``,
    a legacy ``training_config``)."""
    args = {key: config[key] for key in _COMPILE_KEYS if key in config}
    args.pop("jit_compile", None)
    for key in ("metrics", "weighted_metrics"):
        if key in args:
            args[key] = _metrics(args[key])
    with custom_object_scope(custom_objects):
        for key in ("loss", "metrics", "weighted_metrics"):
            if key in args:
                args[key] = _objects(args[key], custom_objects)
        optimizer = config.get(optimizer_key)
        args["optimizer"] = "rmsprop" if optimizer is None else deserialize_optimizer(optimizer, custom_objects)
        model.compile_from_config(args)


def try_compile(model, config, source, custom_objects=None, optimizer_key="optimizer"):
    """``compile_from_config``, but a config tapeflow cannot use only warns: the model is returned uncompiled."""
    try:
        compile_from_config(model, config, custom_objects, optimizer_key)
        return True
    except Exception as e:  # noqa: BLE001 - any failure here leaves a usable, uncompiled model
        warnings.warn(f"'{source}': could not compile the loaded model from its saved training configuration "
                      f"({type(e).__name__}: {e}). The model is returned uncompiled; call compile() yourself.",
                      stacklevel=3)
        return False
