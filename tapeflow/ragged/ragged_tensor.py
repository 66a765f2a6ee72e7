"""RaggedTensor: rows of different lengths, held as flat values and row splits.

``values`` is a Tensor (or, for more than one ragged dimension, another RaggedTensor) holding every
row's items back to back; ``row_splits`` (int64, length nrows + 1, starting at 0, non-decreasing) says
where each row starts and ends: row i is ``values[row_splits[i]:row_splits[i + 1]]``. Operations act on
the flat values with ordinary ops, so gradients flow through ``.values`` into whatever made them. The
row partition is structure (numpy arrays behind int64 Tensors), fixed when a function is traced.
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops
from ..ops.common import is_tensor_like, to_tensor


def _int_vector(value, what):
    v = np.asarray(to_tensor(value)._value if is_tensor_like(value) else value)
    if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{what} must be a vector of integers, got {v.dtype} of shape {list(v.shape)}")
    return v.astype(np.int64)


def _nrows_of(values):
    return values.nrows_static() if isinstance(values, RaggedTensor) else values._value.shape[0]


class RaggedTensor:
    """Construct with the ``from_*`` class methods or ``tf.ragged.constant``."""

    def __init__(self, values, row_splits, internal=False, uniform_row_length=None):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._splits = row_splits       # numpy int64
        self._uniform = uniform_row_length      # an int when every row has this length by construction

    # ------------------------------------------------------------------ factories ---
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        values = values if isinstance(values, RaggedTensor) else to_tensor(values)
        if not isinstance(values, RaggedTensor) and values._value.ndim == 0:
            raise ValueError("values must have rank >= 1")
        splits = _int_vector(row_splits, "row_splits")
        if validate:
            n = _nrows_of(values)
            if splits.size == 0 or splits[0] != 0 or np.any(np.diff(splits) < 0) or splits[-1] != n:
                raise InvalidArgumentError(
                    f"Arguments to from_row_splits do not form a valid RaggedTensor: row_splits must start with 0, "
                    f"be sorted in ascending order and end with the number of values ({n}); got {splits.tolist()}")
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        lengths = _int_vector(row_lengths, "row_lengths")
        if validate and np.any(lengths < 0):
            raise InvalidArgumentError(f"Arguments to from_row_lengths do not form a valid RaggedTensor: "
                                       f"row_lengths must be non-negative, got {lengths.tolist()}")
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(lengths)]), validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        rowids = _int_vector(value_rowids, "value_rowids")
        if validate and (np.any(np.diff(rowids) < 0) or (rowids.size and rowids[0] < 0)):
            raise InvalidArgumentError(f"Arguments to from_value_rowids do not form a valid RaggedTensor: "
                                       f"value_rowids must be sorted and non-negative, got {rowids.tolist()}")
        n = (int(rowids[-1]) + 1 if rowids.size else 0) if nrows is None else int(np.asarray(
            to_tensor(nrows)._value if is_tensor_like(nrows) else nrows))
        if validate and rowids.size and rowids[-1] >= n:
            raise InvalidArgumentError(f"Arguments to from_value_rowids do not form a valid RaggedTensor: "
                                       f"value_rowids {rowids.tolist()} refer to rows beyond nrows={n}")
        return cls.from_row_lengths(values, np.bincount(rowids, minlength=n), validate=validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        starts = _int_vector(row_starts, "row_starts")
        values = values if isinstance(values, RaggedTensor) else to_tensor(values)
        return cls.from_row_splits(values, np.concatenate([starts, [_nrows_of(values)]]), validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        return cls.from_row_splits(values, np.concatenate([[0], _int_vector(row_limits, "row_limits")]),
                                   validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        """Rows of ``uniform_row_length`` items each: the new dimension is uniform (a known size)."""
        values = values if isinstance(values, RaggedTensor) else to_tensor(values)
        length = int(np.asarray(to_tensor(uniform_row_length)._value
                                if is_tensor_like(uniform_row_length) else uniform_row_length))
        n_values = _nrows_of(values)
        if length < 0:
            raise InvalidArgumentError(f"uniform_row_length must be non-negative, got {length}")
        if nrows is None:
            if length == 0:
                raise ValueError("from_uniform_row_length: nrows is required when uniform_row_length is 0")
            nrows = n_values // length
        nrows = int(np.asarray(to_tensor(nrows)._value if is_tensor_like(nrows) else nrows))
        if validate and nrows * length != n_values:
            raise InvalidArgumentError(f"from_uniform_row_length: {n_values} values do not make {nrows} rows of "
                                       f"length {length}")
        result = cls.from_row_splits(values, np.arange(nrows + 1, dtype=np.int64) * length, validate=validate)
        result._uniform = length
        return result

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None, row_splits_dtype=None):
        """Rows of a dense tensor, cut to ``lengths`` (or before trailing ``padding``); with ``ragged_rank``
        above 1 the further dimensions become ragged (uniform) partitions too."""
        t = to_tensor(tensor)
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if not 1 <= ragged_rank < t._value.ndim:
            raise ValueError(f"ragged_rank must be in [1, {t._value.ndim - 1}] for a tensor of rank "
                             f"{t._value.ndim}, got {ragged_rank}")
        if ragged_rank > 1:
            if lengths is not None or padding is not None:
                raise NotImplementedError("RaggedTensor.from_tensor: lengths/padding with ragged_rank > 1 is "
                                          "not supported by tapeflow")
            shape = t._value.shape
            inner = cls.from_tensor(array_ops.reshape(t, (shape[0] * shape[1],) + shape[2:]),
                                    ragged_rank=ragged_rank - 1)
            return cls.from_row_splits(inner, np.arange(shape[0] + 1, dtype=np.int64) * shape[1])
        n, m = t._value.shape[:2]
        if lengths is not None:
            lengths = _int_vector(lengths, "lengths")
        elif padding is not None:
            pad = np.asarray(to_tensor(padding, dtype=t.dtype)._value)
            is_pad = np.all((t._value == pad).reshape(n, m, -1), axis=2)
            lengths = np.array([m - int(np.argmin(row[::-1])) if not row.all() else 0 for row in is_pad], np.int64)
        else:
            lengths = np.full(n, m, np.int64)
        keep = np.arange(m)[None, :] < np.minimum(lengths, m)[:, None]
        flat = array_ops.reshape(t, (n * m,) + t._value.shape[2:])
        values = array_ops.gather(flat, Tensor(np.flatnonzero(keep.ravel())))
        return cls.from_row_lengths(values, np.minimum(lengths, m))

    # ----------------------------------------------------------------- structure ---
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return Tensor(self._splits)

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        splits, rt = [], self
        while isinstance(rt, RaggedTensor):
            splits.append(Tensor(rt._splits))
            rt = rt._values
        return tuple(splits)

    @property
    def ragged_rank(self):
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        inner = self._values.shape
        return TensorShape([self.nrows_static(), self._uniform] + list(inner)[1:])

    @property
    def uniform_row_length(self):
        return None if self._uniform is None else Tensor(np.asarray(self._uniform, np.int64))

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape holding every row: the longest row along each ragged dimension."""
        dims = [self.nrows_static(), int(self._lengths().max()) if self._lengths().size else 0]
        inner = self._values.bounding_shape()._value.tolist() if isinstance(self._values, RaggedTensor) \
            else list(self._values._value.shape)
        dims += inner[1:]
        result = np.asarray(dims, dtypes.as_dtype(out_type or dtypes.int64)._np)
        return Tensor(result if axis is None else result[axis])

    def nested_row_lengths(self, name=None):
        lengths, rt = [], self
        while isinstance(rt, RaggedTensor):
            lengths.append(Tensor(rt._lengths()))
            rt = rt._values
        return tuple(lengths)

    def merge_dims(self, outer_axis, inner_axis):
        """Dimensions ``outer_axis..inner_axis`` merged into one (TensorFlow's ``merge_dims``)."""
        rank = self.shape.rank
        outer = outer_axis + rank if outer_axis < 0 else outer_axis
        inner = inner_axis + rank if inner_axis < 0 else inner_axis
        if not 0 <= outer <= inner < rank:
            raise ValueError(f"merge_dims: expected 0 <= outer_axis ({outer_axis}) <= inner_axis ({inner_axis}) "
                             f"< rank ({rank})")
        if outer == inner:
            return self
        values = self._values
        if outer == 0:
            return _merge_leading(values, inner - 1)
        if outer == 1:      # each row's items down to dimension ``inner`` become one run
            offsets = _row_offsets(values, inner - 1)
            return RaggedTensor.from_row_splits(_merge_leading(values, inner - 1), offsets[self._splits])
        if isinstance(values, RaggedTensor):
            return self.with_values(values.merge_dims(outer - 1, inner - 1))
        return self.with_values(_merge_dense(values, outer - 1, inner - 1))

    def get_shape(self):
        return self.shape

    @property
    def row_splits_dtype(self):
        return dtypes.int64

    def nrows_static(self):
        return len(self._splits) - 1

    def nrows(self, out_type=None, name=None):
        return Tensor(np.asarray(self.nrows_static(), dtypes.as_dtype(out_type or dtypes.int64)._np))

    def _lengths(self):
        return np.diff(self._splits)

    def row_lengths(self, axis=1, name=None):
        """The lengths of the rows along ``axis`` (1: this tensor's rows; deeper: ragged, per row)."""
        rank = self.shape.rank
        axis = axis + rank if axis < 0 else axis
        if axis == 1:
            return Tensor(self._lengths())
        if axis > 1 and isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        raise ValueError(f"row_lengths: axis {axis} is not a ragged axis of a tensor of shape {self.shape}")

    def row_starts(self, name=None):
        return Tensor(self._splits[:-1])

    def row_limits(self, name=None):
        return Tensor(self._splits[1:])

    def _rowids(self):
        return np.repeat(np.arange(self.nrows_static(), dtype=np.int64), self._lengths())

    def value_rowids(self, name=None):
        return Tensor(self._rowids())

    def with_values(self, new_values):
        result = RaggedTensor.from_row_splits(new_values, self._splits, validate=True)
        result._uniform = self._uniform
        return result

    def with_row_splits_dtype(self, dtype):
        return self

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # --------------------------------------------------------------- conversions ---
    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor, rows padded with ``default_value`` (zero by default) to the longest row.

        Built with ops (a scatter of the values), so gradients reach the values."""
        values = self._values.to_tensor(default_value) if isinstance(self._values, RaggedTensor) else self._values
        lengths = self._lengths()
        n = self.nrows_static()
        width = int(lengths.max()) if n and lengths.size else 0
        inner = tuple(values._value.shape[1:])
        positions = self._rowids() * width + (np.arange(len(self._rowids())) - self._splits[:-1][self._rowids()])
        dense = array_ops.unsorted_segment_sum(values, Tensor(positions), n * width)
        if default_value is not None:
            fill = np.ones(n * width, bool)
            fill[positions] = False
            default = to_tensor(default_value, dtype=values.dtype)
            mask = Tensor(fill.reshape((n * width,) + (1,) * len(inner)))
            dense = array_ops.where(mask, array_ops.broadcast_to(default, (n * width,) + inner), dense)
        dense = array_ops.reshape(dense, (n, width) + inner)
        if shape is not None:
            dense = _fit_to_shape(dense, shape, default_value)
        return dense

    def to_list(self):
        values = self._values.to_list() if isinstance(self._values, RaggedTensor) else self._values._value.tolist()
        return [values[a:b] for a, b in zip(self._splits[:-1], self._splits[1:])]

    def numpy(self):
        """An object array of the rows (numpy arrays), as TensorFlow's eager RaggedTensor.numpy()."""
        rows = [self[i] for i in range(self.nrows_static())]
        out = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            out[i] = row.numpy()
        return out

    # ------------------------------------------------------------------- indexing ---
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if not key:
            return self
        if any(k is Ellipsis or k is None for k in key):
            raise NotImplementedError("RaggedTensor indexing with Ellipsis or tf.newaxis is not supported by "
                                      "tapeflow")
        head, rest = key[0], key[1:]
        if isinstance(head, slice):
            rows = self._slice_rows(head)
            return rows._index_inner(rest) if rest else rows
        index = int(head)
        n = self.nrows_static()
        if not -n <= index < n:
            raise InvalidArgumentError(f"RaggedTensor index {index} is out of bounds for {n} rows")
        index %= n
        row = self._values[int(self._splits[index]):int(self._splits[index + 1])]
        return row[rest] if rest else row

    def _slice_rows(self, key):
        if key.step not in (None, 1):
            return self._gather_rows(np.arange(self.nrows_static())[key])
        start, stop, _ = key.indices(self.nrows_static())
        stop = max(start, stop)
        lo, hi = int(self._splits[start]), int(self._splits[stop])
        result = RaggedTensor.from_row_splits(self._values[lo:hi], self._splits[start:stop + 1] - lo)
        result._uniform = self._uniform
        return result

    def _index_inner(self, key):
        """``self[:, key...]``: ``key[0]`` applies within every row, the rest to the values' dimensions."""
        head, rest = key[0], key[1:]
        if self._uniform is not None and not isinstance(head, slice):   # a uniform dimension takes an index
            positions = self._splits[:-1] + _uniform_index(int(head), self._uniform)
            picked = _take(self._values, positions)
            return picked[(slice(None),) + rest] if rest else picked
        if not isinstance(head, slice):
            raise ValueError("Cannot index into an inner ragged dimension.")
        if head.step not in (None, 1):
            raise NotImplementedError("RaggedTensor indexing: slices with a step inside the rows are not "
                                      "supported by tapeflow")
        picks, lengths = [], []
        for lo, hi in zip(self._splits[:-1], self._splits[1:]):
            start, stop, _ = head.indices(int(hi - lo))
            stop = max(start, stop)
            picks.append(np.arange(lo + start, lo + stop, dtype=np.int64))
            lengths.append(stop - start)
        values = _take(self._values, np.concatenate(picks) if picks else np.zeros(0, np.int64))
        if rest:
            values = values[(slice(None),) + rest]
        return RaggedTensor.from_row_lengths(values, lengths)

    def _gather_rows(self, rows):
        """The rows at the given positions, in that order (a RaggedTensor of as many rows)."""
        rows = np.asarray(rows, np.int64)
        lengths = self._lengths()[rows]
        picks = [np.arange(self._splits[r], self._splits[r + 1], dtype=np.int64) for r in rows]
        values = _take(self._values, np.concatenate(picks) if picks else np.zeros(0, np.int64))
        return RaggedTensor.from_row_lengths(values, lengths)

    # ------------------------------------------------------------------ arithmetic ---
    def _map(self, fn, other=None):
        if other is None:
            return self.with_flat_values(fn(self.flat_values))
        from .dispatch import as_flat       # the same broadcasting rules as tf.add etc.
        return self.with_flat_values(fn(self.flat_values, as_flat(other, self)))

    def __add__(self, other):
        return self._map(math_ops.add, other)

    def __radd__(self, other):
        return self._map(lambda a, b: math_ops.add(b, a), other)

    def __sub__(self, other):
        return self._map(math_ops.subtract, other)

    def __rsub__(self, other):
        return self._map(lambda a, b: math_ops.subtract(b, a), other)

    def __mul__(self, other):
        return self._map(math_ops.multiply, other)

    def __rmul__(self, other):
        return self._map(lambda a, b: math_ops.multiply(b, a), other)

    def __truediv__(self, other):
        return self._map(math_ops.truediv, other)

    def __pow__(self, other):
        return self._map(math_ops.pow, other)

    def __rtruediv__(self, other):
        return self._map(lambda a, b: math_ops.truediv(b, a), other)

    def __floordiv__(self, other):
        return self._map(math_ops.floordiv, other)

    def __mod__(self, other):
        return self._map(math_ops.floormod, other)

    def __rpow__(self, other):
        return self._map(lambda a, b: math_ops.pow(b, a), other)

    def __gt__(self, other):
        return self._map(math_ops.greater, other)

    def __ge__(self, other):
        return self._map(math_ops.greater_equal, other)

    def __lt__(self, other):
        return self._map(math_ops.less, other)

    def __le__(self, other):
        return self._map(math_ops.less_equal, other)

    def __and__(self, other):
        return self._map(math_ops.logical_and, other)

    def __or__(self, other):
        return self._map(math_ops.logical_or, other)

    def __invert__(self):
        return self._map(math_ops.logical_not)

    def __abs__(self):
        return self._map(math_ops.abs)

    def __neg__(self):
        return self._map(math_ops.negative)

    def __eq__(self, other):
        """Elementwise, as TensorFlow's RaggedTensor ``==`` (``None`` compares unequal)."""
        return False if other is None else self._map(math_ops.equal, other)

    def __ne__(self, other):
        return True if other is None else self._map(math_ops.not_equal, other)

    __hash__ = object.__hash__      # identity, so RaggedTensors can still key dicts (as tapes do)

    def __bool__(self):
        raise TypeError("The truth value of a RaggedTensor is ambiguous")

    def __iter__(self):
        return (self[i] for i in range(self.nrows_static()))

    def __array__(self, dtype=None, copy=None):
        # Without this numpy would make a 0-d object array, and a conversion a string tensor of the repr.
        raise TypeError("A RaggedTensor cannot be converted to a dense tensor implicitly; use .to_tensor(), "
                        ".to_list() or .flat_values")

    # --------------------------------------------------------------- reductions ---
    def _reduce_composite(self, op_type, axis, keepdims):
        """tf.reduce_sum / reduce_mean / reduce_max / reduce_min over a RaggedTensor of ragged rank 1."""
        from . import ragged_math
        return ragged_math.reduce(self, op_type, axis, keepdims)

    # ------------------------------------------------------------------- printing ---
    def __repr__(self):
        """As TensorFlow prints it: the rows laid out as numpy lays out an object array of them (rows of one
        length make a further dimension, long lines wrap at 75), floats at their dtype's shortest repr."""
        flat = self.flat_values._value
        item = (lambda v: str(flat.dtype.type(v))) if flat.dtype.kind in "fiub" else repr
        if self.ragged_rank == 1 and flat.ndim > 1:     # uniform inner dimensions: each row an array
            rows = [self[i]._value for i in range(self.nrows_static())]
            if len({r.shape for r in rows}) == 1:       # rows of one shape print as one array
                grid = np.stack(rows).astype(object)
            else:
                grid = np.empty(len(rows), object)
                for i, row in enumerate(rows):
                    grid[i] = row
        else:
            rows = self.to_list()
            grid = np.array(rows, dtype=object) if rows else np.empty(0, object)
            if grid.size == 0 and rows:         # numpy made an empty dimension of the empty rows
                grid = np.empty(len(rows), object)
                grid[:] = rows
        text = np.array2string(grid, separator=", ", threshold=np.iinfo(np.int32).max,
                               formatter={"all": lambda v: _format_nested(v, item)})
        return f"<tf.RaggedTensor {text}>"

    __str__ = __repr__


def _fit_to_shape(dense, shape, default_value):
    """Crops or pads a dense result to ``shape`` (None entries keep the size)."""
    target = [d for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
    current = dense._value.shape
    key = tuple(slice(0, t) if t is not None else slice(None) for t in target)
    dense = dense[key]
    pads = [[0, max(0, (t if t is not None else c) - min(c, t if t is not None else c))]
            for t, c in zip(target, current)]
    if any(p[1] for p in pads):
        dense = array_ops.pad(dense, pads, constant_values=0 if default_value is None else default_value)
    return dense


def _merge_dense(t, outer, inner):
    shape = t._value.shape
    return array_ops.reshape(t, shape[:outer] + (int(np.prod(shape[outer:inner + 1])),) + shape[inner + 1:])


def _merge_leading(values, inner):
    """``values`` (Tensor or RaggedTensor) with dimensions 0..inner merged."""
    if isinstance(values, RaggedTensor):
        return values.merge_dims(0, inner)
    return _merge_dense(values, 0, inner)


def _row_offsets(values, inner):
    """Where each row of ``values`` starts once its dimensions 0..inner are merged (length nrows + 1)."""
    if inner == 0:
        return np.arange(_nrows_of(values) + 1, dtype=np.int64)
    if isinstance(values, RaggedTensor):
        return _row_offsets(values._values, inner - 1)[values._splits]
    shape = values._value.shape
    return np.arange(shape[0] + 1, dtype=np.int64) * int(np.prod(shape[1:inner + 1]))


def _uniform_index(index, length):
    if not -length <= index < length:
        raise InvalidArgumentError(f"index {index} is out of bounds for a dimension of size {length}")
    return index % length


def _take(values, positions):
    """The rows of ``values`` (Tensor or RaggedTensor) at ``positions`` (a gather, so gradients flow)."""
    if isinstance(values, RaggedTensor):
        return values._gather_rows(positions)
    return array_ops.gather(values, Tensor(np.asarray(positions, np.int64)))


def _format_nested(value, item):
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ", threshold=np.iinfo(np.int32).max, formatter={"all": item})
    if isinstance(value, list):
        return "[" + ", ".join(_format_nested(v, item) for v in value) + "]"
    return item(value)
