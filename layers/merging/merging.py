"""Merging layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate."""
from tapeflow.ops import array_ops, math_ops

from ..layer import Layer
from ..serialization_lib import keras_export


def _broadcast_shapes(shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        known = [d for d in dims if d is not None and d != 1]
        if len(set(known)) > 1:
            raise ValueError(f"Inputs have incompatible shapes. Received shapes {[tuple(s) for s in shapes]}")
        out.append(known[0] if known else (None if None in dims else 1))
    return tuple(out)


class Merge(Layer):
    """Base of the elementwise merges: ``call`` folds ``_merge`` over a list of inputs."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not input_shape or not isinstance(input_shape[0],
                                                                                            (list, tuple)):
            raise ValueError(f"A merge layer should be called on a list of inputs. Received: "
                             f"input_shape={input_shape} (not a list of shapes)")
        if len(input_shape) < 1:
            raise ValueError(f"A merge layer should be called on a list of at least 1 input. Got "
                             f"{len(input_shape)} inputs.")
        _broadcast_shapes(input_shape)
        self.built = True

    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def compute_output_shape(self, input_shape):
        return _broadcast_shapes(input_shape)


@keras_export("keras.layers.Add")
class Add(Merge):
    def _merge(self, a, b):
        return math_ops.add(a, b)


@keras_export("keras.layers.Subtract")
class Subtract(Merge):
    def build(self, input_shape):
        if len(input_shape) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: "
                             f"input_shape={input_shape}")
        super().build(input_shape)

    def _merge(self, a, b):
        return math_ops.subtract(a, b)


@keras_export("keras.layers.Multiply")
class Multiply(Merge):
    def _merge(self, a, b):
        return math_ops.multiply(a, b)


@keras_export("keras.layers.Maximum")
class Maximum(Merge):
    def _merge(self, a, b):
        return math_ops.maximum(a, b)


@keras_export("keras.layers.Minimum")
class Minimum(Merge):
    def _merge(self, a, b):
        return math_ops.minimum(a, b)


@keras_export("keras.layers.Average")
class Average(Merge):
    def call(self, inputs):
        return math_ops.divide(super().call(inputs), float(len(inputs)))

    def _merge(self, a, b):
        return math_ops.add(a, b)


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
