"""IndexLookup: the vocabulary behind StringLookup, IntegerLookup and TextVectorization.

Index layout (Keras 3's): with ``output_mode="int"`` and a ``mask_token``,
index 0 is the mask; then come ``num_oov_indices`` out-of-vocabulary indices,
then the vocabulary's terms in order. In the other output modes the mask token
has no index: it is dropped from the encoded output. ``adapt`` orders the terms
by count, most frequent first, ties by the term itself in descending order,
and never counts the mask or OOV tokens. ``tf_idf`` weights are
``log(1 + documents / (1 + documents containing the term))``, the OOV index
getting their mean.

In a ``.keras`` file the vocabulary is data: ``assets/<layer path>/
vocabulary.txt`` (one term per line, special tokens first, as Keras writes it)
and, in ``tf_idf`` mode, the weights as the variable ``idf_weights``; a
vocabulary given to the constructor is in the config as a list. A vocabulary
given as a file path is read when the layer is constructed in code, never when
a config from a file names one.
"""
import os

import numpy as np

from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.framework.variables import Variable
from tapeflow.ragged.ragged_tensor import RaggedTensor

from ..keras_tensor import KerasTensor
from ..layer import Layer

OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
VOCABULARY_FILE = "vocabulary.txt"


def to_numpy(data):
    """A tensor, array, list or scalar as a numpy array (strings as an object array of bytes)."""
    if isinstance(data, (Tensor, Variable)):
        return host_array(data)
    arr = np.asarray(data)
    if arr.dtype.kind == "U":
        arr = np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(arr) if arr.size else arr.astype(object)
    return arr


def iterate_batches(data, batch_size=None, steps=None):
    """The batches of ``data`` (an array-like, a tf.data Dataset or any iterable of batches) as numpy arrays."""
    if isinstance(data, (list, tuple, np.ndarray, Tensor, Variable)):
        arr = to_numpy(data)
        if batch_size is None or arr.ndim == 0:
            yield arr
            return
        for step, start in enumerate(range(0, len(arr), batch_size)):
            if steps is not None and step >= steps:
                break
            yield arr[start:start + batch_size]
        return
    if not hasattr(data, "__iter__"):
        raise ValueError(f"adapt() expects an array, a list, a tensor or a tf.data.Dataset. Received: "
                         f"{type(data).__name__}")
    for step, batch in enumerate(data):
        if steps is not None and step >= steps:
            break
        if isinstance(batch, tuple):
            batch = batch[0]   # (x, y) datasets: the inputs
        yield to_numpy(batch)


def legacy_output_mode(output_mode):
    """Keras 3 still accepts the Keras 2 name "binary" for "multi_hot" (and stores "multi_hot" in the config)."""
    return "multi_hot" if output_mode == "binary" else output_mode


def _listify(values):
    if values is None:
        return None
    values = np.asarray(values).tolist()
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]


class IndexLookup(Layer):
    """Maps terms to indices (or, with ``invert``, indices to terms), or encodes them as vectors."""

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary_dtype, vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", sparse=False, pad_to_max_tokens=False,
                 name=None, **kwargs):
        kwargs.pop("vocabulary_size", None)   # informational in Keras's config
        oov_method = kwargs.pop("oov_method", "floormod")
        salt = kwargs.pop("salt", None)
        super().__init__(name=name, **kwargs)
        output_mode = legacy_output_mode(output_mode)
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens <= 1):
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if output_mode not in OUTPUT_MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {list(OUTPUT_MODES)}. "
                             f"Received: output_mode={output_mode}")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be 'int' when `invert` is true. Received: output_mode={output_mode}")
        if sparse:
            raise ValueError("`sparse=True` is not supported by tapeflow (it has no sparse tensors).")
        if pad_to_max_tokens and max_tokens is None and output_mode != "int":
            raise ValueError("If `pad_to_max_tokens` is True, `max_tokens` must be set.")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"`idf_weights` should only be set if `output_mode` is 'tf_idf'. Received: "
                             f"output_mode={output_mode} and idf_weights={idf_weights}")
        if oov_method != "floormod" or salt is not None:
            raise ValueError(f"Only oov_method='floormod' without a salt is supported. Received: "
                             f"oov_method={oov_method!r}, salt={salt!r}")
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.vocabulary_dtype = vocabulary_dtype
        self.invert = bool(invert)
        self.output_mode = output_mode
        self.sparse = False
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.supports_masking = False
        self._terms = []            # the vocabulary without special tokens
        self._index = {}            # term -> index
        self._idf = None            # tf_idf weights over every index (OOV included), or None
        self._loaded_idf = None     # tf_idf weights read from a file, waiting for the vocabulary
        self._config_vocabulary = None
        self._config_idf_weights = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
            if not isinstance(vocabulary, str):   # a file's terms are saved as assets, not as its path
                self._config_vocabulary = _listify(to_numpy(vocabulary).reshape(-1))
                self._config_idf_weights = _listify(None if idf_weights is None else to_numpy(idf_weights))
        elif idf_weights is not None:
            raise ValueError("`idf_weights` must be passed together with a `vocabulary`.")

    # -- index layout ------------------------------------------------------------------------------
    def _mask_has_index(self):
        return self.mask_token is not None and self.output_mode == "int"

    def _oov_start(self):
        return 1 if self._mask_has_index() else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    def vocabulary_size(self):
        return self._token_start() + len(self._terms)

    def get_vocabulary(self, include_special_tokens=True):
        terms = [self._decode_term(t) for t in self._terms]
        if not include_special_tokens:
            return terms
        specials = [self.mask_token] if self._mask_has_index() else []
        return specials + [self.oov_token] * self.num_oov_indices + terms

    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens and self.max_tokens is not None else self.vocabulary_size()

    def _known_depth(self):
        """The width of an encoded output as a symbolic shape shows it: unknown until there is a vocabulary."""
        if self.pad_to_max_tokens and self.max_tokens is not None:
            return self.max_tokens
        return self.vocabulary_size() if self._terms else None

    # -- term conversion (StringLookup and IntegerLookup) ---------------------------------------------
    def _decode_term(self, term):
        return term

    def _term_key(self, value):
        """The key of an input value (or a vocabulary entry) in the vocabulary's table."""
        raise NotImplementedError

    def _parse_vocabulary_line(self, line):
        raise NotImplementedError

    def _read_vocabulary_file(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return [self._parse_vocabulary_line(line) for line in text.split("\n") if line != ""]

    # -- the vocabulary ------------------------------------------------------------------------------
    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the terms (a list, array or tensor; the special tokens may lead it, as get_vocabulary()
        returns them) and, in tf_idf mode, their idf weights."""
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError(f"`idf_weights` should only be set if output_mode is 'tf_idf'. Received: "
                             f"output_mode={self.output_mode}")
        if isinstance(vocabulary, str):
            vocabulary = self._read_vocabulary_file(vocabulary)
        values = vocabulary if isinstance(vocabulary, list) else to_numpy(vocabulary).reshape(-1).tolist()
        values = [self._term_key(v) for v in values]
        mask_key = None if self.mask_token is None else self._term_key(self.mask_token)
        oov_key = None if self.oov_token is None else self._term_key(self.oov_token)
        specials = ([mask_key] if self._mask_has_index() else []) + [oov_key] * self.num_oov_indices
        with_specials = bool(specials) and values[:len(specials)] == specials
        terms = values[len(specials):] if with_specials else values
        for term in terms:
            if mask_key is not None and term == mask_key:
                raise ValueError(f"Found reserved mask token at unexpected location in `vocabulary`. Note that "
                                 f"passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                                 f"remove all mask and OOV tokens, or include them only at the start of the "
                                 f"vocabulary in precisely this order: {self._specials_for_message()}. "
                                 f"Received: mask_token={self.mask_token} at vocabulary index "
                                 f"{values.index(term)}")
            if oov_key is not None and self.num_oov_indices and term == oov_key:
                raise ValueError(f"Found reserved OOV token at unexpected location in `vocabulary`. Note that "
                                 f"passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                                 f"remove all mask and OOV tokens, or include them only at the start of the "
                                 f"vocabulary in precisely this order: {self._specials_for_message()}. "
                                 f"Received: oov_token={self.oov_token} at vocabulary index {values.index(term)}")
        if len(set(terms)) != len(terms):
            repeated = sorted({self._decode_term(t) for t in terms if terms.count(t) > 1}, key=str)
            raise ValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are: {repeated}")
        size = self._token_start() + len(terms)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received "
                             f"vocabulary size is {size}; `max_tokens` is {self.max_tokens}.")
        idf = None
        if idf_weights is not None:
            idf = np.asarray(to_numpy(idf_weights), dtype=np.float64).reshape(-1)
            if with_specials:   # the OOV weights lead, as get_vocabulary() and the saved weights have them
                if len(idf) != len(values):
                    raise ValueError(f"`idf_weights` must be the same length as `vocabulary`: {len(idf)} weights "
                                     f"for a vocabulary of {len(values)} entries.")
            else:
                if len(idf) != len(terms):
                    raise ValueError(f"`idf_weights` must be the same length as `vocabulary`: {len(idf)} weights "
                                     f"for {len(terms)} terms.")
                mean = float(np.mean(idf)) if len(idf) else 0.0
                idf = np.concatenate([np.zeros(self._oov_start()), np.full(self.num_oov_indices, mean), idf])
        self._terms = terms
        self._index = {term: self._token_start() + i for i, term in enumerate(terms)}
        self._idf = idf
        self._config_vocabulary = None
        self._config_idf_weights = None

    def _specials_for_message(self):
        return ([self.mask_token] if self._mask_has_index() else []) + [self.oov_token] * self.num_oov_indices

    # -- adapt ---------------------------------------------------------------------------------------
    def adapt(self, data, batch_size=None, steps=None):
        """Builds the vocabulary (and tf_idf weights) from ``data``: each row is one document."""
        counts, document_counts, documents = {}, {}, 0
        if isinstance(data, list) and any(isinstance(row, (list, tuple)) for row in data):
            # A list of rows (of any lengths): each row is a document.
            rows = [[self._term_key(v) for v in (row if isinstance(row, (list, tuple)) else [row])] for row in data]
            documents = self._count_rows(rows, counts, document_counts)
        else:
            for batch in iterate_batches(data, batch_size, steps):
                documents += self._count_batch(batch, counts, document_counts)
        self._finish_adapt(counts, document_counts, documents)

    def _count_batch(self, batch, counts, document_counts):
        batch = np.asarray(batch, dtype=object) if isinstance(batch, list) else batch
        rows = batch.reshape(-1, 1) if batch.ndim <= 1 else batch.reshape(batch.shape[0], -1)
        return self._count_rows([[self._term_key(v) for v in row] for row in rows.tolist()], counts,
                                document_counts)

    def _count_rows(self, rows, counts, document_counts):
        """Counts the terms of ``rows`` (lists of keys); returns the number of documents."""
        skip = {self._term_key(t) for t in (self.mask_token, self.oov_token) if t is not None}
        for row in rows:
            row = [t for t in row if t not in skip]
            for term in row:
                counts[term] = counts.get(term, 0) + 1
            if self.output_mode == "tf_idf":
                for term in set(row):
                    document_counts[term] = document_counts.get(term, 0) + 1
        return len(rows)

    def _finish_adapt(self, counts, document_counts, documents):
        terms = sorted(counts, key=lambda t: (counts[t], self._sort_key(t)), reverse=True)
        if self.max_tokens is not None:
            terms = terms[:max(self.max_tokens - self._token_start(), 0)]
        idf = None
        if self.output_mode == "tf_idf":
            df = np.array([document_counts[t] for t in terms], dtype=np.float64)
            idf = np.log1p(documents / (1.0 + df)).astype(np.float32)
        self.set_vocabulary(terms, idf)

    def _sort_key(self, term):
        return term

    # -- lookup ----------------------------------------------------------------------------------------
    def _lookup(self, values):
        """Indices (int64) of an array of input values; the mask token gives 0 in int mode, -1 otherwise."""
        keys = self._term_keys(values.reshape(-1).tolist())
        get = self._index.get
        out = np.fromiter((get(k, -2) for k in keys), dtype=np.int64, count=len(keys))
        missing = np.flatnonzero(out == -2)
        if missing.size:
            mask_key = None if self.mask_token is None else self._term_key(self.mask_token)
            oov_start, n_oov = self._oov_start(), self.num_oov_indices
            for i in missing.tolist():
                if mask_key is not None and keys[i] == mask_key:
                    out[i] = 0 if self._mask_has_index() else -1
                else:
                    out[i] = -1 if n_oov == 0 else oov_start + self._oov_bucket(keys[i], n_oov)
        return out.reshape(values.shape)

    def _term_keys(self, values):
        return [self._term_key(v) for v in values]

    def _oov_bucket(self, key, n_oov):
        return 0

    def _invert(self, indices):
        """The terms of an array of indices; indices outside the vocabulary give the OOV token."""
        vocabulary = self.get_vocabulary()
        oov = self.oov_token
        flat = [vocabulary[i] if 0 <= i < len(vocabulary) else oov for i in indices.reshape(-1).tolist()]
        return self._terms_array(flat, indices.shape)

    def _terms_array(self, terms, shape):
        raise NotImplementedError

    def _convert_inputs(self, x):
        if isinstance(x, RaggedTensor):   # looked up value by value, keeping its rows (see _call_ragged)
            return x
        return super()._convert_inputs(x)

    def _call_ragged(self, inputs):
        """A RaggedTensor, as TensorFlow's lookup layers take one: in int mode (and inverted) and one_hot each
        value is looked up and the rows are kept; multi_hot, count and tf_idf encode each row of a ragged-rank-1
        tensor as one dense vector."""
        flat = self.call(inputs.flat_values)
        if self.invert or self.output_mode in ("int", "one_hot"):
            return inputs.with_flat_values(flat)
        if inputs.ragged_rank != 1:
            raise ValueError(f"{type(self).__name__} with output_mode '{self.output_mode}' encodes the rows of a "
                             f"RaggedTensor of ragged rank 1; received ragged rank {inputs.ragged_rank}.")
        lengths = np.diff(to_numpy(inputs.row_splits))
        padded = np.full((len(lengths), max(int(lengths.max(initial=0)), 1)), -1, dtype=np.int64)
        padded[np.arange(padded.shape[1])[None, :] < lengths[:, None]] = self._lookup(to_numpy(inputs.flat_values))
        return Tensor(self._encode(padded))

    def call(self, inputs):
        if isinstance(inputs, RaggedTensor):
            return self._call_ragged(inputs)
        values = to_numpy(inputs)
        if self.invert:
            if values.dtype.kind not in "iu":
                raise ValueError(f"{type(self).__name__} with `invert=True` expects integer indices, received "
                                 f"{values.dtype}.")
            return self._invert(values)
        indices = self._lookup(values)
        if self.output_mode == "int":
            return Tensor(indices)
        return Tensor(self._encode(indices))

    def _encode(self, indices):
        """one_hot / multi_hot / count / tf_idf vectors (float32) from indices; negative indices are dropped."""
        depth = self._depth()
        if self.output_mode == "one_hot":
            if indices.ndim > 1 and indices.shape[-1] == 1:
                indices = indices[..., 0]
            out = np.zeros(indices.shape + (depth,), dtype=np.float32)
            keep = (indices >= 0) & (indices < depth)
            out.reshape(-1, depth)[np.nonzero(keep.reshape(-1))[0], indices.reshape(-1)[keep.reshape(-1)]] = 1.0
            return out
        # The last axis holds a sample's terms, as in Keras: (batch, n) -> (batch, depth), (n,) -> (depth,),
        # a scalar is one term. Keras's results for rank 3 and more follow another rule; they are refused.
        if indices.ndim > 2:
            raise ValueError(f"When output_mode is '{self.output_mode}', the inputs must be of rank 0, 1 or 2; "
                             f"received inputs of shape {indices.shape}.")
        leading = indices.shape[:-1] if indices.ndim else ()
        indices = indices.reshape(-1, indices.shape[-1] if indices.ndim else 1)
        counts = np.zeros((indices.shape[0], depth), dtype=np.float32)
        rows = np.repeat(np.arange(indices.shape[0]), indices.shape[1])
        cols = indices.reshape(-1)
        keep = (cols >= 0) & (cols < depth)
        np.add.at(counts, (rows[keep], cols[keep]), 1.0)
        counts = counts.reshape(leading + (depth,))
        if self.output_mode == "multi_hot":
            return np.minimum(counts, 1.0)
        if self.output_mode == "count":
            return counts
        idf = np.zeros(depth, dtype=np.float32)
        if self._idf is not None:
            n = min(len(self._idf), depth)
            idf[:n] = self._idf[:n]
        return counts * idf

    # -- shapes ----------------------------------------------------------------------------------------
    def _output_dtype(self):
        if self.invert:
            return self._terms_dtype()
        return "int64" if self.output_mode == "int" else self.compute_dtype

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = self._known_depth()
        if self.output_mode == "one_hot":
            base = input_shape[:-1] if len(input_shape) > 1 and input_shape[-1] == 1 else input_shape
            return base + (depth,)
        return input_shape[:-1] + (depth,)

    def compute_output_spec(self, inputs, *args, **kwargs):
        return KerasTensor(self.compute_output_shape(inputs.shape), dtype=self._output_dtype())

    # -- config and saving -----------------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        idf = self._config_idf_weights
        config.update({
            "invert": self.invert,
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token,
            "mask_token": self.mask_token,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "idf_weights": None if idf is None else [float(w) for w in idf],
            "vocabulary": self._config_vocabulary,
            "vocabulary_size": self.vocabulary_size(),
            "oov_method": "floormod",
            "salt": None,
        })
        return config

    @classmethod
    def from_config(cls, config):
        vocabulary = config.get("vocabulary")
        if vocabulary is not None and not isinstance(vocabulary, list):
            raise ValueError(f"{cls.__name__} config: `vocabulary` must be a list of terms or null, not "
                             f"{type(vocabulary).__name__} (a vocabulary file named by a config is never read).")
        return super().from_config(config)

    def save_own_variables(self, store):
        if self.output_mode == "tf_idf" and self._idf is not None:
            store["idf_weights"] = self._idf_for_file()

    def _idf_for_file(self):
        return np.asarray(self._idf, dtype=np.float32)

    def load_own_variables(self, store):
        keys = set(store.keys())
        if self.output_mode != "tf_idf":
            if keys:
                raise ValueError(f"{type(self).__name__} '{self.name}' (output_mode '{self.output_mode}') has no "
                                 f"variables, but the file has {sorted(keys)} for it.")
            return
        if keys != {"idf_weights"}:
            raise ValueError(f"{type(self).__name__} '{self.name}' in tf_idf mode expects one variable "
                             f"'idf_weights', the file has {sorted(keys)}.")
        idf = np.asarray(store["idf_weights"])
        if idf.ndim != 1 or idf.dtype.kind != "f" or not np.all(np.isfinite(idf)):
            raise ValueError(f"{type(self).__name__} '{self.name}': 'idf_weights' must be a 1-D array of finite "
                             f"floats, the file has {idf.dtype} of shape {idf.shape}.")
        self._loaded_idf = idf   # applied with the vocabulary read from the assets
        if self._terms and len(idf) in (self.vocabulary_size(), self._depth()):
            self._idf = idf[:self.vocabulary_size()]   # a weights file loaded into a layer that has its vocabulary

    def save_assets(self, dir_path):
        if self._config_vocabulary is not None:
            return   # the config holds it (as Keras does)
        lines = [str(term) for term in self.get_vocabulary()]
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError(f"{type(self).__name__} '{self.name}': the vocabulary term {line!r} holds a line "
                                 "break, which Keras's vocabulary.txt (one term per line) cannot store.")
        with open(os.path.join(dir_path, VOCABULARY_FILE), "w", encoding="utf-8") as f:
            f.write("\n".join(lines))

    def load_assets(self, dir_path):
        path = os.path.join(dir_path, VOCABULARY_FILE)
        if not os.path.isfile(path):
            raise ValueError(f"{type(self).__name__} '{self.name}': the file has no {VOCABULARY_FILE} for it.")
        with open(path, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{VOCABULARY_FILE} is not UTF-8 text ({e}).") from None
        values = [self._parse_vocabulary_line(line) for line in text.split("\n")] if text else []
        idf = self._loaded_idf
        if self.output_mode == "tf_idf" and idf is None:
            raise ValueError(f"{type(self).__name__} '{self.name}' is in tf_idf mode, but the file has no "
                             "'idf_weights' for it.")
        self._loaded_idf = None
        if idf is not None and len(idf) > len(values):
            idf = idf[:len(values)]   # weights padded to max_tokens
        self.set_vocabulary(values, idf)
