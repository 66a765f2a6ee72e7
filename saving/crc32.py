"""CRC-32 (zip's checksum) of a file assembled from pieces whose checksums are known.

``combine(crc_a, crc_b, len_b)`` is the CRC-32 of ``a + b`` (zlib's
``crc32_combine``, which Python does not expose): appending ``len_b`` bytes
is a linear map over GF(2) on the 32-bit CRC state, applied as the product
of the precomputed maps for the powers of two in ``len_b``.

``Checksums`` computes the CRC-32 of large arrays on worker threads
(``zlib.crc32`` releases the GIL), while the caller goes on writing them.
"""
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

_POLY = 0xEDB88320
_ZEROS = []   # _ZEROS[k]: the map "append 2**k zero bytes", as 32 column vectors


def _times(matrix, vector):
    total, i = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector >>= 1
        i += 1
    return total


def _square(matrix):
    return [_times(matrix, column) for column in matrix]


def _zero_maps(count):
    if not _ZEROS:
        one_bit = [_POLY] + [1 << n for n in range(31)]
        two_bits = _square(one_bit)
        four_bits = _square(two_bits)
        _ZEROS.append(_square(four_bits))        # one byte
    while len(_ZEROS) < count:
        _ZEROS.append(_square(_ZEROS[-1]))
    return _ZEROS


def combine(crc_a, crc_b, len_b):
    if len_b <= 0:
        return crc_a
    maps = _zero_maps(len_b.bit_length())
    k = 0
    while len_b:
        if len_b & 1:
            crc_a = _times(maps[k], crc_a)
        len_b >>= 1
        k += 1
    return crc_a ^ crc_b


def of_file(fh, start, length, crc=0, chunk=1 << 24):
    """CRC-32 of ``length`` bytes of ``fh`` from ``start``, continuing from ``crc``."""
    return of_file_descriptor(fh.fileno(), start, length, crc, chunk)


def of_file_descriptor(fd, start, length, crc=0, chunk=1 << 24):
    """CRC-32 of ``length`` bytes of the open file descriptor ``fd`` from ``start``, continuing from ``crc``."""
    if length <= 0:
        return crc
    buf = bytearray(min(chunk, length))
    view = memoryview(buf)
    position, remaining = start, length
    while remaining:
        n = os.preadv(fd, [view[:min(chunk, remaining)]], position)
        if not n:
            raise OSError(f"unexpected end of file at byte {position} while computing a CRC-32")
        crc = zlib.crc32(view[:n], crc)
        position += n
        remaining -= n
    return crc


class Checksums:
    """CRC-32s of arrays, computed on worker threads; ``pieces()`` gives them back by key."""

    MIN_BYTES = 1 << 16   # smaller arrays are cheaper to read back than to schedule

    def __init__(self, workers=None):
        self._pool = ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1))
        self._jobs = {}

    def add(self, key, array):
        """Starts the CRC-32 of ``array``'s bytes (C-contiguous arrays only); False when not taken."""
        if array.nbytes < self.MIN_BYTES or not array.flags.c_contiguous:
            return False
        self._jobs[key] = (array.nbytes, self._pool.submit(zlib.crc32, memoryview(array.reshape(-1)).cast("B")))
        return True

    def keys(self):
        return list(self._jobs)

    def result(self, key):
        length, future = self._jobs[key]
        return length, future.result()

    def close(self):
        self._pool.shutdown(wait=True)
