"""Concatenate: joins a list of inputs along one axis."""
from tapeflow.ops import array_ops, math_ops, reduction_ops

from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.Concatenate")
class Concatenate(Layer):
    """Concatenates a list of inputs along ``axis``; the other axes must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)
        self.supports_masking = True

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) < 1 or not isinstance(
                input_shape[0], (list, tuple)):
            raise ValueError(f"A `Concatenate` layer should be called on a list of at least 1 input. "
                             f"Received: input_shape={input_shape}")
        self._check(input_shape)
        self.built = True

    def _check(self, shapes):
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1:
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for the concat "
                             f"axis. Received: input_shape={[tuple(s) for s in shapes]}")
        rank = ranks.pop()
        axis = self.axis % rank
        for i in range(rank):
            if i == axis:
                continue
            dims = {s[i] for s in shapes if s[i] is not None}
            if len(dims) > 1 and i != 0:
                raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for the "
                                 f"concat axis. Received: input_shape={[tuple(s) for s in shapes]}")
        return axis

    def call(self, inputs):
        return array_ops.concat(list(inputs), axis=self.axis)

    def compute_mask(self, inputs, mask=None):
        """Keras 3's rule: each input's mask widened to the input's shape (all True where it has none),
        concatenated along ``axis``, then reduced with ``any`` over the last axis."""
        if mask is None or all(m is None for m in mask):
            return None
        if len(mask) != len(inputs):
            raise ValueError(f"`mask` should have the same length as `inputs` ({len(inputs)}). Received: "
                             f"mask={mask}")
        full = []
        for x, m in zip(inputs, mask):
            everywhere = array_ops.ones_like(x, dtype="bool")
            if m is None:
                full.append(everywhere)
                continue
            m = math_ops.cast(m, "bool") if m.dtype.name != "bool" else m
            for _ in range(len(x.shape) - len(m.shape)):
                m = array_ops.expand_dims(m, -1)
            full.append(math_ops.logical_and(m, everywhere))
        return reduction_ops.reduce_any(array_ops.concat(full, axis=self.axis), axis=-1)

    def compute_output_shape(self, input_shape):
        axis = self._check(input_shape)
        out = list(input_shape[0])
        sizes = [s[axis] for s in input_shape]
        out[axis] = None if any(d is None for d in sizes) else sum(sizes)
        return tuple(out)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config
