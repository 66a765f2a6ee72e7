"""CategoryEncoding: integer category indices to one-hot, multi-hot or count vectors (``num_tokens`` wide).

Indices outside ``[0, num_tokens)`` select no category and float indices are truncated to integers, as Keras 3
does. ``one_hot`` encodes each index (a trailing axis of size 1 is dropped first); ``multi_hot`` and ``count``
reduce over the last axis: the union, or the number of occurrences (weighted by ``count_weights``).
"""
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.ops import array_ops, math_ops, reduction_ops

from ..layer import Layer
from ..serialization_lib import keras_export

OUTPUT_MODES = ("one_hot", "multi_hot", "count")


def check_output_mode(output_mode, allowed=OUTPUT_MODES):
    if output_mode not in allowed:
        raise ValueError(f"Unknown arg for output_mode: {output_mode}. Expected one of {list(allowed)}.")


def encode_categories(indices, num_tokens, output_mode, dtype, count_weights=None):
    indices = convert_to_tensor(indices)
    if not (indices.dtype.is_integer or indices.dtype.is_floating):
        raise ValueError(f"CategoryEncoding expects integer (or float) category indices; received {indices.dtype.name}")
    indices = math_ops.cast(indices, "int64")
    if output_mode == "one_hot":
        if indices.shape.rank and indices.shape.rank > 1 and indices.shape[-1] == 1:
            indices = array_ops.squeeze(indices, [-1])
        return array_ops.one_hot(indices, num_tokens, dtype=dtype)
    if indices.shape.rank == 0:
        indices = array_ops.reshape(indices, [1])
    encoded = array_ops.one_hot(indices, num_tokens, dtype=dtype)
    if output_mode == "multi_hot":
        return reduction_ops.reduce_max(encoded, axis=-2)
    if count_weights is not None:
        weights = math_ops.cast(convert_to_tensor(count_weights), dtype)
        encoded = math_ops.multiply(encoded, array_ops.expand_dims(weights, -1))
    return reduction_ops.reduce_sum(encoded, axis=-2)


@keras_export("keras.layers.CategoryEncoding")
class CategoryEncoding(Layer):
    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if isinstance(num_tokens, bool) or int(num_tokens) != num_tokens or num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        output_mode = "multi_hot" if output_mode == "binary" else output_mode   # Keras 2's name, kept by Keras 3
        check_output_mode(output_mode)
        if sparse:
            raise ValueError("CategoryEncoding: sparse=True is not supported by tapeflow (tensors are dense).")
        self.num_tokens = int(num_tokens)
        self.output_mode = output_mode
        self.sparse = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(f"`count_weights` is not used when `output_mode` is not 'count'. Received "
                             f"output_mode={self.output_mode!r}.")
        return encode_categories(inputs, self.num_tokens, self.output_mode, self.compute_dtype, count_weights)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode == "one_hot":
            if len(shape) > 1 and shape[-1] == 1:
                shape = shape[:-1]
            return shape + (self.num_tokens,)
        return shape[:-1] + (self.num_tokens,)

    def get_config(self):
        config = super().get_config()
        config.update({"num_tokens": self.num_tokens, "output_mode": self.output_mode})
        return config
