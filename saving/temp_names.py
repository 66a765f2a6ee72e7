"""Names of a save's temporary files, and the sweep that removes those left by dead processes.

A save to ``dir/name`` builds ``dir/.name.tmp-<host>-<pid>-<random>`` (a file,
or a directory) and renames it into place. A process killed while saving
leaves that temporary behind, full size; the next save to the same path
removes every such temporary whose process is gone. ``<host>`` keeps a
save on one machine from judging the PIDs of another machine sharing the
directory (NFS): temporaries of other hosts are never touched. A temporary
of a live process, or of this process (another thread may be saving), is
kept; a dead process's PID reused by a new process only delays the sweep.
"""
import os
import re
import shutil
import socket
import zlib

_MAX_STEM_BYTES = 180   # keeps the temporary's name under NAME_MAX (255 bytes)


def _stem(name):
    while len(os.fsencode(name)) > _MAX_STEM_BYTES:
        name = name[:-1]
    return name


def _host_tag():
    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def temp_path(target):
    """A fresh temporary path beside ``target`` (an absolute, resolved path)."""
    directory, name = os.path.split(target)
    return os.path.join(directory, f".{_stem(name)}.tmp-{_host_tag()}-{os.getpid()}-{os.urandom(6).hex()}")


def _pattern(name):
    # an optional suffix: helpers may park a second file at ``<temporary>.h5`` (zip_io)
    return re.compile(rf"\.{re.escape(_stem(name))}\.tmp-([0-9a-f]{{8}})-([0-9]+)-[0-9a-f]{{12}}(\.[A-Za-z0-9]+)?")


def process_is_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # it exists, under another user
        return True
    try:   # a killed process its parent has not reaped yet is dead too
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def remove(path):
    """Removes a file, a symlink or a directory tree; what is already gone is fine."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def sweep_stale(target):
    """Removes the temporaries of saves to ``target`` left by dead processes of this host."""
    directory, name = os.path.split(target)
    pattern, host, me = _pattern(name), _host_tag(), os.getpid()
    try:
        entries = [entry.name for entry in os.scandir(directory)]
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match is None or match.group(1) != host:
            continue
        pid = int(match.group(2))
        if pid != me and not process_is_alive(pid):
            try:
                remove(os.path.join(directory, entry))
            except OSError:   # e.g. removed concurrently by another save's sweep
                pass
