"""IntegerLookup: integers to vocabulary indices (or encoded vectors), and back with ``invert``.

With several OOV indices, an out-of-vocabulary value ``v`` goes to OOV index ``v mod num_oov_indices``.
"""
import numbers

import numpy as np

from tapeflow.framework.tensor import Tensor

from ..serialization_lib import keras_export
from .index_lookup import IndexLookup


@keras_export("keras.layers.IntegerLookup")
class IntegerLookup(IndexLookup):
    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, name=None, **kwargs):
        if vocabulary_dtype not in ("int64", "int32"):
            raise ValueError(f"IntegerLookup: `vocabulary_dtype` must be 'int64' or 'int32'. Received: "
                             f"vocabulary_dtype={vocabulary_dtype!r}")
        for arg, value in (("mask_token", mask_token), ("oov_token", oov_token)):
            if value is not None and not _is_integer(value):
                raise ValueError(f"IntegerLookup: `{arg}` must be an integer or None. Received: {arg}={value!r}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=None if mask_token is None else int(mask_token),
                         oov_token=None if oov_token is None else int(oov_token), vocabulary_dtype=vocabulary_dtype,
                         vocabulary=vocabulary, idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name, **kwargs)

    def _term_key(self, value):
        if not _is_integer(value):
            raise ValueError(f"IntegerLookup expects integers; received {value!r} of type {type(value).__name__}.")
        return int(value)

    def _parse_vocabulary_line(self, line):
        try:
            return int(line.strip())
        except ValueError:
            raise ValueError(f"IntegerLookup: the vocabulary line {line[:50]!r} is not an integer.") from None

    def _oov_bucket(self, key, n_oov):
        return key % n_oov

    def _terms_array(self, terms, shape):
        return Tensor(np.asarray(terms, dtype=self.vocabulary_dtype).reshape(shape))

    def _terms_dtype(self):
        return self.vocabulary_dtype

    def get_config(self):
        config = super().get_config()
        config["vocabulary_dtype"] = self.vocabulary_dtype
        return config


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
