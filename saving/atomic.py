"""Atomic, durable saves: build the new file (or directory) beside the target, then swap it into place.

At every instant the path holds either the complete previous save or the
complete new one, whatever kills the process; after the save returns, a
power cut does not lose it.

* A file: written to a temporary sibling, given the mode of the file it
  replaces, fsynced, renamed over the target (``rename`` is atomic), and
  the directory is fsynced so that the rename itself is on disk.
* A directory (SavedModel, unzipped ``.keras``): written to a temporary
  sibling directory, every file and directory in it fsynced, then swapped
  with the target in one ``renameat2(RENAME_EXCHANGE)`` (``rename_exchange``);
  the temporary name then holds the replaced directory, which is removed.
  The path stays a plain directory, so loaders, ``cp -r``, tar, Keras and
  older tapeflow all see an ordinary directory. Where the file system cannot
  exchange (NFS, non-Linux systems) the old directory is renamed away and
  the new one in: only there can a crash between the two renames leave the
  path missing (the previous model is then in the temporary directory).
* A symlinked path is resolved: the link's target is replaced, the link kept.
* Temporaries are named after the target, the host and the PID
  (``temp_names``); each save first removes those left by dead processes.
"""
import contextlib
import errno
import os

from .rename_exchange import ExchangeUnsupported, exchange, rename_noreplace
from .temp_names import remove, sweep_stale, temp_path

_ATTEMPTS = 8
_IGNORED_DIRECTORY_FSYNC = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES, errno.EISDIR}


def fsync_path(path):
    """fsync of a file or a directory, by path. File systems that cannot fsync a directory are skipped."""
    is_directory = os.path.isdir(path)
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if is_directory else 0))
    except OSError as e:
        if is_directory and e.errno in _IGNORED_DIRECTORY_FSYNC:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as e:
        if not (is_directory and e.errno in _IGNORED_DIRECTORY_FSYNC):
            raise
    finally:
        os.close(fd)


def fsync_tree(root):
    for directory, _, files in os.walk(root):
        for name in files:
            fsync_path(os.path.join(directory, name))
        fsync_path(directory)


def make_directories(directory):
    """``os.makedirs(directory, exist_ok=True)``, with each directory it creates fsynced into its parent."""
    missing, current = [], os.path.abspath(directory)
    while not os.path.isdir(current) and os.path.dirname(current) != current:
        missing.append(current)
        current = os.path.dirname(current)
    os.makedirs(directory, exist_ok=True)
    for created in reversed(missing):
        fsync_path(os.path.dirname(created))


def _mode(target):
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        return None


def _target(path, kind):
    """The resolved path to replace (through any symlinks), after checking its directory exists."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"Cannot save to {path!r}: directory {parent!r} does not exist")
    if kind == "file" and os.path.isdir(target):
        raise IsADirectoryError(f"Cannot save a file to {path!r}: it is a directory")
    if kind == "directory" and os.path.exists(target) and not os.path.isdir(target):
        raise FileExistsError(f"Cannot save a directory to {path!r}: a file of that name exists")
    return target


@contextlib.contextmanager
def atomic_file(path):
    """Yields a temporary path (an empty file) in the target's directory; on success it replaces ``path``."""
    target = _target(path, "file")
    sweep_stale(target)
    mode = _mode(target)
    tmp = temp_path(target)
    # private while written when it replaces a file; a new file gets the umask's mode, as open() gives
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666))
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, mode)
        fsync_path(tmp)
        os.replace(tmp, target)
        fsync_path(os.path.dirname(target))
    finally:
        if os.path.lexists(tmp):
            remove(tmp)


@contextlib.contextmanager
def atomic_directory(path):
    """Yields a temporary directory beside ``path``; on success it takes the place of ``path``."""
    target = _target(path, "directory")
    sweep_stale(target)
    mode = _mode(target)
    tmp = temp_path(target)
    os.mkdir(tmp, 0o700 if mode is not None else 0o777)
    replaced = None
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, mode)
        fsync_tree(tmp)
        replaced = _install_directory(tmp, target, os.fspath(path))
        fsync_path(os.path.dirname(target))
    finally:
        for leftover in (tmp, replaced):   # after an exchange, tmp holds the replaced directory
            if leftover is not None and os.path.lexists(leftover):
                remove(leftover)


class _Raced(Exception):
    """Another save changed the target between two steps of this one: start the swap again."""


def _install_directory(tmp, target, shown):
    """Puts the complete directory ``tmp`` at ``target``; returns a path left to remove, or None."""
    for _ in range(_ATTEMPTS):
        if os.path.islink(target) or (os.path.lexists(target) and not os.path.isdir(target)):
            raise FileExistsError(f"Cannot save a directory to {shown!r}: another process put a file or a "
                                  "symlink there while it was being saved")
        try:
            try:
                rename_noreplace(tmp, target)
                return None
            except FileExistsError:
                pass
            try:
                exchange(tmp, target)
                return None
            except FileNotFoundError:
                if os.path.lexists(tmp):   # the target vanished between the two calls
                    continue
                raise
        except ExchangeUnsupported:
            try:
                return _install_by_two_renames(tmp, target)
            except _Raced:
                continue
    raise OSError(errno.EBUSY, f"Cannot save to {shown!r}: other processes replaced it {_ATTEMPTS} times "
                  "while this save tried to put its directory in place; nothing was changed by this save")


def _install_by_two_renames(tmp, target):
    """The fallback without an atomic exchange; returns the renamed-away previous directory, to remove."""
    try:
        os.rename(tmp, target)
        return None
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    replaced = temp_path(target)
    try:
        os.rename(target, replaced)
    except FileNotFoundError:
        raise _Raced() from None
    try:
        os.rename(tmp, target)   # the path is missing until this returns
    except OSError as e:
        if e.errno in (errno.ENOTEMPTY, errno.EEXIST):   # another save got in first: what we moved is stale
            remove(replaced)
            raise _Raced() from None
        with contextlib.suppress(OSError):
            os.rename(replaced, target)
        raise
    return replaced
