"""Keeps freed array memory in the process for reuse (glibc only).

An eager step allocates and frees the same large arrays over and over. glibc
serves blocks over its dynamic mmap threshold with fresh mmaps and hands the
free top of its heap back to the kernel once it exceeds twice that threshold,
so a step whose temporaries are a few hundred KiB pays a page fault per 4 KiB
page it touches again: about a third of the time of a stacked jacobian
backward pass on this kind of machine. TensorFlow and PyTorch avoid it with
caching allocators. tapeflow asks glibc to serve blocks up to 32 MiB from its
heap and to give memory back only when more than 128 MiB at the top of the
heap is free. Like any caching allocator this keeps freed memory resident:
memory below a block still in use cannot be returned at all.

Not applied when ``TAPEFLOW_KEEP_FREED_MEMORY`` is 0/false/no/off, or when the
user configures malloc already (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_`` or ``GLIBC_TUNABLES``).
"""
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20     # glibc's largest allowed value on 64-bit
TRIM_THRESHOLD = 128 << 20
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def keep_freed_memory():
    """Tunes glibc malloc as described above; returns whether it applied."""
    if os.environ.get("TAPEFLOW_KEEP_FREED_MEMORY", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if not sys.platform.startswith("linux") or any(name in os.environ for name in _USER_SETTINGS):
        return False
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):  # no ctypes, or not glibc (e.g. musl)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
