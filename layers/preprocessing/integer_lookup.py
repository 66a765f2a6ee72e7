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

    def _lookup(self, values):
        """Vectorised over integer arrays: a binary search in the sorted vocabulary."""
        if values.dtype.kind not in "iu":
            return super()._lookup(values)
        flat = values.reshape(-1).astype(np.int64)
        keys = np.array(sorted(self._index), dtype=np.int64)
        positions = np.minimum(np.searchsorted(keys, flat), max(len(keys) - 1, 0))
        found = (keys[positions] == flat) if len(keys) else np.zeros(flat.shape, bool)
        indices = np.array([self._index[k] for k in keys.tolist()], dtype=np.int64)
        if self.num_oov_indices == 0:
            missing = np.full(flat.shape, -1, dtype=np.int64)
        else:
            missing = self._oov_start() + np.mod(flat, self.num_oov_indices)
        if self.mask_token is not None:
            missing = np.where(flat == self.mask_token, 0 if self._mask_has_index() else -1, missing)
        out = np.where(found, indices[positions] if len(keys) else 0, missing)
        return out.reshape(values.shape)

    def _count_batch(self, batch, counts, document_counts):
        """Vectorised over integer arrays: np.unique per batch (and per document for tf_idf)."""
        batch = np.asarray(batch)
        if batch.dtype.kind not in "iu":
            return super()._count_batch(batch, counts, document_counts)
        rows = batch.reshape(-1, 1) if batch.ndim <= 1 else batch.reshape(batch.shape[0], -1)
        rows = rows.astype(np.int64)
        keep = np.ones(rows.shape, bool)
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                keep &= rows != special
        values, found = np.unique(rows[keep], return_counts=True)
        for value, count in zip(values.tolist(), found.tolist()):
            counts[value] = counts.get(value, 0) + count
        if self.output_mode == "tf_idf":
            for row, row_keep in zip(rows, keep):
                for value in np.unique(row[row_keep]).tolist():
                    document_counts[value] = document_counts.get(value, 0) + 1
        return rows.shape[0]

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
