"""Hashing: strings or integers to bins ``[0, num_bins)`` by a stable hash, as Keras 3's layer does.

A string's UTF-8 bytes are hashed with FarmHash's fingerprint64 or, given a ``salt``, with SipHash-2-4 keyed by
``(salt[0], salt[1])`` (a single integer salt is used twice); an integer is hashed as its decimal string. The
bin is ``hash % num_bins``; with a ``mask_value``, that value goes to bin 0 and the others to
``1 + hash % (num_bins - 1)``. Checked against the examples of Keras's documentation (Keras runs this layer with
TensorFlow only). Hashing runs on the host and is not differentiable.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor

from ..keras_tensor import KerasTensor
from ..layer import Layer
from ..serialization_lib import keras_export
from .category_encoding import check_output_mode, encode_categories
from .farmhash import fingerprint64
from .index_lookup import to_numpy
from .siphash import siphash24


def _key_bytes(value):
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value)).encode("ascii")
    raise ValueError(f"Hashing accepts strings or integers; received a value of type {type(value).__name__}.")


@keras_export("keras.layers.Hashing")
class Hashing(Layer):
    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(num_bins, bool) or not isinstance(num_bins, (int, np.integer)) or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        check_output_mode(output_mode, ("int", "one_hot", "multi_hot", "count"))
        if sparse:
            raise ValueError("Hashing: sparse=True is not supported by tapeflow (tensors are dense).")
        if salt is not None:
            key = [salt, salt] if isinstance(salt, (int, np.integer)) else list(salt)
            if len(key) != 2 or not all(isinstance(k, (int, np.integer)) and 0 <= k < 2 ** 64 for k in key):
                raise ValueError(f"`salt` can only be a single integer or a tuple/list of 2 unsigned 64-bit "
                                 f"integers. Received: salt={salt}.")
            self._key = tuple(int(k) for k in key)
        else:
            self._key = None
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = salt
        self.output_mode = output_mode
        self.sparse = False

    def _hash(self, value):
        data = _key_bytes(value)
        return fingerprint64(data) if self._key is None else siphash24(data, *self._key)

    def _bins(self, values):
        flat = values.reshape(-1)
        out = np.empty(flat.shape, dtype=np.int64)
        masked = self.mask_value is not None
        bins = self.num_bins - 1 if masked and self.num_bins > 1 else self.num_bins
        mask_key = None if not masked else _key_bytes(self.mask_value)
        for i, value in enumerate(flat):
            if masked and _key_bytes(value) == mask_key:
                out[i] = 0
            else:
                out[i] = self._hash(value) % bins + (1 if masked and self.num_bins > 1 else 0)
        return out.reshape(values.shape)

    def call(self, inputs):
        values = to_numpy(inputs)
        if values.dtype.kind == "f":
            raise ValueError(f"Hashing accepts strings or integers; received floats ({values.dtype}).")
        indices = Tensor(self._bins(values))
        if self.output_mode == "int":
            return indices
        return encode_categories(indices, self.num_bins, self.output_mode, self.compute_dtype)

    def compute_output_spec(self, inputs):
        shape = tuple(inputs.shape)
        if self.output_mode == "int":
            return KerasTensor(shape, dtype="int64")
        if self.output_mode == "one_hot":
            shape = (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (self.num_bins,)
        else:
            shape = shape[:-1] + (self.num_bins,)
        return KerasTensor(shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                       "output_mode": self.output_mode, "sparse": self.sparse})
        return config
