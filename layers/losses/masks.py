"""Keras masks in losses and metrics (Keras 3's rule).

A model's output can carry a Keras mask (the mask its last layer propagated,
e.g. from ``Embedding(mask_zero=True)`` through ``LSTM(return_sequences=True)``).
A Loss called on such a ``y_pred`` multiplies the mask into ``sample_weight``
and, for ``sum_over_batch_size``, averages over the unmasked entries only; a
MeanMetricWrapper multiplies it into ``sample_weight`` (masked entries neither
count nor weigh). The plain reducing metrics (Mean, Sum) do not read masks.

One difference from Keras, on purpose: a per-sample ``sample_weight`` of shape
(batch,) against a mask of shape (batch, steps) is taken to weigh every step of
its sample. Keras broadcasts the two from the right, which raises unless
batch == steps and then weighs steps by the wrong samples.
"""
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, math_ops

from ..layer import get_keras_mask


def mask_of(y_pred):
    """The Keras mask attached to ``y_pred``, or None."""
    return get_keras_mask(y_pred) if isinstance(y_pred, Tensor) else None


def combine_masks(first, second):
    """The logical AND of two masks, either of which may be None."""
    if first is None:
        return second
    if second is None:
        return first
    return math_ops.logical_and(_as_bool(first), _as_bool(second))


def weight_per_step(sample_weight, mask):
    """``sample_weight`` with trailing axes of size 1 added until it has the mask's rank (see the module doc)."""
    if sample_weight is None or mask is None:
        return sample_weight
    sample_weight = convert_to_tensor(sample_weight)
    for _ in range(len(mask.shape) - len(sample_weight.shape)):
        sample_weight = array_ops.expand_dims(sample_weight, -1)
    return sample_weight


def masked_sample_weight(sample_weight, mask, dtype):
    """A metric's weights with the mask multiplied in: the mask alone when there are no weights."""
    mask = math_ops.cast(mask, dtype)
    if sample_weight is None:
        return mask
    sample_weight = math_ops.cast(weight_per_step(sample_weight, mask), dtype)
    while len(sample_weight.shape) > len(mask.shape) and sample_weight.shape[-1] == 1:
        sample_weight = array_ops.squeeze(sample_weight, -1)   # (batch, steps, 1) weights: Keras's rank rule
    return math_ops.multiply(sample_weight, mask)


def _as_bool(mask):
    return mask if mask.dtype.name == "bool" else math_ops.cast(mask, "bool")
