"""TextVectorization: strings -> standardized -> split into tokens -> n-grams -> vocabulary indices or vectors.

Standardize: ``lower_and_strip_punctuation`` (the default), ``lower``,
``strip_punctuation``, None, or a callable; as in Keras, ``lower``
changes the ASCII letters only ("CAFÉ" becomes "cafÉ"). Split: ``whitespace``
(runs of ASCII whitespace), ``character`` (Unicode code points), None (each
input string is one token; rank-2 inputs are rows of tokens already), or a
callable. As in Keras, callables get the whole batch as a string tensor (so
``tf.strings`` functions work): standardize returns strings of the same shape,
split one row of tokens per string (a RaggedTensor). ``ngrams=n`` adds the 2- to
n-grams of each row after its tokens (all 2-grams, then all 3-grams, ...),
joined by a space; a tuple lists the widths. The vocabulary is a
``StringLookup`` with the mask token ``""`` (index 0 in ``int`` mode, the
padding of short rows) and one OOV index.
"""
import re

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ragged.ragged_tensor import RaggedTensor

from ..keras_tensor import KerasTensor
from ..layer import Layer
from ..serialization_lib import keras_export
from .index_lookup import iterate_batches, legacy_output_mode, to_numpy
from .string_lookup import StringLookup, as_text

STANDARDIZE_MODES = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
SPLIT_MODES = ("whitespace", "character")
OUTPUT_MODES = ("int", "multi_hot", "count", "tf_idf")
PUNCTUATION = re.compile(r'[!"#$%&()\*\+,\-\./:;<=>?@\[\\\]^_`{|}~\']')
WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")   # Keras lowercases A-Z only


def _ngram_widths(ngrams):
    if ngrams is None:
        return None
    if isinstance(ngrams, int) and not isinstance(ngrams, bool) and ngrams >= 1:
        return tuple(range(1, ngrams + 1))
    if isinstance(ngrams, (list, tuple)) and ngrams and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in ngrams):
        return tuple(ngrams)
    raise ValueError(f"`ngrams` must be None, an integer value, or a tuple of integer values. Received: "
                     f"ngrams={ngrams}")


@keras_export("keras.layers.TextVectorization")
class TextVectorization(Layer):
    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, **kwargs):
        kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, **kwargs)
        if not (standardize is None or standardize in STANDARDIZE_MODES or callable(standardize)):
            raise ValueError(f"Invalid value for argument `standardize`. Expected one of {list(STANDARDIZE_MODES)}, "
                             f"None or a callable. Received: standardize={standardize}")
        if not (split is None or split in SPLIT_MODES or callable(split)):
            raise ValueError(f"Invalid value for argument `split`. Expected one of {list(SPLIT_MODES)}, None or a "
                             f"callable. Received: split={split}")
        output_mode = legacy_output_mode(output_mode)
        if output_mode not in OUTPUT_MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {list(OUTPUT_MODES)}. "
                             f"Received: output_mode={output_mode}")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError(f"`output_sequence_length` must not be set if `output_mode` is not 'int'. Received: "
                             f"output_sequence_length={output_sequence_length}")
        if output_sequence_length is not None and (not isinstance(output_sequence_length, int)
                                                   or output_sequence_length <= 0):
            raise ValueError(f"`output_sequence_length` must be a positive integer. Received: "
                             f"output_sequence_length={output_sequence_length}")
        if ragged:
            raise ValueError("`ragged=True` is not supported by tapeflow (it has no ragged tensors).")
        if encoding != "utf-8":
            raise ValueError(f"TextVectorization: only encoding='utf-8' is supported. Received: encoding={encoding!r}")
        self._ngram_widths = _ngram_widths(ngrams)
        self.ngrams = list(ngrams) if isinstance(ngrams, (list, tuple)) else ngrams
        self.standardize = standardize
        self.split = split
        self.output_mode = output_mode
        self.output_sequence_length = output_sequence_length
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.max_tokens = max_tokens
        self.encoding = encoding
        self._lookup_layer = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                          mask_token="", output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens,
                                          sparse=sparse, name=f"{self.name}_lookup", dtype=self.dtype_policy)

    # -- text to tokens ------------------------------------------------------------------------------
    def _standardize(self, text):
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.translate(ASCII_LOWER)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = PUNCTUATION.sub("", text)
        return text

    def _custom_standardize(self, values):
        """A callable ``standardize`` gets the whole batch as a string tensor and returns one of the same shape
        (Keras calls it on the batch, so ``tf.strings`` functions work)."""
        batch = np.empty(values.shape, dtype=object)   # a string tensor holds bytes, whatever the input held
        batch.reshape(-1)[:] = [as_text(v).encode("utf-8") for v in values.reshape(-1).tolist()]
        result = to_numpy(self.standardize(Tensor(batch)))
        if result.shape != values.shape:
            raise ValueError(f"TextVectorization: the `standardize` callable must return strings of the shape it "
                             f"was given, {values.shape}; it returned shape {result.shape}.")
        return result

    def _split(self, texts):
        """The token lists of a list of texts; a callable ``split`` gets them as one string tensor (Keras's
        batch call) and returns a RaggedTensor, a string tensor of rows, or a list of lists."""
        if not callable(self.split):
            if self.split == "whitespace":
                return [[t for t in WHITESPACE.split(text) if t] for text in texts]
            return [list(text) for text in texts]
        batch = np.empty(len(texts), dtype=object)
        batch[:] = [text.encode("utf-8") for text in texts]
        rows = self.split(Tensor(batch))
        rows = rows.to_list() if isinstance(rows, RaggedTensor) else to_numpy(rows).tolist()
        if not isinstance(rows, list) or len(rows) != len(texts) or not all(isinstance(r, list) for r in rows):
            raise ValueError(f"TextVectorization: the `split` callable must return one row of tokens per input "
                             f"string ({len(texts)} rows); it returned {rows!r}.")
        return [[as_text(t, "split() result") for t in row] for row in rows]

    def _with_ngrams(self, tokens):
        if self._ngram_widths is None:
            return tokens
        out = []
        for width in self._ngram_widths:
            out.extend(" ".join(tokens[i:i + width]) for i in range(len(tokens) - width + 1))
        return out

    def _token_rows(self, inputs):
        """The token lists, one per input row."""
        values = to_numpy(inputs)
        if values.ndim == 0:
            values = values.reshape(1)
        custom = callable(self.standardize)
        if custom:
            values = self._custom_standardize(values)

        def standardized(value):
            text = as_text(value, "standardize() result" if custom else "input")
            return text if custom or self.standardize is None else self._standardize(text)
        if self.split is None:
            rows = values.reshape(-1, 1) if values.ndim == 1 else values.reshape(values.shape[0], -1)
            return [self._with_ngrams([standardized(t) for t in row]) for row in rows.tolist()]
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(f"When using TextVectorization to tokenize strings, the input rank must be 1 or the "
                             f"last shape dimension must be 1. Received: inputs.shape={values.shape} with "
                             f"rank={values.ndim}")
        return [self._with_ngrams(tokens) for tokens in self._split([standardized(t) for t in values.tolist()])]

    # -- vocabulary ------------------------------------------------------------------------------------
    def adapt(self, data, batch_size=None, steps=None):
        """Builds the vocabulary from ``data`` (strings: a list, array, tensor or tf.data Dataset)."""
        lookup = self._lookup_layer
        counts, document_counts, documents = {}, {}, 0
        for batch in iterate_batches(data, batch_size, steps):
            documents += lookup._count_rows(self._token_rows(batch), counts, document_counts)
        lookup._finish_adapt(counts, document_counts, documents)

    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    # -- call ------------------------------------------------------------------------------------------
    def call(self, inputs):
        rows = self._token_rows(inputs)
        lookup = self._lookup_layer
        if self.output_mode != "int":
            width = max((len(r) for r in rows), default=0)
            padded = np.full((len(rows), max(width, 1)), "", dtype=object)
            for i, row in enumerate(rows):
                padded[i, :len(row)] = row
            return Tensor(lookup._encode(lookup._lookup(padded)))
        length = self.output_sequence_length
        if length is None:
            length = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), length), dtype=np.int64)
        lengths = np.array([min(len(row), length) for row in rows], dtype=np.int64)
        tokens = np.empty(int(lengths.sum()), dtype=object)
        tokens[:] = [token for row, n in zip(rows, lengths.tolist()) for token in row[:n]]
        out[np.arange(length)[None, :] < lengths[:, None]] = lookup._lookup(tokens)   # one lookup, row-major
        return Tensor(out)

    def compute_output_shape(self, input_shape):
        batch = tuple(input_shape)[:1] or (None,)
        if self.output_mode == "int":
            return batch + (self.output_sequence_length,)
        return batch + (self._lookup_layer._known_depth(),)

    def compute_output_spec(self, inputs, *args, **kwargs):
        dtype = "int64" if self.output_mode == "int" else self.compute_dtype
        return KerasTensor(self.compute_output_shape(inputs.shape), dtype=dtype)

    # -- config and saving -----------------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        lookup = self._lookup_layer.get_config()
        config.update({
            "max_tokens": self.max_tokens,
            "standardize": self.standardize,
            "split": self.split,
            "ngrams": self.ngrams,
            "output_mode": self.output_mode,
            "output_sequence_length": self.output_sequence_length,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "sparse": False,
            "ragged": False,
            "vocabulary": lookup["vocabulary"],
            "idf_weights": lookup["idf_weights"],
            "encoding": self.encoding,
            "vocabulary_size": self.vocabulary_size(),
        })
        if callable(self.standardize) or callable(self.split):
            raise ValueError(f"TextVectorization '{self.name}': a callable `standardize` or `split` is Python code, "
                             "which a saved config cannot hold as data. Use the built-in modes to save the layer.")
        return config

    @classmethod
    def from_config(cls, config):
        vocabulary = config.get("vocabulary")
        if vocabulary is not None and not isinstance(vocabulary, list):
            raise ValueError(f"TextVectorization config: `vocabulary` must be a list of terms or null, not "
                             f"{type(vocabulary).__name__} (a vocabulary file named by a config is never read).")
        return super().from_config(config)

    # Keras writes the vocabulary (and tf_idf weights) for this layer and again for its inner lookup layer;
    # loading reads the inner layer's copy (the walk over the file's objects reaches it as `_lookup_layer`).
    def save_own_variables(self, store):
        self._lookup_layer.save_own_variables(store)

    def load_own_variables(self, store):
        keys = set(store.keys())
        expected = {"idf_weights"} if self.output_mode == "tf_idf" else set()
        if not keys <= expected:
            raise ValueError(f"TextVectorization '{self.name}' (output_mode '{self.output_mode}') expects "
                             f"{sorted(expected) or 'no variables'}, the file has {sorted(keys)}.")

    def save_assets(self, dir_path):
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path):
        pass
