"""Keeps freed array memory in the process for reuse (glibc only).

An eager step allocates and frees the same large arrays over and over. glibc
serves blocks over its dynamic mmap threshold with fresh mmaps and hands the
free top of its heap back to the kernel, so every step pays a page fault per
4 KiB page it touches again: about half the time of a stacked jacobian
backward pass on this kind of machine. TensorFlow and PyTorch avoid it with
caching allocators; tapeflow asks glibc to keep blocks up to 32 MiB on the heap
and to keep up to 128 MiB of free heap. Set ``TAPEFLOW_KEEP_FREED_MEMORY=0``
before importing tapeflow to leave malloc alone.
"""
import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20     # glibc's largest allowed value on 64-bit
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory():
    """Tunes glibc malloc as described above; returns whether it applied."""
    if os.environ.get("TAPEFLOW_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
