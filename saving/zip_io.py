"""Stored (uncompressed) zip archives, the container of a ``.keras`` file.

Writing: the HDF5 member is written by h5py straight into the archive. The
file is created with a 512-byte HDF5 user block; the zip local header of the
member fills that block (its extra field pads it to 512 bytes, the alignment
record zipalign uses), so the member's data is exactly the HDF5 file and no
copy of the weights is made. The small members follow, then the central
directory, which lists the members in Keras's order (metadata.json,
config.json, model.weights.h5). Archives that would need zip64 (4 GiB) are
written through ``zipfile`` instead.

Reading: a member is checked before anything parses it -- its declared size
against the limit the caller gives (what the model can hold), its CRC-32
against the directory -- and then read in place by ``h5_reader`` (a stored
member: no copy) or inflated into memory up to that limit (a compressed one).
"""
import errno
import os
import struct
import time
import zipfile
import zlib

import h5py

from . import crc32
from .errors import ArchiveError, OversizedContentError
from .h5_reader import H5File

USER_BLOCK = 512
_LOCAL = struct.Struct("<4s5H3L2H")          # local file header, 30 bytes
_CENTRAL = struct.Struct("<4s6H3L5H2L")      # central directory header, 46 bytes
_END = struct.Struct("<4s4H2LH")             # end of central directory, 22 bytes
_ALIGN_EXTRA_ID = 0xD935                     # zipalign's alignment extra field
_VERSION = 20                                # 2.0: stored members, no zip64
_UNIX = 3
_EXTERNAL_ATTR = 0o600 << 16
_LIMIT = 0xFFFFFFFF - 1


def _dos_time(date_time):
    year, month, day, hour, minute, second = date_time
    return (hour << 11) | (minute << 5) | (second // 2), ((year - 1980) << 9) | (month << 5) | day


def _member_crc(fh, end, pieces):
    """CRC-32 of the bytes ``[USER_BLOCK, end)``: ``pieces`` [(offset, length, crc)] are known, the
    rest (HDF5 metadata) is read back."""
    crc, position = 0, USER_BLOCK
    for offset, length, piece_crc in sorted(pieces):
        if offset < position or offset + length > end:
            return crc32.of_file(fh, USER_BLOCK, end - USER_BLOCK)   # unexpected layout: read it all
        crc = crc32.of_file(fh, position, offset - position, crc)
        crc = crc32.combine(crc, piece_crc, length)
        position = offset + length
    return crc32.of_file(fh, position, end - position, crc)


def write_archive(path, small_members, h5_name, write_h5):
    """Writes a stored zip at ``path`` (a fresh temporary path): ``small_members`` is
    [(name, bytes)], listed first; ``write_h5(h5py.File, checksums)`` fills the member ``h5_name``
    and passes the large arrays it writes, by dataset name, to ``checksums.add``."""
    checksums = crc32.Checksums()
    try:
        with h5py.File(path, "w", userblock_size=USER_BLOCK) as f:
            write_h5(f, checksums)
            offsets = {key: f[key].id.get_offset() for key in checksums.keys()}
        pieces = [(offsets[key],) + checksums.result(key) for key in offsets if offsets[key] is not None]
    finally:
        checksums.close()
    h5_size = os.path.getsize(path) - USER_BLOCK
    total = USER_BLOCK + h5_size + sum(len(data) + 100 for _, data in small_members) + 200
    if h5_size > _LIMIT or total > _LIMIT:
        _rewrite_with_zipfile(path, small_members, h5_name)
        return
    now = _dos_time(time.localtime()[:6])
    epoch = _dos_time((1980, 1, 1, 0, 0, 0))
    name = h5_name.encode("ascii")
    with open(path, "r+b") as fh:
        crc = _member_crc(fh, USER_BLOCK + h5_size, pieces)
        extra_len = USER_BLOCK - _LOCAL.size - len(name)
        extra = struct.pack("<HH", _ALIGN_EXTRA_ID, extra_len - 4) + bytes(extra_len - 4)
        fh.seek(0)
        fh.write(_LOCAL.pack(b"PK\x03\x04", _VERSION, 0, 0, now[0], now[1], crc, h5_size, h5_size,
                             len(name), extra_len) + name + extra)
        entries = []
        offset = USER_BLOCK + h5_size
        fh.seek(offset)
        for member, data in small_members:
            encoded = member.encode("ascii")
            member_crc = zlib.crc32(data)
            fh.write(_LOCAL.pack(b"PK\x03\x04", _VERSION, 0, 0, epoch[0], epoch[1], member_crc, len(data),
                                 len(data), len(encoded), 0) + encoded + data)
            entries.append((encoded, member_crc, len(data), offset, epoch))
            offset += _LOCAL.size + len(encoded) + len(data)
        entries.append((name, crc, h5_size, 0, now))
        directory_start = offset
        for encoded, member_crc, size, header_offset, stamp in entries:
            fh.write(_CENTRAL.pack(b"PK\x01\x02", (_UNIX << 8) | _VERSION, _VERSION, 0, 0, stamp[0], stamp[1],
                                   member_crc, size, size, len(encoded), 0, 0, 0, 0, _EXTERNAL_ATTR,
                                   header_offset) + encoded)
            offset += _CENTRAL.size + len(encoded)
        fh.write(_END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), offset - directory_start,
                           directory_start, 0))
        fh.truncate()


def _rewrite_with_zipfile(path, small_members, h5_name):
    """The general path (zip64): copy the HDF5 file into a zip written by ``zipfile``."""
    h5_path = path + ".h5"   # a name the next save's sweep recognises (temp_names), should this one be killed
    os.replace(path, h5_path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, os.stat(h5_path).st_mode & 0o777))
        with open(h5_path, "rb") as src, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for member, data in small_members:
                zf.writestr(zipfile.ZipInfo(member), data)
            src.seek(USER_BLOCK)
            with zf.open(zipfile.ZipInfo(h5_name, time.localtime()[:6]), "w", force_zip64=True) as dst:
                while True:
                    chunk = src.read(1 << 24)
                    if not chunk:
                        break
                    dst.write(chunk)
    finally:
        os.remove(h5_path)


# ------------------------------------------------------------------ read ---
def _caused_by_content(error):
    """zipfile's errors caused by the archive's bytes (an OSError with an errno other than EINVAL -- a
    seek to a damaged offset -- is I/O and stays an OSError)."""
    return not isinstance(error, OSError) or error.errno in (None, errno.EINVAL)


class Archive:
    """A zip archive opened for reading; members are found by name. Every member is checked (size
    against a limit, CRC-32) before anything parses it."""

    def __init__(self, path):
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path, "r")
        except zipfile.BadZipFile as e:
            raise ArchiveError(f"'{path}' is not a valid .keras archive: it is not a zip file, or it is truncated "
                               f"({e}).") from e
        except (OSError, EOFError, ValueError, NotImplementedError) as e:
            if not _caused_by_content(e):
                raise
            raise ArchiveError(f"'{path}' is not a valid .keras archive: its zip directory is damaged ({e}).") from e
        try:
            self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            self._size = os.fstat(self._fd).st_size
        except OSError:
            self._zip.close()
            raise

    def names(self):
        return self._zip.namelist()

    def read(self, name, max_size):
        """The bytes of member ``name``, refused if it declares more than ``max_size`` bytes; zipfile
        inflates no more than the declared size and checks the CRC-32."""
        info = self._info(name)
        if info.file_size > max_size:
            raise OversizedContentError(f"'{self.path}': member '{name}' is {info.file_size} bytes, more than the "
                                        f"{max_size} bytes allowed for it; refusing to read it.")
        try:
            return self._zip.read(name)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, ValueError) as e:
            if not _caused_by_content(e):
                raise
            raise ArchiveError(f"'{self.path}': member '{name}' is corrupted ({type(e).__name__}: {e}).") from e

    def open_hdf5(self, name, max_size):
        """Member ``name`` as an ``h5_reader.H5File``, once its size and CRC-32 have been checked. A stored
        member is read in place, a compressed one inflated into memory (at most ``max_size`` bytes)."""
        source = f"{self.path}' member '{name}"
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            return H5File.from_bytes(self.read(name, max_size), source)
        if info.file_size > max_size:
            raise OversizedContentError(f"'{self.path}': member '{name}' is {info.file_size} bytes, more than the "
                                        f"{max_size} bytes the model's weights can take; refusing to read it.")
        start = self._data_offset(info)
        if start + info.file_size > self._size:
            raise ArchiveError(f"'{self.path}': member '{name}' runs past the end of the file (truncated).")
        crc = crc32.of_file_descriptor(self._fd, start, info.file_size)
        if crc != info.CRC:
            raise ArchiveError(f"'{self.path}': member '{name}' is corrupted (CRC-32 {crc:#010x}, the archive "
                               f"records {info.CRC:#010x}).")
        return H5File.open_window(self._fd, start, info.file_size, source)

    def _info(self, name):
        try:
            return self._zip.getinfo(name)
        except KeyError:
            raise ArchiveError(f"'{self.path}' has no member '{name}' (it has {self.names()[:20]}); it is not a "
                               "complete .keras archive.") from None

    def _data_offset(self, info):
        header = os.pread(self._fd, _LOCAL.size + len(info.orig_filename.encode("utf-8")) + 4, info.header_offset)
        if len(header) < _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise ArchiveError(f"'{self.path}': the local header of member '{info.filename}' is damaged.")
        fields = _LOCAL.unpack(header[:_LOCAL.size])
        name = header[_LOCAL.size:_LOCAL.size + fields[9]]
        if name.decode("utf-8", "replace") != info.orig_filename and name.decode("cp437") != info.orig_filename:
            raise ArchiveError(f"'{self.path}': the local header of member '{info.filename}' names another file.")
        return info.header_offset + _LOCAL.size + fields[9] + fields[10]

    def close(self):
        self._zip.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
