"""Discretization: the bin of each value between ``bin_boundaries`` (as an int, or encoded like CategoryEncoding).

Value ``x`` falls in bin ``i`` when ``bin_boundaries[i-1] <= x < bin_boundaries[i]``: below the first boundary
is bin 0, at or above the last is bin ``len(bin_boundaries)``, and NaN goes to that last bin, as in Keras 3.
``adapt`` learns the boundaries from ``num_bins`` with Keras's quantile sketch (``quantile_sketch``).
"""
import numpy as np

from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.ops import array_ops, math_ops, reduction_ops

from ..layer import Layer
from ..serialization_lib import keras_export
from . import quantile_sketch
from .category_encoding import check_output_mode, encode_categories
from .index_lookup import iterate_batches


@keras_export("keras.layers.Discretization")
class Discretization(Layer):
    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False,
                 dtype=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. Received: `num_bins="
                             f"{num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        check_output_mode(output_mode, ("int", "one_hot", "multi_hot", "count"))
        if sparse:
            raise ValueError("Discretization: sparse=True is not supported by tapeflow (tensors are dense).")
        boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        if boundaries is not None and any(b > c for b, c in zip(boundaries, boundaries[1:])):
            raise ValueError(f"`bin_boundaries` must be sorted in increasing order. Received: {bin_boundaries}")
        self.bin_boundaries = boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = False
        self.summary = quantile_sketch.empty_summary()

    def adapt(self, data, steps=None):
        """Learns ``num_bins`` quantile boundaries from ``data`` (array, Tensor or Dataset of batches) with Keras
        3's sketch (see ``quantile_sketch``); ``epsilon`` sets its resolution."""
        if self.num_bins is None:
            if self.bin_boundaries is not None:
                raise ValueError("Cannot adapt a Discretization layer that has been initialized with "
                                 "`bin_boundaries`, use `num_bins` instead.")
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        summary = quantile_sketch.empty_summary()
        for batch in iterate_batches(data, steps=steps):
            batch = np.asarray(batch)
            if not (np.issubdtype(batch.dtype, np.number) or batch.dtype == np.bool_):
                raise TypeError(f"Discretization.adapt needs numeric data; received an array of dtype {batch.dtype}.")
            summary = quantile_sketch.merge(summary, quantile_sketch.summarize(batch, self.epsilon), self.epsilon)
        self.summary = summary
        self.bin_boundaries = quantile_sketch.bin_boundaries(summary, self.num_bins)

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        x = convert_to_tensor(inputs)
        dtype = x.dtype.name if x.dtype.is_floating else "float64"
        x = math_ops.cast(x, dtype)
        boundaries = np.asarray(self.bin_boundaries, dtype=dtype)
        # bin = number of boundaries <= x, counted as len - #(x < boundary) so that NaN lands in the last bin
        below = math_ops.cast(math_ops.less(array_ops.expand_dims(x, -1), boundaries), "int32")
        bins = math_ops.subtract(np.int32(len(boundaries)), reduction_ops.reduce_sum(below, axis=-1))
        if self.output_mode == "int":
            return bins
        return encode_categories(bins, len(boundaries) + 1, self.output_mode, self.compute_dtype)

    def compute_output_spec(self, inputs):
        from ..keras_tensor import KerasTensor
        shape = tuple(inputs.shape)
        if self.output_mode == "int":
            return KerasTensor(shape, dtype="int32")
        depth = (len(self.bin_boundaries) if self.bin_boundaries is not None else 0) + 1
        if self.output_mode == "one_hot":
            shape = (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
        else:
            shape = shape[:-1] + (depth,)
        return KerasTensor(shape, dtype=self.compute_dtype)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self.dtype_policy.name if hasattr(self.dtype_policy, "name") else self.dtype}
