"""Stored (uncompressed) zip archives, the container of a ``.keras`` file.

Writing: the HDF5 member is written by h5py straight into the archive. The
file is created with a 512-byte HDF5 user block; the zip local header of the
member fills that block (its extra field pads it to 512 bytes, the alignment
record zipalign uses), so the member's data is exactly the HDF5 file and no
copy of the weights is made. The small members follow, then the central
directory, which lists the members in Keras's order (metadata.json,
config.json, model.weights.h5). Archives that would need zip64 (4 GiB) are
written through ``zipfile`` instead.

Reading: ``h5_source`` gives what h5py should open for a member without
copying it to memory: the archive's path itself when the member sits at the
user-block offset (tapeflow's archives), else a file object over the
member's bytes. ``check_member`` verifies a member's CRC-32 on a thread
while it is being read.
"""
import io
import os
import struct
import time
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import h5py

from . import crc32
from .errors import ArchiveError

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
class _MemberFile(io.RawIOBase):
    """A read-only, seekable view of the bytes ``[start, start + size)`` of a file."""

    def __init__(self, path, start, size):
        super().__init__()
        self._fh = open(path, "rb")
        self._start = start
        self._size = size
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer):
        view = memoryview(buffer).cast("B")
        n = max(0, min(len(view), self._size - self._pos))
        if n == 0:
            return 0
        got = os.preadv(self._fh.fileno(), [view[:n]], self._start + self._pos)
        self._pos += got
        return got

    def close(self):
        if not self.closed:
            self._fh.close()
        super().close()


class _Done:
    def result(self):
        return None


class Archive:
    """A zip archive opened for reading; members are found by name."""

    def __init__(self, path):
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path, "r")
        except zipfile.BadZipFile as e:
            raise ArchiveError(f"'{path}' is not a valid .keras archive: it is not a zip file, or it is truncated "
                               f"({e}).") from e
        except OSError as e:
            raise ArchiveError(f"Cannot read '{path}': {e}") from e

    def names(self):
        return self._zip.namelist()

    def read(self, name, max_size):
        info = self._info(name)
        if info.file_size > max_size:
            raise ArchiveError(f"'{self.path}': member '{name}' is {info.file_size} bytes, more than the "
                               f"{max_size} bytes allowed for it; refusing to read it.")
        try:
            return self._zip.read(name)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as e:
            raise ArchiveError(f"'{self.path}': member '{name}' is corrupted ({e}).") from e

    def h5_source(self, name):
        """What h5py should open to read member ``name``: the archive's own path when the member is
        stored exactly at the 512-byte user-block offset (tapeflow's archives: HDF5 finds it there and
        reads with its native driver), else a read-only file object over the member's bytes."""
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            return io.BytesIO(self.read(name, max_size=info.file_size))   # zipfile checks its CRC-32
        start = self._data_offset(info)
        if start + info.file_size > os.path.getsize(self.path):
            raise ArchiveError(f"'{self.path}': member '{name}' runs past the end of the file (truncated).")
        return self.path if start == USER_BLOCK else _MemberFile(self.path, start, info.file_size)

    def check_member(self, name):
        """Starts checking the CRC-32 of stored member ``name`` on a thread; ``result()`` raises if it is
        corrupted. Run it while the member is being read."""
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            return _Done()
        start = self._data_offset(info)
        pool = ThreadPoolExecutor(max_workers=1)

        def check():
            with open(self.path, "rb") as fh:
                try:
                    crc = crc32.of_file(fh, start, info.file_size)
                except OSError as e:
                    raise ArchiveError(f"'{self.path}': member '{name}' is truncated ({e}).") from e
            if crc != info.CRC:
                raise ArchiveError(f"'{self.path}': member '{name}' is corrupted (CRC-32 {crc:#010x}, the "
                                   f"archive records {info.CRC:#010x}).")
        future = pool.submit(check)
        pool.shutdown(wait=False)
        return future

    def _info(self, name):
        try:
            return self._zip.getinfo(name)
        except KeyError:
            raise ArchiveError(f"'{self.path}' has no member '{name}' (it has {self.names()}); it is not a "
                               "complete .keras archive.") from None

    def _data_offset(self, info):
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL.size)
        if len(header) != _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise ArchiveError(f"'{self.path}': the local header of member '{info.filename}' is damaged.")
        fields = _LOCAL.unpack(header)
        return info.header_offset + _LOCAL.size + fields[9] + fields[10]

    def close(self):
        self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
