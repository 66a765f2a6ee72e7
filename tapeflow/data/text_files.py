"""Datasets read from text files: TextLineDataset, CsvDataset and make_csv_dataset.

Files are read lazily, one after another, at each iteration; a missing file
raises ``tf.errors.NotFoundError`` when iteration reaches it, as in TensorFlow.
CSV records are parsed by Python's csv module; each column has a dtype
(int32, int64, float32, float64 or string) and an empty field takes the
column's default, or is an error when the column has none.
"""
import collections
import glob
import gzip
import io
import zlib

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError, NotFoundError
from ..framework.tensor_spec import TensorSpec
from . import structure
from .dataset import UNKNOWN_CARDINALITY, Dataset

_CSV_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string)


def _filenames(filenames):
    if isinstance(filenames, Dataset):
        return [bytes(f).decode("utf-8") if not isinstance(f, str) else f
                for f in (structure.numpy_leaf(e) for e in filenames._iterate())]
    array = np.asarray(structure.normalize(filenames))
    if array.dtype.kind not in "OSU" or array.ndim > 1:
        raise TypeError(f"`filenames` must be a string or a 1-D list of strings, got {filenames!r}")
    names = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
    if not names:
        raise ValueError("`filenames` must not be empty.")
    return names


def _compression(compression_type):
    if compression_type is None:
        return ""
    if hasattr(compression_type, "numpy"):
        compression_type = compression_type.numpy()
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if compression_type not in ("", "GZIP", "ZLIB"):
        raise InvalidArgumentError(f"Unsupported compression_type: {compression_type!r} (use '', 'GZIP' or "
                                   f"'ZLIB').")
    return compression_type


def _read_bytes(filename, compression):
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{filename}; No such file or directory") from None
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZLIB":
            return zlib.decompress(data)
    except (OSError, zlib.error, EOFError) as error:
        raise InvalidArgumentError(f"{filename}: not valid {compression} data ({error})") from None
    return data


def _lines(data):
    """The lines of a file's bytes, without their '\\n' or '\\r\\n' ending."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


class FileRecordsDataset(Dataset):
    """The records of one or more files, read one file after another at each iteration, as scalar strings;
    a subclass says how a file splits into records (``_records``) and names its compression."""
    _runs_python = True    # file I/O

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        self._files = _filenames(filenames)
        self._compression = self._compression_of(compression_type)

    def _compute_spec(self):
        return TensorSpec((), dtypes.string)

    def _compute_cardinality(self):
        return UNKNOWN_CARDINALITY

    def _iterate(self):
        for filename in self._files:
            for record in self._records(filename):
                value = np.empty((), dtype=object)
                value[()] = record
                yield value


class TextLineDataset(FileRecordsDataset):
    """The lines of one or more text files, as scalar string tensors."""
    _tf_name = "TextLineDatasetV2"

    @staticmethod
    def _compression_of(compression_type):
        return _compression(compression_type)

    def _records(self, filename):
        return _lines(_read_bytes(filename, self._compression))


# ------------------------------------------------------------------ CSV ---
class _Column:
    """One CSV column: its dtype and default (None: the field is required)."""

    def __init__(self, index, dtype, default):
        self.index, self.dtype, self.default = index, dtype, default

    def parse(self, field, na_value, record_number):
        if field == "" or field == na_value:
            if self.default is None:
                raise InvalidArgumentError(f"Field {self.index} is required but missing in record "
                                           f"{record_number}!")
            return self.default
        return _parse_field(field, self.dtype, self.index, record_number)


def _parse_field(field, dtype, index, record_number):
    if dtype == dtypes.string:
        value = np.empty((), dtype=object)
        value[()] = field.encode("utf-8")
        return value
    try:
        number = int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise InvalidArgumentError(f"Field {index} in record {record_number} is not a valid "
                                   f"{dtype.name}: {field!r}") from None
    if dtype.is_integer and not np.iinfo(dtype._np).min <= number <= np.iinfo(dtype._np).max:
        raise InvalidArgumentError(f"Field {index} in record {record_number} is out of the range of "
                                   f"{dtype.name}: {field!r}")
    return np.array(number, dtype=dtype._np)


def _column(index, record_default):
    """A column from one entry of ``record_defaults``: a dtype (required) or a default value."""
    if isinstance(record_default, dtypes.DType) or (isinstance(record_default, str) and
                                                    record_default in ("int32", "int64", "float32", "float64",
                                                                       "string")):
        dtype = dtypes.as_dtype(record_default)
        default = None
    else:
        array = np.asarray(structure.normalize(record_default))
        if array.ndim == 1 and array.shape[0] == 0:     # [] with a dtype: required (TensorFlow's convention)
            raise TypeError(f"record_defaults[{index}]: give a dtype for a required column")
        if array.size != 1 or array.ndim > 1:
            raise ValueError(f"record_defaults[{index}] must be a dtype or a scalar default, got "
                             f"{record_default!r}")
        array = array.reshape(())
        dtype = dtypes.as_dtype(array.dtype if array.dtype.kind != "O" else "string")
        default = array.astype(dtype._np) if dtype != dtypes.string else array
    if dtype not in _CSV_DTYPES:
        raise TypeError(f"record_defaults[{index}]: unsupported CSV column type {dtype.name} (use int32, int64, "
                        f"float32, float64 or string)")
    return _Column(index, dtype, default)


def _csv_records(text, field_delim, use_quote_delim):
    import csv
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    return csv.reader(io.StringIO(text), delimiter=field_delim, quoting=quoting, strict=use_quote_delim)


def _read_csv_rows(filename, compression, field_delim, use_quote_delim, header, encoding="utf-8"):
    """The records of one file (lists of field strings), without the header when ``header``."""
    import csv
    try:
        text = _read_bytes(filename, compression).decode(encoding)
    except UnicodeDecodeError as error:
        raise InvalidArgumentError(f"{filename}: not {encoding} text ({error})") from None
    rows = _csv_records(text, field_delim, use_quote_delim)
    try:
        rows = [row for row in rows if row]       # blank lines hold no record
    except csv.Error as error:
        raise InvalidArgumentError(f"{filename}: malformed CSV ({error})") from None
    return rows[1:] if header else rows


class CsvDataset(Dataset):
    """The records of CSV files as tuples of scalar tensors, one per (selected) column."""
    _tf_name = "CsvDatasetV2"
    _runs_python = True    # file I/O

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 name=None):
        self._files = _filenames(filenames)
        self._compression = _compression(compression_type)
        self._columns = [_column(i, d) for i, d in enumerate(record_defaults)]
        if not self._columns:
            raise ValueError("`record_defaults` must not be empty.")
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be set, not both.")
        if select_cols is not None:
            select_cols = [int(c) for c in select_cols]
            if sorted(set(select_cols)) != select_cols or (select_cols and select_cols[0] < 0):
                raise InvalidArgumentError("select_cols must be strictly increasing and non-negative.")
            if len(select_cols) != len(self._columns):
                raise ValueError(f"Length of select_cols ({len(select_cols)}) and record_defaults "
                                 f"({len(self._columns)}) should match.")
        self._select = select_cols
        self._exclude = None if exclude_cols is None else set(int(c) for c in exclude_cols)
        if len(field_delim) != 1:
            raise ValueError(f"field_delim must be one character, got {field_delim!r}")
        self._delim, self._quote, self._na, self._header = field_delim, bool(use_quote_delim), na_value, header

    def _compute_spec(self):
        return tuple(TensorSpec((), c.dtype) for c in self._columns)

    def _compute_cardinality(self):
        return UNKNOWN_CARDINALITY

    def _fields(self, row, record_number):
        if self._select is not None:
            if self._select[-1] >= len(row):
                raise InvalidArgumentError(f"Expect {self._select[-1] + 1} fields but have {len(row)} in "
                                           f"record {record_number}")
            return [row[i] for i in self._select]
        if self._exclude is not None:
            row = [f for i, f in enumerate(row) if i not in self._exclude]
        if len(row) != len(self._columns):
            raise InvalidArgumentError(f"Expect {len(self._columns)} fields but have {len(row)} in record "
                                       f"{record_number}")
        return row

    def _iterate(self):
        for filename in self._files:
            rows = _read_csv_rows(filename, self._compression, self._delim, self._quote, self._header)
            for number, row in enumerate(rows):
                fields = self._fields(row, number)
                yield tuple(c.parse(f, self._na, number) for c, f in zip(self._columns, fields))


def _infer_dtype(values):
    """int32 when every value is an int32, else float32 when every value is a number, else string."""
    dtype = dtypes.int32
    for value in values:
        if value == "":
            continue
        if dtype == dtypes.int32:
            try:
                if -2 ** 31 <= int(value) < 2 ** 31:
                    continue
            except ValueError:
                pass
            dtype = dtypes.float32
        try:
            float(value)
        except ValueError:
            return dtypes.string
    return dtype


def _empty_default(dtype):
    if dtype == dtypes.string:
        value = np.empty((), dtype=object)
        value[()] = b""
        return value
    return np.zeros((), dtype._np)


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """Batches of ``(features, label)`` (or ``features``) read from CSV files: ``features`` is an
    OrderedDict from column name to a batch of that column. Column types are inferred from the first
    ``num_rows_for_inference`` records unless ``column_defaults`` gives them."""
    files = _matching_files(file_pattern)
    compression = _compression(compression_type)
    first_rows = _read_csv_rows(files[0], compression, field_delim, use_quote_delim, header=False,
                                encoding=encoding)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` to be set.")
        if not first_rows:
            raise ValueError(f"Cannot infer the column names: {files[0]} is empty.")
        column_names = first_rows[0]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError(f"Cannot have duplicate column names, got {column_names}.")
    if select_columns is not None:
        indices = sorted(column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns
                         if not isinstance(c, str) or c in column_names)
        if len(indices) != len(select_columns):
            raise ValueError(f"`select_columns` {list(select_columns)} names columns not in {column_names}.")
    else:
        indices = list(range(len(column_names)))
    names = [column_names[i] for i in indices]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")
    if column_defaults is None:
        records = first_rows[1 if header else 0:][:num_rows_for_inference]
        types = [_infer_dtype([r[i] if i < len(r) else "" for r in records]) for i in indices]
        column_defaults = [_empty_default(t) for t in types]
    elif len(column_defaults) != len(indices):
        raise ValueError(f"The number of `column_defaults` ({len(column_defaults)}) does not match the "
                         f"number of columns ({len(indices)}).")
    dataset = CsvDataset(files, column_defaults, compression_type=compression, header=header,
                         field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                         select_cols=indices)
    if ignore_errors:
        raise NotImplementedError("make_csv_dataset(ignore_errors=True) is not supported.")
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)

    def to_features(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    return dataset.map(to_features)


def _matching_files(file_pattern):
    patterns = _filenames(file_pattern)
    files = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise ValueError(f"No files match `file_pattern` {pattern}.")
        files.extend(matched)
    return files
