"""A reader for LevelDB's table format ("SSTable"), the format of a TensorFlow checkpoint's ``.index`` file.

The whole (small) file is checked and read into a ``{key: value}`` dict:

* the 48-byte footer: the handles (varint offset, varint size) of the metaindex and index blocks, padding,
  and the magic number;
* every block: entries ``shared, non_shared, value_length`` (varints), the key's unshared suffix (the rest
  is shared with the previous key: prefix compression) and the value, then the restart array (offsets of
  entries that share nothing, as uint32) and its length; after the block a trailer: the compression type
  (0: none; snappy is refused, no maintained package of it is a dependency) and the masked CRC-32C of the
  block and type;
* the index block maps a separator key to the handle of each data block, in order.

Every varint, handle, length and checksum is checked before it is used; keys must be strictly increasing.
Problems raise ``FileContentError`` (``UnsupportedContentError`` for a valid feature this reader lacks)
naming the file and what is wrong.
"""
import struct

from .crc32c import crc32c, masked
from .errors import FileContentError, UnsupportedContentError

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
TRAILER_SIZE = 5
_NO_COMPRESSION = 0
_COMPRESSION_NAMES = {1: "snappy", 2: "zstd"}


class _Problem(Exception):
    """A malformed structure, turned into a FileContentError naming the file and place by the caller."""


def varint(data, pos, end, bits=64):
    """(value, next position) of the varint at ``data[pos:end]``."""
    value, shift = 0, 0
    while True:
        if pos >= end:
            raise _Problem("a varint runs past the end of its block")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= bits:
            raise _Problem(f"a varint is longer than {bits} bits")
    if value >> bits:
        raise _Problem(f"a varint is larger than {bits} bits")
    return value, pos


class Table:
    """The entries of one SSTable file, read and checked: ``items()`` in key order, ``get(key)``."""

    def __init__(self, data, path):
        self.path = path
        self._data = data
        self._entries = {}
        try:
            metaindex, index = self._footer()
            self._block(*metaindex, "the metaindex block")
            last_key = None
            for separator, handle in self._block(*index, "the index block"):
                offset, pos = varint(handle, 0, len(handle))
                size, pos = varint(handle, pos, len(handle))
                if pos != len(handle):
                    raise _Problem(f"the index entry {separator[:80]!r} is not a block handle")
                for key, value in self._block(offset, size, f"the data block at byte {offset}"):
                    if last_key is not None and key <= last_key:
                        raise _Problem(f"the key {key[:80]!r} is not after {last_key[:80]!r} (keys must be "
                                       "sorted and unique)")
                    if key > separator:
                        raise _Problem(f"the key {key[:80]!r} lies beyond its block's index key")
                    self._entries[key] = value
                    last_key = key
        except _Problem as e:
            raise FileContentError(f"Cannot read the checkpoint index '{path}': {e}.") from None
        finally:
            self._data = None

    def _footer(self):
        data = self._data
        if len(data) < FOOTER_SIZE:
            raise _Problem(f"it has {len(data)} bytes, fewer than a table's {FOOTER_SIZE}-byte footer")
        start = len(data) - FOOTER_SIZE
        (magic,) = struct.unpack_from("<Q", data, start + 40)
        if magic != MAGIC:
            raise _Problem(f"the footer's magic number is {magic:#018x}, not {MAGIC:#018x} (not a LevelDB table)")
        handles, pos = [], start
        for _ in range(2):
            offset, pos = varint(data, pos, start + 40)
            size, pos = varint(data, pos, start + 40)
            handles.append((offset, size))
        return handles

    def _block(self, offset, size, what):
        """[(key, value)] of the block at ``offset``, checked."""
        data = self._data
        limit = len(data) - FOOTER_SIZE
        if offset > limit or size > limit - offset or TRAILER_SIZE > limit - offset - size:
            raise _Problem(f"{what} (bytes {offset}..{offset + size} and its trailer) lies outside the file's "
                           f"{limit} bytes of blocks")
        end = offset + size
        kind = data[end]
        (stored,) = struct.unpack_from("<I", data, end + 1)
        if masked(crc32c(memoryview(data)[offset:end + 1])) != stored:
            raise _Problem(f"{what} is damaged (its CRC-32C does not match)")
        if kind != _NO_COMPRESSION:
            name = _COMPRESSION_NAMES.get(kind, f"unknown compression type {kind}")
            raise UnsupportedContentError(f"Cannot read the checkpoint index '{self.path}': {what} is compressed "
                                          f"({name}); tapeflow reads uncompressed tables only.")
        if size < 4:
            raise _Problem(f"{what} is too short ({size} bytes) to hold its restart count")
        (restarts,) = struct.unpack_from("<I", data, end - 4)
        if restarts > (size - 4) // 4:
            raise _Problem(f"{what} declares {restarts} restart points, more than its {size} bytes hold")
        entries_end = end - 4 - 4 * restarts
        restart_offsets = set(struct.unpack_from(f"<{restarts}I", data, entries_end))
        out, key, pos = [], b"", offset
        while pos < entries_end:
            at = pos - offset
            shared, pos = varint(data, pos, entries_end, 32)
            unshared, pos = varint(data, pos, entries_end, 32)
            length, pos = varint(data, pos, entries_end, 32)
            if shared > len(key):
                raise _Problem(f"an entry of {what} shares {shared} bytes with a key of {len(key)}")
            if at in restart_offsets and shared:
                raise _Problem(f"the restart entry at byte {at} of {what} shares bytes with the previous key")
            if unshared > entries_end - pos or length > entries_end - pos - unshared:
                raise _Problem(f"an entry of {what} runs past the end of the block")
            key = key[:shared] + bytes(data[pos:pos + unshared])
            pos += unshared
            out.append((key, bytes(data[pos:pos + length])))
            pos += length
            restart_offsets.discard(at)
        if not out:
            restart_offsets.discard(0)   # an empty block still has its one restart point
        if restart_offsets:
            raise _Problem(f"{what} has restart points that are not at entries: {sorted(restart_offsets)[:5]}")
        return out

    def items(self):
        return list(self._entries.items())

    def get(self, key, default=None):
        return self._entries.get(key, default)
