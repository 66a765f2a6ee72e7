"""get_file, as keras.utils.get_file, for files that are already on this machine.

The file is looked up in ``cache_dir/cache_subdir`` (``~/.keras/datasets`` by default) and,
when missing, copied there from ``origin`` if that is a local path or a ``file://`` URL.
tapeflow downloads nothing: an http(s) origin whose file is not cached yet is a clear
error saying where to put the file. Archives extract only inside their target
directory (no absolute paths, no ``..``, no links leaving it).
"""
import hashlib
import os
import shutil
import tarfile
import urllib.parse
import zipfile

_CHUNK = 1 << 20


def _local_path(origin):
    parsed = urllib.parse.urlparse(str(origin))
    if parsed.scheme == "file":
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme in ("", ) or (len(parsed.scheme) == 1 and os.name == "nt"):
        return str(origin)
    return None


def file_hash(path, algorithm="sha256"):
    digest = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_hash(path, expected, algorithm):
    if algorithm == "auto":
        algorithm = "sha256" if len(expected) == 64 else "md5"
    actual = file_hash(path, algorithm)
    if actual != expected:
        raise ValueError(f"get_file: the {algorithm} of '{path}' is {actual}, but {expected} was expected; the file "
                         "is damaged or not the one asked for.")


def _extract(path, directory):
    root = os.path.realpath(directory)

    def inside(name):
        target = os.path.realpath(os.path.join(root, name))
        return target == root or target.startswith(root + os.sep)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            bad = [n for n in archive.namelist() if not inside(n)]
            if bad:
                raise ValueError(f"get_file: the archive '{path}' holds {bad[0]!r}, which would land outside "
                                 f"'{directory}'; nothing was extracted.")
            archive.extractall(root)
        return True
    if tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            archive.extractall(root, filter="data")   # refuses absolute paths, '..' and links leaving root
        return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """The local path of ``fname``, copied into the cache from a local ``origin`` if it is not there."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if cache_dir is None:
        cache_dir = os.path.join(os.path.expanduser("~"), ".keras")
    datadir = os.path.join(cache_dir, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    fname = fname or os.path.basename(urllib.parse.urlparse(str(origin)).path)
    if not fname:
        raise ValueError(f"get_file: cannot infer a file name from origin={origin!r}; pass `fname`.")
    untar_path = os.path.join(datadir, fname)
    fpath = untar_path + ".tar.gz" if untar else untar_path     # (untar: the archive is <fname>.tar.gz)
    expected = file_hash or md5_hash
    if force_download or not os.path.exists(fpath):
        source = _local_path(origin)
        if source is None:
            raise OSError(f"get_file: tapeflow does not download files, and '{fpath}' is not there yet. Download "
                          f"{origin} yourself and put it at that path (or pass a local path or file:// URL as "
                          "origin).")
        if not os.path.isfile(source):
            raise FileNotFoundError(f"get_file: origin '{source}' is not a file.")
        partial = fpath + ".part"
        shutil.copyfile(source, partial)
        os.replace(partial, fpath)
    if expected:
        _check_hash(fpath, expected, hash_algorithm if file_hash else "md5")
    if untar or extract:   # into the cache directory; untar returns <fname>, extract the archive's path
        if not _extract(fpath, datadir):
            raise ValueError(f"get_file: '{fpath}' is neither a zip nor a tar archive, so it cannot be extracted.")
        return untar_path if untar else fpath
    return fpath
