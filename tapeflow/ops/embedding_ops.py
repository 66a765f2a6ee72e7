"""tf.nn.embedding_lookup: rows of an embedding table (or of a table split into shards) gathered by id."""
from ..framework.errors import InvalidArgumentError
from . import array_ops, math_ops
from .common import is_tensor_like, to_tensor


def _table(params):
    """One table from ``params``: a tensor, or a list of shards holding consecutive blocks of ids.

    TensorFlow 2 splits ids over shards with the "div" strategy: with n ids over p shards, the first
    n % p shards hold n // p + 1 rows and the others n // p, in order. Shards sized so are exactly the
    blocks of their concatenation; other sizes are refused rather than looked up differently."""
    if is_tensor_like(params) or not isinstance(params, (list, tuple)):
        return to_tensor(params)
    shards = [to_tensor(p) for p in params]
    if not shards:
        raise InvalidArgumentError("embedding_lookup: params is an empty list of shards")
    if len(shards) == 1:
        return shards[0]
    sizes = [s._value.shape[0] if s._value.ndim else None for s in shards]
    if None in sizes:
        raise InvalidArgumentError("embedding_lookup: every shard of params must have at least one dimension")
    total, count = sum(sizes), len(sizes)
    expected = [total // count + (1 if i < total % count else 0) for i in range(count)]
    if sizes != expected:
        raise InvalidArgumentError(f"embedding_lookup: shards of {sizes} rows do not split {total} ids the way "
                                   f"TensorFlow's 'div' strategy does ({expected} rows)")
    return array_ops.concat(shards, 0)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """``params[ids]`` along axis 0 (tf.nn.embedding_lookup); with ``max_norm`` each looked-up row whose
    l2 norm is larger is scaled down to it. Ragged ids give a ragged result."""
    table = _table(params)
    if hasattr(ids, "flat_values") and hasattr(ids, "with_flat_values"):    # a RaggedTensor
        return ids.with_flat_values(embedding_lookup(table, ids.flat_values, max_norm))
    ids = to_tensor(ids)
    if ids._value.dtype.kind not in "iu":
        raise InvalidArgumentError(f"embedding_lookup: ids must be integers, got {ids.dtype.name}")
    if table._value.ndim == 0:
        raise InvalidArgumentError("embedding_lookup: params must have at least one dimension, got a scalar")
    rows = array_ops.gather(table, ids)
    if max_norm is None:
        return rows
    row_rank = table._value.ndim - 1
    axes = list(range(rows._value.ndim - row_rank, rows._value.ndim))
    return math_ops.clip_by_norm(rows, max_norm, axes=axes)
