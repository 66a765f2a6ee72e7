"""``Model.export``: a TensorFlow SavedModel with a ``serve`` endpoint, as Keras 3 writes one.

The model is wrapped in a ``tf.Module`` whose ``serve`` is a ``tf.function`` over the model's input signature
(inference: ``training=False``), then written by ``tf.saved_model.save``; ``tf.saved_model.load(path).serve(x)``
computes what ``model(x)`` does.
"""
import os

from ..keras_tensor import KerasTensor
from ..utils import tree


def input_signature_of(model):
    """(TensorSpecs of the model's inputs, one per positional argument of ``serve``; the model's input structure)."""
    from tapeflow.framework.tensor_spec import TensorSpec
    struct = getattr(model, "_inputs_struct", None)
    if struct is None:
        inputs = getattr(model, "inputs", None) if getattr(model, "built", False) else None
        if not inputs:
            raise ValueError(f"Model '{model.name}' has no Input tensors to take its signature from (a subclassed "
                             "model): pass `input_signature=[tf.TensorSpec(shape, dtype)]` to export().")
        struct = inputs[0] if len(inputs) == 1 else inputs
    flat = [TensorSpec(shape=t.shape, dtype=t.dtype, name=t.name) for t in tree.flatten(struct)]
    return flat, struct


def export_saved_model(model, filepath, format="tf_saved_model", verbose=True, input_signature=None, **kwargs):
    if format != "tf_saved_model":
        raise ValueError(f"Model.export: tapeflow writes only format='tf_saved_model' (a TensorFlow SavedModel); "
                         f"received format={format!r}.")
    if kwargs:
        raise ValueError(f"Model.export: unsupported argument(s) {sorted(kwargs)}.")
    from tapeflow.function import function
    from tapeflow.module import Module
    from tapeflow.saving.atomic import make_directories
    from tapeflow.saving.saved_model import save

    if input_signature is not None:
        signature, struct = list(input_signature), None
    else:
        signature, struct = input_signature_of(model)
    artifact = Module()
    artifact.model = model
    # Several inputs are positional arguments of ``serve`` (``serve(x_a, x_b)``), packed into the model's
    # input structure.
    if len(signature) == 1:
        def serve(inputs):
            return model(inputs, training=False)
    else:
        def serve(*inputs):
            packed = list(inputs) if struct is None else tree.pack_sequence_as(struct, list(inputs))
            return model(packed, training=False)
    artifact.serve = function(serve, input_signature=signature)
    parent = os.path.dirname(os.path.abspath(os.fspath(filepath)))
    make_directories(parent)  # as TensorFlow's SavedModel writer does: missing parents are created
    save(artifact, filepath)
    if verbose:
        print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n* Endpoint 'serve'\n"
              f"  inputs: {signature}")
