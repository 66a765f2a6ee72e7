"""pad_sequences: lists of sequences to one padded array, as keras.utils.pad_sequences."""
import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """A ``(len(sequences), maxlen, ...)`` array: each sequence truncated to ``maxlen`` (dropping its start
    with ``truncating="pre"``, its end with "post") and padded with ``value`` (before it with
    ``padding="pre"``, after with "post")."""
    if padding not in ("pre", "post"):
        raise ValueError(f'`padding` must be "pre" or "post". Received: padding={padding}')
    if truncating not in ("pre", "post"):
        raise ValueError(f'`truncating` must be "pre" or "post". Received: truncating={truncating}')
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    arrays = [np.asarray(s) for s in sequences]
    lengths = [len(a) for a in arrays]
    maxlen = max(lengths, default=0) if maxlen is None else int(maxlen)
    sample_shape = next((a.shape[1:] for a in arrays if len(a)), ())
    if isinstance(value, str) and np.dtype(dtype).kind not in "OSU":
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\nYou should set "
                         "`dtype=object` for variable length strings.")
    out = np.full((len(arrays), maxlen) + sample_shape, value, dtype=dtype)
    for i, a in enumerate(arrays):
        if not len(a) or not maxlen:
            continue
        kept = a[-maxlen:] if truncating == "pre" else a[:maxlen]
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, maxlen - len(kept):] = kept
    return out
