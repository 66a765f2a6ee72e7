"""Attention: dot-product (Luong-style) attention over ``[query, value]`` or ``[query, value, key]``.

Scores are ``query @ key^T`` (times ``scale`` with ``use_scale``), or with
``score_mode="concat"`` ``concat_score_weight * sum(tanh(scale * (q + k)))``
over the features; masked key positions get a score lowered by 1e9 before the
softmax over the keys, the weights (after dropout in training) combine the
values, and masked query positions give zero outputs.
"""
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops, math_ops, nn_ops, random_ops, reduction_ops
from tapeflow.ops.common import to_tensor

import numpy as np

from ..keras_tensor import KerasTensor
from ..layer import Layer
from ..serialization_lib import keras_export

_SCORE_MODES = ("dot", "concat")


def _causal_mask(query_length, key_length):
    rows = np.arange(query_length)[:, None]
    cols = np.arange(key_length)[None, :]
    return (rows >= cols)[None]


@keras_export("keras.layers.Attention")
class Attention(Layer):
    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in _SCORE_MODES:
            raise ValueError(f"Invalid value for argument score_mode. Expected one of {list(_SCORE_MODES)}. "
                             f"Received: score_mode={score_mode}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"Invalid value for argument `dropout`. Expected a float value between 0 and 1. "
                             f"Received: dropout={dropout}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = seed
        self.supports_masking = True
        self.scale = None
        self.concat_score_weight = None

    def build(self, input_shape):
        _check_shapes(self, input_shape)
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones", dtype=self.dtype)
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones",
                                                       dtype=self.dtype)
        self.built = True

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = math_ops.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else math_ops.multiply(scores, self.scale)
        pairs = math_ops.add(array_ops.expand_dims(query, -2), array_ops.expand_dims(key, -3))
        if self.scale is not None:
            pairs = math_ops.multiply(self.scale, pairs)
        return math_ops.multiply(self.concat_score_weight, reduction_ops.reduce_sum(math_ops.tanh(pairs), axis=-1))

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        if scores_mask is not None:
            large = 65504.0 if scores.dtype.name == "float16" else 1.0e9
            padding = math_ops.cast(math_ops.logical_not(scores_mask), scores.dtype)
            scores = math_ops.subtract(scores, math_ops.multiply(math_ops.cast(large, scores.dtype), padding))
        weights = nn_ops.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            mask = random_ops.dropout_mask(tuple(host_array(weights).shape), self.dropout, weights.dtype, self.seed)
            weights = math_ops.multiply(weights, mask)
        return math_ops.matmul(weights, value), weights

    def _calculate_score_mask(self, scores, value_mask, use_causal_mask):
        if value_mask is not None:
            value_mask = array_ops.expand_dims(_as_bool(value_mask), -2)   # (B, 1, Tv)
        if not use_causal_mask:
            return value_mask
        shape = tuple(host_array(scores).shape)
        causal = to_tensor(_causal_mask(shape[-2], shape[-1]))
        return causal if value_mask is None else math_ops.logical_and(value_mask, causal)

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        query, value, key = _unpack(self, inputs, mask)
        query_mask, value_mask = (mask[0], mask[1]) if mask is not None else (None, None)
        scores = self._calculate_scores(query, key)
        scores_mask = self._calculate_score_mask(scores, value_mask, use_causal_mask)
        output, weights = self._apply_scores(scores, value, scores_mask, training)
        if query_mask is not None:
            keep = math_ops.cast(array_ops.expand_dims(_as_bool(query_mask), -1), output.dtype)
            output = math_ops.multiply(output, keep)
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        query_shape, value_shape = tuple(input_shape[0]), tuple(input_shape[1])
        return query_shape[:-1] + value_shape[-1:]

    def compute_output_spec(self, inputs, mask=None, return_attention_scores=False, training=None,
                            use_causal_mask=False):
        query_shape, value_shape = tuple(inputs[0].shape), tuple(inputs[1].shape)
        key_shape = tuple(inputs[2].shape) if len(inputs) > 2 else value_shape
        output = KerasTensor(query_shape[:-1] + value_shape[-1:], dtype=self.compute_dtype)
        if return_attention_scores:
            return output, KerasTensor(query_shape[:-1] + key_shape[-2:-1], dtype=self.compute_dtype)
        return output

    def get_config(self):
        config = super().get_config()
        config.update({"use_scale": self.use_scale, "score_mode": self.score_mode, "dropout": self.dropout,
                       "seed": self.seed})
        return config


def _as_bool(mask):
    mask = to_tensor(mask)
    return mask if mask.dtype.name == "bool" else math_ops.cast(mask, "bool")


def _check_shapes(layer, input_shape):
    if not isinstance(input_shape, (list, tuple)) or len(input_shape) not in (2, 3) or not all(
            isinstance(s, (list, tuple)) for s in input_shape):
        raise ValueError(f"{type(layer).__name__} layer '{layer.name}' must be called on a list of inputs, namely "
                         f"[query, value] or [query, value, key]. Received input shapes: {input_shape}")


def _unpack(layer, inputs, mask):
    """(query, value, key) from ``[query, value]`` or ``[query, value, key]``, the mask list checked."""
    name = type(layer).__name__
    if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
        raise ValueError(f"{name} layer '{layer.name}' must be called on a list of inputs, namely [query, value] or "
                         f"[query, value, key]. Received: {type(inputs).__name__} "
                         f"{'of length ' + str(len(inputs)) if isinstance(inputs, (list, tuple)) else ''}")
    if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3)):
        raise ValueError(f"{name} layer '{layer.name}' mask must be a list of length 2 or 3, namely [query_mask, "
                         f"value_mask] or [query_mask, value_mask, key_mask]. Received: mask={mask}")
    query, value = inputs[0], inputs[1]
    key = inputs[2] if len(inputs) > 2 else value
    return query, value, key
