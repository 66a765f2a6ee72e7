"""StringLookup: strings to vocabulary indices (or encoded vectors), and back with ``invert``.

With several OOV indices, an out-of-vocabulary string ``s`` goes to OOV index
``fingerprint64(utf-8 bytes of s) mod num_oov_indices``, as TensorFlow buckets strings.
"""
import numpy as np

from tapeflow.framework.tensor import Tensor

from ..serialization_lib import keras_export
from .farmhash import fingerprint64
from .index_lookup import IndexLookup


def as_text(value, what="input"):
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    if isinstance(value, str):
        return str(value)
    raise ValueError(f"StringLookup expects strings; received the {what} {value!r} of type {type(value).__name__}.")


@keras_export("keras.layers.StringLookup")
class StringLookup(IndexLookup):
    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, **kwargs):
        if encoding != "utf-8":
            raise ValueError(f"StringLookup: only encoding='utf-8' is supported. Received: encoding={encoding!r}")
        self.encoding = encoding
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary_dtype="string", vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name, **kwargs)

    def _term_key(self, value):
        return as_text(value)

    def _term_keys(self, values):
        return [v if type(v) is str else as_text(v) for v in values]

    def _oov_bucket(self, key, n_oov):
        return fingerprint64(key.encode("utf-8")) % n_oov

    def _parse_vocabulary_line(self, line):
        return line

    def _terms_array(self, terms, shape):
        out = np.empty(len(terms), dtype=object)
        out[:] = [t.encode("utf-8") for t in terms]
        return Tensor(out.reshape(shape))

    def _terms_dtype(self):
        return "string"

    def get_config(self):
        config = super().get_config()
        config["encoding"] = self.encoding
        return config
