"""Normalization: ``(x - mean) / sqrt(variance)`` per feature, with statistics given or learnt by ``adapt``.

``axis`` names the axes kept (one statistic per index along them); every other
axis is reduced over. ``adapt`` accepts an array (or Tensor) of samples or a
``tf.data.Dataset`` of batches, merges the per-batch statistics exactly (the
pairwise mean/variance update) in float64, and writes them to the ``mean`` and
``variance`` variables with ``assign``. The weights are Keras's: ``mean``,
``variance`` and an int32 ``count`` that Keras keeps at 0.
"""
import numpy as np

from tapeflow.data.dataset import Dataset
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, math_ops

from .. import backend
from ..layer import Layer
from ..serialization_lib import keras_export


def _axis_tuple(axis):
    if axis is None:
        return ()
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _plain(value):
    """A JSON-able form of a given mean/variance (lists stay lists, arrays become lists)."""
    if value is None or isinstance(value, (int, float, list)):
        return value
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array.tolist()


def _statistics(batch, reduce_axes):
    """(mean, population variance, number of values reduced per statistic) of one batch, in float64."""
    batch = np.asarray(batch, dtype=np.float64)
    count = int(np.prod([batch.shape[a] for a in reduce_axes], dtype=np.int64)) if reduce_axes else 1
    if count == 0 or batch.size == 0:
        return None, None, 0
    return batch.mean(axis=reduce_axes), batch.var(axis=reduce_axes), count


@keras_export("keras.layers.Normalization")
class Normalization(Layer):
    """Shifts and scales inputs to zero mean and unit variance along ``axis`` (or back, with ``invert``)."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = _axis_tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. Received: "
                             f"mean={mean} and variance={variance}")
        self.input_mean = mean
        self.input_variance = variance
        self.invert = bool(invert)
        self.supports_masking = True

    def build(self, input_shape):
        ndim = len(input_shape)
        self._built_shape = tuple(input_shape)
        if any(not -ndim <= a < ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                             f"ndim={ndim}, while axis={self.axis}")
        self._keep_axes = sorted({a % ndim for a in self.axis})
        self._reduce_axes = tuple(d for d in range(ndim) if d not in self._keep_axes)
        for d in self._keep_axes:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received axis={self.axis}, "
                                 f"inputs.shape={tuple(input_shape)}, with unknown axis at index {d}")
        self._kept_shape = tuple(int(input_shape[d]) for d in self._keep_axes)
        self._broadcast_shape = [int(input_shape[d]) if d in self._keep_axes else 1 for d in range(ndim)]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._kept_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._kept_shape, initializer="ones",
                                                  trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int32", initializer="zeros",
                                         trainable=False)
        else:
            try:
                self._given = tuple(np.broadcast_to(np.asarray(v, dtype=np.float64), self._kept_shape)
                                    for v in (self.input_mean, self.input_variance))
            except ValueError as e:
                raise ValueError(f"Normalization: `mean` and `variance` must broadcast to the shape of the kept "
                                 f"axes {self._kept_shape} (axis={self.axis}); received mean={self.input_mean}, "
                                 f"variance={self.input_variance}") from e
        self.built = True

    # -- statistics ---------------------------------------------------------------------
    def adapt(self, data):
        """Computes the mean and variance of ``data`` (array, Tensor or Dataset of batches) along ``axis``."""
        if self.input_mean is not None:
            raise ValueError("Normalization.adapt: this layer was given `mean` and `variance`; there is nothing "
                             "to adapt.")
        batches, shape = self._adapt_batches(data)
        if not self.built:
            self.build(shape)
        elif len(shape) != len(self._broadcast_shape) or any(
                shape[d] != self._broadcast_shape[d] for d in self._keep_axes):
            raise ValueError(f"The layer was built with input_shape={self._built_shape}, but adapt() "
                             f"is being called with data with an incompatible shape, data.shape={tuple(shape)}")
        total_mean = total_variance = None
        total_count = 0
        for batch in batches:
            mean, variance, count = _statistics(batch, self._reduce_axes)
            if count == 0:
                continue
            if total_mean is None:
                total_mean, total_variance, total_count = mean, variance, count
                continue
            total_count += count
            weight = count / total_count
            merged = total_mean * (1.0 - weight) + mean * weight
            total_variance = ((total_variance + (total_mean - merged) ** 2) * (1.0 - weight)
                              + (variance + (mean - merged) ** 2) * weight)
            total_mean = merged
        if total_mean is None:
            raise ValueError("Normalization.adapt received no data (an empty array or dataset).")
        dtype = self.adapt_mean.dtype.name
        self.adapt_mean.assign(np.asarray(total_mean, dtype=dtype).reshape(self._kept_shape))
        self.adapt_variance.assign(np.asarray(total_variance, dtype=dtype).reshape(self._kept_shape))

    def _adapt_batches(self, data):
        """(iterable of numpy batches, the shape of one batch)."""
        if isinstance(data, Dataset):
            spec = data.element_spec
            if isinstance(spec, (tuple, list, dict)):
                raise ValueError("Normalization.adapt expects a dataset of feature batches; this one yields "
                                 f"structures ({type(spec).__name__}). Map it to the features first, e.g. "
                                 "`dataset.map(lambda x, y: x)`.")
            if len(spec.shape) == 1:  # as Keras: rank-1 elements are samples, batched by 128
                data = data.batch(128)
                spec = data.element_spec
            return (np.asarray(batch) for batch in data), tuple(spec.shape)
        if isinstance(data, (Tensor, np.ndarray, list, tuple)) or np.isscalar(data):
            array = np.asarray(data)
            if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
                raise TypeError(f"Normalization.adapt needs numeric data; received an array of dtype {array.dtype}.")
            return [array], array.shape
        raise TypeError(f"Normalization.adapt accepts a numpy array, a Tensor or a tf.data.Dataset; received "
                        f"{type(data).__name__}.")

    # -- statistics as Keras exposes them ------------------------------------------------------------------------
    @property
    def mean(self):
        """The mean as a tensor of the broadcast shape (``(1, features)`` for ``axis=-1``); None until built."""
        return self._statistic(0)

    @property
    def variance(self):
        """The variance as a tensor of the broadcast shape; None until built."""
        return self._statistic(1)

    def _statistic(self, index):
        if not self.built:
            return None
        return convert_to_tensor(self._mean_and_variance(self.compute_dtype)[index])

    # -- call ---------------------------------------------------------------------------
    def _mean_and_variance(self, dtype):
        if self.input_mean is not None:
            mean, variance = (np.asarray(v, dtype=dtype).reshape(self._broadcast_shape) for v in self._given)
            return mean, variance
        mean = math_ops.cast(array_ops.reshape(self.adapt_mean, self._broadcast_shape), dtype)
        variance = math_ops.cast(array_ops.reshape(self.adapt_variance, self._broadcast_shape), dtype)
        return mean, variance

    def call(self, inputs):
        dtype = self.compute_dtype
        inputs = math_ops.cast(inputs, dtype)
        mean, variance = self._mean_and_variance(dtype)
        std = math_ops.maximum(math_ops.sqrt(variance), np.asarray(backend.epsilon(), dtype=dtype))
        if self.invert:
            return math_ops.add(mean, math_ops.multiply(inputs, std))
        return math_ops.divide(math_ops.subtract(inputs, mean), std)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"axis": self.axis, "invert": self.invert, "mean": _plain(self.input_mean),
                       "variance": _plain(self.input_variance)})
        return config
