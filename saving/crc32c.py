"""CRC-32C (Castagnoli), the checksum of TensorFlow's checkpoint bundles and of LevelDB tables.

Table-driven (one byte per step) in a numba kernel, compiled on first use. ``masked`` is LevelDB's
masking of a stored CRC (rotate right by 15 bits, add a constant), which keeps a CRC of data that itself
holds CRCs from looking like one.
"""
import numpy as np
from numba import njit

_POLY = 0x82F63B78   # the Castagnoli polynomial, bit-reversed
_MASK_DELTA = 0xA282EAD8


def _make_table():
    table = np.empty(256, np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table[n] = c
    return table


_TABLE = _make_table()


@njit(cache=True)
def _update(crc, data, table):
    crc = np.uint32(crc) ^ np.uint32(0xFFFFFFFF)
    for byte in data:
        crc = table[(crc ^ np.uint32(byte)) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
    return crc ^ np.uint32(0xFFFFFFFF)


def crc32c(data, crc=0):
    """The CRC-32C of ``data`` (bytes-like), continuing from ``crc``."""
    array = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    return int(_update(np.uint32(crc), array, _TABLE))


def masked(crc):
    """LevelDB's masked form of a CRC, as stored in its blocks and TensorFlow's bundles."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF
