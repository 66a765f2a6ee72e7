"""Merge: the base of the elementwise merging layers (folds ``_merge`` over a list of inputs).

Masks, as Keras 3 (since keras-team/keras#19685) treats them: the output mask is
the logical OR of the input masks (None when any input has none). Add,
Subtract and Average ignore masks in their values; Multiply, Maximum and
Minimum set ``_mask_fill`` so that masked entries take a neutral value (1,
-inf, +inf) and do not decide the result, and an entry masked in every input
becomes ``_all_masked_value`` (0 for Multiply, the first input for Maximum and
Minimum).
"""
import numpy as np

from tapeflow.ops import array_ops, math_ops

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

    _mask_fill = None   # the value a masked entry takes; None: masks do not change the values

    def call(self, inputs, mask=None):
        if self._mask_fill is not None and mask is not None:
            _check_masks(inputs, mask)
            if any(m is not None for m in mask):
                return self._masked_call(inputs, mask)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def _masked_call(self, inputs, masks):
        keeps = [None if m is None else _mask_like(m, x) for x, m in zip(inputs, masks)]
        filled = [x if keep is None else array_ops.where(keep, x, _fill_value(self._mask_fill, x))
                  for x, keep in zip(inputs, keeps)]
        out = filled[0]
        for x in filled[1:]:
            out = self._merge(out, x)
        if any(keep is None for keep in keeps):
            return out
        any_valid = keeps[0]
        for keep in keeps[1:]:
            any_valid = math_ops.logical_or(any_valid, keep)
        return array_ops.where(any_valid, out, self._all_masked_value(inputs, out))

    def _all_masked_value(self, inputs, out):
        return inputs[0]

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        _check_masks(inputs, mask)
        if any(m is None for m in mask):
            return None
        out = mask[0]
        for m in mask[1:]:
            out = math_ops.logical_or(out, m)
        return out

    def compute_output_shape(self, input_shape):
        return _broadcast_shapes(input_shape)


def _check_masks(inputs, masks):
    if not isinstance(masks, (list, tuple)) or len(masks) != len(inputs):
        raise ValueError(f"A merge layer's `mask` should be a list with one entry per input "
                         f"({len(inputs)} inputs). Received: mask={masks}")


def _mask_like(mask, x):
    """``mask`` (boolean) with trailing axes of size 1 added until it has the rank of ``x``."""
    mask = math_ops.cast(mask, "bool") if mask.dtype.name != "bool" else mask
    for _ in range(len(x.shape) - len(mask.shape)):
        mask = array_ops.expand_dims(mask, -1)
    return mask


def _fill_value(fill, x):
    """``fill`` in the dtype of ``x``; an infinity becomes the integer extreme for integer inputs."""
    dtype = np.dtype(x.dtype.name)
    if dtype.kind in "iu" and np.isinf(fill):
        info = np.iinfo(dtype)
        fill = info.max if fill > 0 else info.min
    return np.asarray(fill, dtype=dtype)
