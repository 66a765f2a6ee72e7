"""Merge: the base of the elementwise merging layers (folds ``_merge`` over a list of inputs)."""
from ..layer import Layer


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

    def get_config(self):
        # Explicit, so that a merge layer loaded from a file (its dtype a DTypePolicy) can be saved again.
        return super().get_config()

    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def compute_output_shape(self, input_shape):
        return _broadcast_shapes(input_shape)
