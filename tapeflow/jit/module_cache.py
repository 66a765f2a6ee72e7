"""Generated kernels live in importable files, so numba's ``cache=True`` can keep their machine code.

numba caches a function's compiled code on disk next to the source file it was
defined in, keyed by that file; code built from a string has no file and could not
be cached. So each generated module is written to the cache directory under the
name ``tapeflow_jit_<sha256 of its source>`` (written to a temporary file and renamed,
so a reader never sees half a file) and imported from there. The same graph traced
in another process produces the same source, hence the same file, and numba loads
the machine code instead of compiling it again.

The directory is ``$TAPEFLOW_JIT_CACHE``, else ``~/.cache/tapeflow/jit`` (a temporary
directory for the process when neither can be written).
"""
import hashlib
import importlib.util
import os
import sys
import tempfile

_loaded = {}


_fallback = []


def cache_directory():
    """The cache directory; a private temporary one (kernels then compile once per process) when the
    configured one cannot be created or written."""
    path = os.environ.get("TAPEFLOW_JIT_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tapeflow", "jit")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK | os.X_OK):
            return path
    except OSError:
        pass
    if not _fallback:
        _fallback.append(tempfile.mkdtemp(prefix="tapeflow_jit_"))
    return _fallback[0]


def module_name(source):
    return "tapeflow_jit_" + hashlib.sha256(source.encode()).hexdigest()[:32]


def load_module(source):
    """The module defined by ``source``, written to (or found in) the cache directory and imported."""
    name = module_name(source)
    module = _loaded.get(name)
    if module is not None:
        return module
    directory = cache_directory()
    path = os.path.join(directory, name + ".py")
    if not _holds(path, source):
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module      # numba's cache locates a function's module by name
    spec.loader.exec_module(module)
    _loaded[name] = module
    return module


def _holds(path, source):
    try:
        with open(path) as f:
            return f.read() == source
    except OSError:
        return False
