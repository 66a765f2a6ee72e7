"""AdditiveAttention: Bahdanau-style attention, scores ``sum(scale * tanh(q + k))`` over the features.

Everything else (masks, softmax, dropout, causal mask, outputs) is ``Attention``'s.
"""
from tapeflow.ops import array_ops, math_ops, reduction_ops

from ..serialization_lib import keras_export
from .attention import Attention, _check_shapes


@keras_export("keras.layers.AdditiveAttention")
class AdditiveAttention(Attention):
    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        _check_shapes(self, input_shape)
        dim = input_shape[0][-1]
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform", dtype=self.dtype)
        self.built = True

    def _calculate_scores(self, query, key):
        pairs = math_ops.tanh(math_ops.add(array_ops.expand_dims(query, -2), array_ops.expand_dims(key, -3)))
        if self.scale is not None:
            pairs = math_ops.multiply(self.scale, pairs)
        return reduction_ops.reduce_sum(pairs, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
