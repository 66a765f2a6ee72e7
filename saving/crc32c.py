"""CRC-32C (Castagnoli), the checksum of TensorFlow's checkpoint bundles and of LevelDB tables.

Table-driven, eight bytes per step ("slicing-by-8": table k maps a byte to its CRC followed by k zero
bytes, so the eight lookups of a step are independent) in a numba kernel compiled on first use.
``masked`` is LevelDB's masking of a stored CRC (rotate right by 15 bits, add a constant), which keeps a
CRC of data that itself holds CRCs from looking like one.
"""
import numpy as np
from numba import njit

_POLY = 0x82F63B78   # the Castagnoli polynomial, bit-reversed
_MASK_DELTA = 0xA282EAD8


def _make_tables():
    tables = np.empty((8, 256), np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        tables[0, n] = c
    for k in range(1, 8):
        previous = tables[k - 1]
        tables[k] = (previous >> 8) ^ tables[0][previous & 0xFF]
    return tables


_TABLES = _make_tables()


@njit(cache=True)
def _update(crc, data, t):
    crc = np.uint32(crc) ^ np.uint32(0xFFFFFFFF)
    n = data.shape[0]
    i = 0
    while i + 8 <= n:
        c = crc ^ (np.uint32(data[i]) | (np.uint32(data[i + 1]) << np.uint32(8))
                   | (np.uint32(data[i + 2]) << np.uint32(16)) | (np.uint32(data[i + 3]) << np.uint32(24)))
        crc = (t[7, c & np.uint32(0xFF)] ^ t[6, (c >> np.uint32(8)) & np.uint32(0xFF)]
               ^ t[5, (c >> np.uint32(16)) & np.uint32(0xFF)] ^ t[4, c >> np.uint32(24)]
               ^ t[3, data[i + 4]] ^ t[2, data[i + 5]] ^ t[1, data[i + 6]] ^ t[0, data[i + 7]])
        i += 8
    while i < n:
        crc = t[0, (crc ^ np.uint32(data[i])) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
        i += 1
    return crc ^ np.uint32(0xFFFFFFFF)


def crc32c(data, crc=0):
    """The CRC-32C of ``data`` (bytes-like or a numpy array's bytes), continuing from ``crc``."""
    array = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    return int(_update(np.uint32(crc), array, _TABLES))


def masked(crc):
    """LevelDB's masked form of a CRC, as stored in its blocks and TensorFlow's bundles."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF
