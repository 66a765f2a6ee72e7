"""Linux's ``renameat2``: swap two paths in one atomic step, or rename without replacing.

``exchange(a, b)`` swaps the entries ``a`` and ``b`` (both must exist; either
may be a non-empty directory): no observer ever finds ``b`` missing.
``rename_noreplace(a, b)`` renames ``a`` to ``b`` and raises
``FileExistsError`` when ``b`` exists, whatever it is. Where the kernel or
the file system lacks them (NFS, non-Linux systems, glibc older than 2.28)
both raise ``ExchangeUnsupported``.
"""
import errno
import os

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}
_renameat2 = []   # [function or None], looked up once, on first use


class ExchangeUnsupported(OSError):
    pass


def _function():
    if not _renameat2:
        function = None
        try:
            import ctypes
            function = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
            if function is not None:
                function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                function.restype = ctypes.c_int
        except (ImportError, OSError):
            function = None
        _renameat2.append(function)
    return _renameat2[0]


def _renameat2_call(source, destination, flags):
    function = _function()
    if function is None:
        raise ExchangeUnsupported(errno.ENOSYS, "renameat2 is not available on this system")
    import ctypes
    if function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), flags) == 0:
        return
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        raise ExchangeUnsupported(code, f"renameat2 flags {flags} are not supported here", destination)
    raise OSError(code, os.strerror(code), source, None, destination)


def exchange(a, b):
    _renameat2_call(a, b, _RENAME_EXCHANGE)


def rename_noreplace(source, destination):
    _renameat2_call(source, destination, _RENAME_NOREPLACE)
