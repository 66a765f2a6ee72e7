"""Atomic writes: build the new file (or directory) beside the target, then rename it into place.

A crash or an exception while saving leaves the previous file untouched.
"""
import contextlib
import os
import shutil
import uuid


def _sibling(path, tag):
    directory, name = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{name}.{tag}-{uuid.uuid4().hex[:12]}")


@contextlib.contextmanager
def atomic_file(path):
    """Yields a temporary path in the target's directory; on success it replaces ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Cannot save to {path!r}: directory {directory!r} does not exist")
    tmp = _sibling(path, "tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextlib.contextmanager
def atomic_directory(path):
    """Yields a temporary directory beside ``path``; on success it takes the place of ``path``."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"Cannot save to {path!r}: directory {parent!r} does not exist")
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(f"Cannot save a directory to {path!r}: a file of that name exists")
    tmp = _sibling(path, "tmp")
    os.makedirs(tmp)
    try:
        yield tmp
        if os.path.isdir(path):
            old = _sibling(path, "old")
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
