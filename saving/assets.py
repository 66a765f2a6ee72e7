"""Assets of a ``.keras`` file: files an object keeps beside its variables (a lookup layer's vocabulary.txt).

Keras stores them as members ``assets/<object path>/<file name>``, the object
path being the one of ``object_walk``. Saving gives every object of the walk
that has ``save_assets(dir_path)`` a fresh empty directory and stores the
regular files it writes there. Loading gives every object that has
``load_assets(dir_path)`` and members in the file a fresh directory holding
exactly those members (plain file names only, sizes limited, no links), then
calls it. A failure is a FileContentError naming the file and the members.
"""
import os
import posixpath
import tempfile

from .errors import ExternalReferenceError, FileContentError, OversizedContentError
from .object_walk import walk
from .state_loading import describe

ASSETS = "assets"
MAX_ASSET_BYTES = 256 << 20   # all assets of one file together


def _prefix(path):
    return f"{ASSETS}/{path}/" if path else f"{ASSETS}/"


def asset_members(model):
    """[(member name, bytes)] of every object's assets, in walk order."""
    members = []
    for path, obj in walk(model):
        if not callable(getattr(obj, "save_assets", None)):
            continue
        with tempfile.TemporaryDirectory(prefix="tapeflow-assets-") as directory:
            obj.save_assets(directory)
            for name in sorted(os.listdir(directory)):
                file_path = os.path.join(directory, name)
                if os.path.isfile(file_path) and not os.path.islink(file_path):
                    with open(file_path, "rb") as f:
                        members.append((_prefix(path) + name, f.read()))
    return members


def write_members_to_directory(directory, members):
    """Writes ``members`` (names with ``/``) under ``directory`` (the unzipped format)."""
    for name, data in members:
        target = os.path.join(directory, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)


class ArchiveMembers:
    """The asset members of an open ``zip_io.Archive``."""

    def __init__(self, archive):
        self._archive = archive

    def names(self):
        return [n for n in self._archive.names() if n.startswith(ASSETS + "/")]

    def read(self, name, max_size):
        return self._archive.read(name, max_size=max_size)


class DirectoryMembers:
    """The asset files of an unzipped ``.keras`` directory; a link anywhere under it is refused."""

    def __init__(self, directory):
        self._directory = directory

    def names(self):
        root = os.path.join(self._directory, ASSETS)
        if os.path.islink(root):
            raise ExternalReferenceError(f"'{self._directory}': {ASSETS} is a symbolic link; the files of a model "
                                         "directory must be the files themselves.")
        found = []
        for current, dirs, files in os.walk(root, followlinks=False):
            for name in dirs + files:
                full = os.path.join(current, name)
                if os.path.islink(full):
                    member = os.path.relpath(full, self._directory).replace(os.sep, "/")
                    raise ExternalReferenceError(f"'{self._directory}': {member} is a symbolic link; the files of a "
                                                 "model directory must be the files themselves.")
            found.extend(os.path.relpath(os.path.join(current, f), self._directory).replace(os.sep, "/")
                         for f in files)
        return sorted(found)

    def read(self, name, max_size):
        fd = os.open(os.path.join(self._directory, *name.split("/")),
                     os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(max_size + 1)
        if len(data) > max_size:
            raise OversizedContentError(f"'{self._directory}': {name} is more than the {max_size} bytes allowed "
                                        "for assets.")
        return data


def load_assets(model, members, source):
    """Hands each object of ``model`` that loads assets its own members of ``members``."""
    names = members.names()
    budget = MAX_ASSET_BYTES
    for path, obj in walk(model):
        if not callable(getattr(obj, "load_assets", None)):
            continue
        prefix = _prefix(path)
        own = [n for n in names if n.startswith(prefix) and "/" not in n[len(prefix):] and n[len(prefix):]]
        if not own:
            continue
        with tempfile.TemporaryDirectory(prefix="tapeflow-assets-") as directory:
            for name in own:
                file_name = posixpath.basename(name)
                if file_name in (".", "..") or "\\" in file_name or "\0" in file_name:
                    raise FileContentError(f"'{source}': the asset member '{name}' has an invalid file name.")
                data = members.read(name, budget)
                budget -= len(data)
                with open(os.path.join(directory, file_name), "wb") as f:
                    f.write(data)
            try:
                obj.load_assets(directory)
            except Exception as e:
                raise FileContentError(f"Cannot load '{source}': the assets {own} of {describe(path, obj)} are not "
                                       f"valid: {e}") from e
