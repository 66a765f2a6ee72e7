"""MultiHeadAttention, as in "Attention is all you need" and Keras 3.

The query, key and value are projected per head by EinsumDense layers
(``query``, ``key``, ``value``: kernels of shape ``(features, num_heads,
key_dim or value_dim)``), the scaled query dotted with the key over the
``attention_axes`` gives the scores, a softmax that honours the attention mask
turns them into weights (then dropout), the weights combine the projected
values, and ``attention_output`` projects the heads back to the output shape.
With ``use_gate`` a ``gate`` projection of the query, through a sigmoid,
multiplies the combined values before the output projection.
"""
import math
import string

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops.common import to_tensor

import numpy as np

from .. import constraints, initializers, regularizers
from ..activations.softmax_layer import Softmax
from ..core.einsum_dense import EinsumDense
from ..keras_tensor import KerasTensor
from ..layer import Layer, deserialize_nested_objects
from ..regularization.dropout import Dropout
from ..serialization_lib import keras_export, serialize_keras_object

_LETTERS = string.ascii_lowercase


def projection_equation(free_dims, bound_dims, output_dims):
    """(equation, bias_axes, output rank) of a projection: free axes pass through, bound axes are contracted
    with the kernel, output axes come from the kernel."""
    free = _LETTERS[:free_dims]
    bound = _LETTERS[free_dims:free_dims + bound_dims]
    out = _LETTERS[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}", out, free_dims + output_dims


def attention_equations(rank, attention_axes):
    """(scores equation, combine equation, scores rank) for projected tensors of ``rank`` axes
    (batch..., attention axes..., heads, head size)."""
    target = _LETTERS[:rank]
    batch_axes = [i for i in range(rank - 1) if i not in attention_axes]
    source, fresh = "", rank
    for i in range(rank):
        if i in batch_axes or i == rank - 1:
            source += target[i]
        else:
            source += _LETTERS[fresh]
            fresh += 1
    product = ("".join(target[i] for i in batch_axes) + "".join(target[i] for i in attention_axes)
               + "".join(source[i] for i in attention_axes))
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)


def _static_shape(x):
    return tuple(x.shape) if isinstance(x, KerasTensor) else tuple(np.shape(host_array(x)))


def _clone(initializer):
    if not hasattr(initializer, "get_config"):
        return initializer   # a plain function holds no seed state to repeat
    return initializer.__class__.from_config(initializer.get_config())


def _as_bool(mask):
    mask = to_tensor(mask)
    return mask if mask.dtype.name == "bool" else math_ops.cast(mask, "bool")


@keras_export("keras.layers.MultiHeadAttention")
class MultiHeadAttention(Layer):
    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        for name, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"MultiHeadAttention: `{name}` must be a positive integer. Received: {name}={value}")
        if value_dim is not None and (not isinstance(value_dim, int) or value_dim <= 0):
            raise ValueError(f"MultiHeadAttention: `value_dim` must be a positive integer or None. Received: "
                             f"value_dim={value_dim}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"Invalid value for argument `dropout`. Expected a float value between 0 and 1. "
                             f"Received: dropout={dropout}")
        if sliding_window is not None and (not isinstance(sliding_window, int) or sliding_window <= 0):
            raise ValueError(f"MultiHeadAttention: `sliding_window` must be a positive integer or None. Received: "
                             f"sliding_window={sliding_window}")
        self.supports_masking = True
        self._num_heads = num_heads
        self._key_dim = key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout = float(dropout)
        self._use_bias = bool(use_bias)
        if output_shape is not None and not isinstance(output_shape, int):
            output_shape = tuple(output_shape)
        self._output_shape = output_shape
        self._sliding_window = sliding_window
        self._flash_attention = flash_attention
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        self._use_gate = bool(use_gate)
        self.seed = seed
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes is not None:
            attention_axes = tuple(int(a) for a in attention_axes)
        self._attention_axes = attention_axes
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(key_dim))

    # Keras's public names of the projections (also their paths in a weights file).
    @property
    def num_heads(self):
        return self._num_heads

    @property
    def key_dim(self):
        return self._key_dim

    @property
    def value_dim(self):
        return self._value_dim

    @property
    def dropout(self):
        return self._dropout

    @property
    def use_bias(self):
        return self._use_bias

    @property
    def attention_axes(self):
        return self._attention_axes

    @property
    def query_dense(self):
        return self.__dict__.get("_query_dense")

    @property
    def key_dense(self):
        return self.__dict__.get("_key_dense")

    @property
    def value_dense(self):
        return self.__dict__.get("_value_dense")

    @property
    def output_dense(self):
        return self.__dict__.get("_output_dense")

    # -- build ------------------------------------------------------------------------------
    def _dense_arguments(self):
        # Each projection gets its own copy of the initializers, so seeded ones do not repeat one draw.
        return dict(kernel_initializer=_clone(self._kernel_initializer),
                    bias_initializer=_clone(self._bias_initializer),
                    kernel_regularizer=self._kernel_regularizer, bias_regularizer=self._bias_regularizer,
                    kernel_constraint=self._kernel_constraint, bias_constraint=self._bias_constraint,
                    dtype=self.dtype_policy)

    def _projection(self, name, input_shape, head_size, activation=None):
        equation, bias_axes, output_rank = projection_equation(len(input_shape) - 1, 1, 2)
        output_shape = (None,) * (output_rank - 3) + (self._num_heads, head_size)
        dense = EinsumDense(equation, output_shape=output_shape, bias_axes=bias_axes if self._use_bias else None,
                            activation=activation, name=name, **self._dense_arguments())
        dense.build(tuple(input_shape))
        return dense

    def build(self, query_shape, value_shape, key_shape=None):
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if query_shape[-1] is None or value_shape[-1] is None or key_shape[-1] is None:
            raise ValueError(f"MultiHeadAttention: the last axis of the query, value and key must be known. "
                             f"Received: query_shape={query_shape}, value_shape={value_shape}, key_shape={key_shape}")
        self._query_dense = self._projection("query", query_shape, self._key_dim)
        self._key_dense = self._projection("key", key_shape, self._key_dim)
        if self._use_gate:
            self._gate_dense = self._projection("gate", query_shape, self._value_dim, activation="sigmoid")
        self._value_dense = self._projection("value", value_shape, self._value_dim)
        self._build_attention(len(query_shape) + 1)
        self._output_dense = self._make_output_dense(query_shape)
        self.built = True

    def _build_attention(self, rank):
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        axes = tuple(a + rank - 1 if a < 0 else a for a in self._attention_axes)
        if any(not 0 < a < rank - 2 for a in axes):
            raise ValueError(f"MultiHeadAttention: attention_axes {self._attention_axes} must be axes of the query "
                             f"other than the batch and feature axes (query rank {rank - 1}).")
        self._attention_axes = axes
        self._dot_product_equation, self._combine_equation, scores_rank = attention_equations(rank, axes)
        norm_axes = tuple(range(scores_rank - len(axes), scores_rank))
        self._softmax = Softmax(axis=norm_axes, dtype=self.dtype_policy)
        self._dropout_layer = Dropout(rate=self._dropout, seed=self.seed, dtype=self.dtype_policy)

    def _make_output_dense(self, query_shape):
        if self._output_shape is None:
            output_shape = (query_shape[-1],)
        elif isinstance(self._output_shape, int):
            output_shape = (self._output_shape,)
        else:
            output_shape = tuple(self._output_shape)
        equation, bias_axes, output_rank = projection_equation(len(query_shape) - 1, 2, len(output_shape))
        dense = EinsumDense(equation, output_shape=(None,) * (output_rank - 1 - len(output_shape)) + output_shape,
                            bias_axes=bias_axes if self._use_bias else None, name="attention_output",
                            **self._dense_arguments())
        dense.build(tuple(query_shape[:-1]) + (self._num_heads, self._value_dim))
        return dense

    def __call__(self, query, *args, **kwargs):
        # The base class builds from the first input only; attention builds from the query, value and key shapes.
        # Value and key stay where the caller put them (positional or keyword), as a functional node records them.
        args = [a if isinstance(a, KerasTensor) or a is None else self._convert_inputs(a) for a in args]
        for name in ("value", "key"):
            if kwargs.get(name) is not None and not isinstance(kwargs[name], KerasTensor):
                kwargs[name] = self._convert_inputs(kwargs[name])
        value = args[0] if args else kwargs.get("value")
        key = args[1] if len(args) > 1 else kwargs.get("key")
        if value is None:
            raise TypeError(f"MultiHeadAttention layer '{self.name}' needs a `value` tensor: call it as "
                            "`layer(query, value)` or `layer(query, value, key)`.")
        if not self.built:
            shapes = {"query_shape": _static_shape(query), "value_shape": _static_shape(value)}
            if key is not None:
                shapes["key_shape"] = _static_shape(key)
            self.build(**shapes)
        return super().__call__(query, *args, **kwargs)

    # -- call -------------------------------------------------------------------------------
    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        if key is None:
            key = value
        query_mask = getattr(query, "_keras_mask", None) if query_mask is None else query_mask
        value_mask = getattr(value, "_keras_mask", None) if value_mask is None else value_mask
        key_mask = getattr(key, "_keras_mask", None) if key_mask is None else key_mask
        attention_mask = self._compute_attention_mask(query, value, query_mask, value_mask, key_mask,
                                                      attention_mask, use_causal_mask)
        gate = self._gate_dense(query) if self._use_gate else None
        query = self._query_dense(query)
        key = self._key_dense(key)
        value = self._value_dense(value)
        output, scores = self._compute_attention(query, key, value, attention_mask, training)
        if gate is not None:
            output = math_ops.multiply(output, gate)
        output = self._output_dense(output)
        if return_attention_scores:
            return output, scores
        return output

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        query = math_ops.multiply(query, math_ops.cast(self._inverse_sqrt_key_dim, query.dtype))
        scores = math_ops.einsum(self._dot_product_equation, key, query)
        scores = self._masked_softmax(scores, attention_mask)
        weights = self._dropout_layer(scores, training=training) if self._dropout > 0 else scores
        return math_ops.einsum(self._combine_equation, weights, value), scores

    def _masked_softmax(self, scores, attention_mask=None):
        if attention_mask is not None:
            # The mask is (batch..., query positions, key positions): a heads axis goes in front of them.
            axis = -len(self._attention_axes) * 2 - 1
            for _ in range(len(scores.shape) - len(attention_mask.shape)):
                attention_mask = array_ops.expand_dims(attention_mask, axis=axis)
        return self._softmax(scores, mask=attention_mask)

    def _compute_attention_mask(self, query, value, query_mask=None, value_mask=None, key_mask=None,
                                attention_mask=None, use_causal_mask=False):
        auto_mask = None

        def combine(mask):
            return mask if auto_mask is None else math_ops.logical_and(auto_mask, mask)

        if query_mask is not None:
            auto_mask = combine(array_ops.expand_dims(_as_bool(query_mask), -1))   # (B, T, 1)
        if value_mask is not None:
            auto_mask = combine(array_ops.expand_dims(_as_bool(value_mask), -2))   # (B, 1, S)
        if key_mask is not None:
            auto_mask = combine(array_ops.expand_dims(_as_bool(key_mask), -2))
        if (use_causal_mask or self._sliding_window is not None) and len(self._attention_axes) != 1:
            raise ValueError(f"MultiHeadAttention layer '{self.name}': `use_causal_mask` and `sliding_window` order "
                             f"the positions of one attention axis, but attention_axes={self._attention_axes}.")
        query_length, value_length = _static_shape(query)[1], _static_shape(value)[1]
        if use_causal_mask:
            auto_mask = combine(Tensor(causal_mask(query_length, value_length)))
        if self._sliding_window is not None:
            auto_mask = combine(Tensor(band_mask(query_length, value_length, self._sliding_window)))
        if auto_mask is not None:
            attention_mask = auto_mask if attention_mask is None else math_ops.logical_and(
                _as_bool(attention_mask), auto_mask)
        elif attention_mask is not None:
            attention_mask = _as_bool(attention_mask)
        return attention_mask

    def compute_mask(self, query, value=None, key=None, query_mask=None, **kwargs):
        return getattr(query, "_keras_mask", None) if query_mask is None else query_mask

    # -- shapes and config -------------------------------------------------------------------
    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if self._output_shape is None:
            return query_shape
        tail = (self._output_shape,) if isinstance(self._output_shape, int) else tuple(self._output_shape)
        return query_shape[:-1] + tail

    def compute_output_spec(self, query, value, key=None, return_attention_scores=False, **kwargs):
        output = KerasTensor(self.compute_output_shape(query.shape), dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        # Scores are (batch axes and heads, query attention axes, key attention axes) of the projections.
        projected_query = tuple(query.shape[:-1]) + (self._num_heads, self._key_dim)
        projected_key = tuple((key if key is not None else value).shape[:-1]) + (self._num_heads, self._key_dim)
        axes = self._attention_axes
        batch_axes = [i for i in range(len(projected_query) - 1) if i not in axes]
        scores_shape = (tuple(projected_query[i] for i in batch_axes) + tuple(projected_query[a] for a in axes)
                        + tuple(projected_key[a] for a in axes))
        return output, KerasTensor(scores_shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "num_heads": self._num_heads,
            "key_dim": self._key_dim,
            "value_dim": self._value_dim,
            "dropout": self._dropout,
            "use_bias": self._use_bias,
            "use_gate": self._use_gate,
            "output_shape": (list(self._output_shape) if isinstance(self._output_shape, tuple)
                             else self._output_shape),
            "attention_axes": None if self._attention_axes is None else list(self._attention_axes),
            "sliding_window": self._sliding_window,
            "kernel_initializer": s(self._kernel_initializer),
            "bias_initializer": s(self._bias_initializer),
            "kernel_regularizer": s(self._kernel_regularizer),
            "bias_regularizer": s(self._bias_regularizer),
            "activity_regularizer": s(self.activity_regularizer),
            "kernel_constraint": s(self._kernel_constraint),
            "bias_constraint": s(self._bias_constraint),
            "seed": self.seed,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))


def causal_mask(query_length, value_length):
    """(1, T, S) bool: query position i sees key positions j <= i."""
    rows = np.arange(query_length)[:, None]
    cols = np.arange(value_length)[None, :]
    return (rows >= cols)[None]


def band_mask(query_length, value_length, window):
    """(1, T, S) bool: query position i sees key positions j with |i - j| < window."""
    rows = np.arange(query_length)[:, None]
    cols = np.arange(value_length)[None, :]
    return (np.abs(rows - cols) < window)[None]
