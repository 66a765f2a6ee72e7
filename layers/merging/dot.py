"""Dot: the batched dot product of two inputs along one axis of each."""
from tapeflow.keras_ops.nn import normalize
from tapeflow.ops import array_ops, math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


def _dot_axes(axes, rank_a, rank_b):
    pair = (axes, axes) if isinstance(axes, int) else tuple(axes)
    resolved = []
    for axis, rank in zip(pair, (rank_a, rank_b)):
        axis = axis % rank if -rank <= axis < rank else None
        if axis is None:
            raise ValueError(f"Dot: axes={axes} are out of range for inputs of ranks {rank_a} and {rank_b}.")
        if axis == 0:
            raise ValueError("Cannot perform batch_dot over axis 0 (the batch axis). If your inputs are not batched, "
                             "add a dummy batch dimension with keras.ops.expand_dims(x, 0).")
        resolved.append(axis)
    return tuple(resolved)


def batch_dot(a, b, axis_a, axis_b):
    """Contracts axis_a of ``a`` with axis_b of ``b`` row by row: (batch, A..., B...), at least (batch, 1)."""
    rank_a, rank_b = len(a.shape), len(b.shape)
    a = array_ops.transpose(a, [i for i in range(rank_a) if i != axis_a] + [axis_a])
    b = array_ops.transpose(b, [0, axis_b] + [i for i in range(1, rank_b) if i != axis_b])
    kept_a, kept_b = list(a.shape[1:-1]), list(b.shape[2:])
    n = a.shape[-1]
    a = array_ops.reshape(a, [-1, _product(kept_a), n])
    b = array_ops.reshape(b, [-1, n, _product(kept_b)])
    out = math_ops.matmul(a, b)
    return array_ops.reshape(out, [-1] + (kept_a + kept_b or [1]))


def _product(dims):
    total = 1
    for d in dims:
        total *= int(d)
    return total


@keras_export("keras.layers.Dot")
class Dot(Layer):
    """``Dot(axes)([a, b])``: per sample, the dot product of ``a`` and ``b`` along ``axes`` (an int or a pair);
    with ``normalize=True``, of their L2-normalised versions (the cosine similarity)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int) and not (isinstance(axes, (list, tuple)) and len(axes) == 2
                                              and all(isinstance(a, int) for a in axes)):
            raise TypeError(f"Invalid type/value for `axes`: expected an int or a list/tuple of 2 ints. "
                            f"Received: axes={axes}")
        self.axes = axes if isinstance(axes, int) else list(axes)
        self.normalize = bool(normalize)
        self.supports_masking = True

    def _pair(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2 or not all(
                isinstance(s, (list, tuple)) for s in input_shape):
            raise ValueError(f"A `Dot` layer should be called on a list of 2 inputs. Received: "
                             f"input_shape={input_shape}")
        shape_a, shape_b = (tuple(s) for s in input_shape)
        axis_a, axis_b = _dot_axes(self.axes, len(shape_a), len(shape_b))
        if shape_a[axis_a] is not None and shape_b[axis_b] is not None and shape_a[axis_a] != shape_b[axis_b]:
            raise ValueError(f"Incompatible input shapes: axis values {shape_a[axis_a]} (at axis {axis_a}) != "
                             f"{shape_b[axis_b]} (at axis {axis_b}). Full input shapes: {shape_a}, {shape_b}")
        return shape_a, shape_b, axis_a, axis_b

    def build(self, input_shape):
        self._pair(input_shape)
        self.built = True

    def call(self, inputs):
        a, b = inputs
        axis_a, axis_b = _dot_axes(self.axes, len(a.shape), len(b.shape))
        if self.normalize:
            a = normalize(a, axis=axis_a)
            b = normalize(b, axis=axis_b)
        return batch_dot(a, b, axis_a, axis_b)

    def compute_output_shape(self, input_shape):
        shape_a, shape_b, axis_a, axis_b = self._pair(input_shape)
        kept = [d for i, d in enumerate(shape_a) if i not in (0, axis_a)] + \
               [d for i, d in enumerate(shape_b) if i not in (0, axis_b)]
        return (shape_a[0],) + tuple(kept or [1])

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update({"axes": self.axes, "normalize": self.normalize})
        return config
