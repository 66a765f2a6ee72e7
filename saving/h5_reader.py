"""Reading HDF5 files tapeflow did not write, in pure Python, without handing them to libhdf5.

libhdf5 trusts the files it reads: a crafted or damaged file can make it
follow external links, read raw data from another file (external storage,
virtual datasets), load a filter plugin, loop forever on a damaged heap, or
crash the interpreter. This module reads the subset of HDF5 that Keras files
use (h5py's defaults, and the small-object layout of ``libver="latest"``)
and checks every address, size and count against the file before it uses
it:

* superblock versions 0-3; object headers versions 1 and 2;
* groups: symbol tables (B-tree v1 + local heap) and compact link messages;
* datasets of integers, IEEE floats and h5py's booleans, stored compact,
  contiguous or chunked (B-tree v1 or a single chunk) with deflate, shuffle
  and fletcher32;
* attributes stored in the object header: numbers, fixed-length strings and
  variable-length strings (global heap).

Anything that points outside the file (external and soft links, external
raw storage, virtual datasets, object references) raises
``ExternalReferenceError``; a feature outside the subset raises
``UnsupportedContentError``; a damaged structure raises ``FileContentError``.
Each message names the file and the object. Nothing is read before the
structure that describes it has been checked, and a dataset's data is read
only by ``Dataset.read()``, after the caller has compared its declared shape
with what it expects.
"""
import os
import zlib

import numpy as np

from .errors import ExternalReferenceError, FileContentError, UnsupportedContentError

SIGNATURE = b"\x89HDF\r\n\x1a\n"
_MAX_HEADER_CHUNKS = 4096          # continuation blocks of one object header
_MAX_BTREE_LEVEL = 64
_MAX_RANK = 32
_MAX_NAME = 1 << 16


class _Corrupt(Exception):
    """A structural problem, turned into a FileContentError naming the file and object by the caller."""


class _Bytes:
    """Little-endian fields of a bytes object, each read checked against its end."""

    def __init__(self, data, pos=0, offset_size=8, length_size=8):
        self.data = data
        self.pos = pos
        self.o = offset_size
        self.l = length_size

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise _Corrupt(f"a structure of {len(self.data)} bytes ends before the {n}-byte field at {self.pos}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def uint(self, n):
        return int.from_bytes(self.take(n), "little")

    def u8(self):
        return self.uint(1)

    def u16(self):
        return self.uint(2)

    def u32(self):
        return self.uint(4)

    def u64(self):
        return self.uint(8)

    def offset(self):
        """An address; None for the undefined address (all bits set)."""
        value = self.uint(self.o)
        return None if value == (1 << (8 * self.o)) - 1 else value

    def length(self):
        return self.uint(self.l)

    def skip(self, n):
        self.take(n)

    @property
    def left(self):
        return len(self.data) - self.pos


# ------------------------------------------------------------- the file ---
class _Storage:
    """The bytes ``[start, start + size)`` of an open file descriptor, or a bytes object."""

    def __init__(self, fd=None, start=0, size=0, data=None):
        self.fd = fd
        self.start = start
        self.size = len(data) if data is not None else size
        self.data = data

    def check(self, position, n):
        if position < 0 or n < 0 or position + n > self.size:
            raise _Corrupt(f"{n} bytes at {position} run past the end of the file ({self.size} bytes)")

    def read_into(self, position, view):
        self.check(position, len(view))
        if self.data is not None:
            view[:] = self.data[position:position + len(view)]
            return
        done = 0
        while done < len(view):
            n = os.preadv(self.fd, [view[done:]], self.start + position + done)
            if n <= 0:
                raise _Corrupt(f"the file ends at byte {position + done} while {len(view)} bytes were read at "
                               f"{position}")
            done += n

    def read(self, position, n):
        self.check(position, n)   # before anything of that size is allocated
        buf = bytearray(n)
        self.read_into(position, memoryview(buf))
        return bytes(buf)


class H5File:
    """An HDF5 file opened for reading untrusted content; ``root`` is its root ``Group``."""

    def __init__(self, storage, source, owned_fd=None):
        self.source = source
        self._storage = storage
        self._owned_fd = owned_fd
        self._headers = {}
        self._heaps = {}
        self._collections = {}
        try:
            self._read_superblock()
        except _Corrupt as e:
            self.close()
            raise FileContentError(f"Cannot read '{source}': it is not a valid HDF5 file, or it is truncated or "
                                   f"corrupted ({e}).") from None
        except Exception:
            self.close()
            raise
        self.root = Group(self, "/", self._root_address)

    # ----------------------------------------------------------- opening ---
    @classmethod
    def open(cls, path, source=None, follow_symlinks=True):
        """Opens ``path``; with ``follow_symlinks=False`` a symbolic link is refused (members of a directory)."""
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
        if not follow_symlinks:
            flags |= os.O_NOFOLLOW
        try:
            fd = os.open(path, flags)
        except OSError:
            if not follow_symlinks and os.path.islink(path):
                raise ExternalReferenceError(f"Cannot read '{source or path}': '{path}' is a symbolic link; the "
                                             "files of a model directory must be the files themselves.") from None
            raise
        try:
            size = os.fstat(fd).st_size
        except OSError:
            os.close(fd)
            raise
        return cls(_Storage(fd, 0, size), source or path, owned_fd=fd)

    @classmethod
    def open_window(cls, fd, start, size, source):
        """The HDF5 file held in bytes ``[start, start + size)`` of ``fd`` (a stored zip member)."""
        return cls(_Storage(fd, start, size), source)

    @classmethod
    def from_bytes(cls, data, source):
        return cls(_Storage(data=data), source)

    def close(self):
        if self._owned_fd is not None:
            os.close(self._owned_fd)
            self._owned_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ layout ---
    def _read_superblock(self):
        position = 0
        while True:
            if position + 48 > self._storage.size:
                raise _Corrupt("no HDF5 signature found")
            if self._storage.read(position, 8) == SIGNATURE:
                break
            position = 512 if position == 0 else position * 2
        self._base = position
        head = _Bytes(self._storage.read(position, min(self._storage.size - position, 256)))
        head.skip(8)
        version = head.u8()
        if version in (0, 1):
            head.skip(4)
            self._o, self._l = head.u8(), head.u8()
            head.skip(1 + 2 + 2 + 4 + (4 if version == 1 else 0))
        elif version in (2, 3):
            self._o, self._l = head.u8(), head.u8()
            head.skip(1)
        else:
            raise _Corrupt(f"superblock version {version} is unknown")
        if self._o not in (2, 4, 8) or self._l not in (2, 4, 8):
            raise _Corrupt(f"sizes of offsets/lengths {self._o}/{self._l} are invalid")
        head.o, head.l = self._o, self._l
        stored_base = head.offset() or 0               # addresses count from the superblock, wherever it is
        head.offset()                                  # free space or superblock extension
        end = head.offset()                            # counted from stored_base
        if version in (0, 1):
            head.offset(), head.offset()               # driver info; root entry: link name offset
        root = head.offset()
        if root is None:
            raise _Corrupt("the root group has no address")
        if end is not None and position + end - stored_base > self._storage.size:
            raise _Corrupt(f"it is truncated: its superblock records {position + end - stored_base} bytes, the "
                           f"file has {self._storage.size}")
        self._root_address = root

    def read(self, address, n):
        if address is None:
            raise _Corrupt("an undefined address is used")
        return self._storage.read(self._base + address, n)

    def read_into(self, address, view):
        self._storage.read_into(self._base + address, view)

    def check(self, address, n):
        if address is None:
            raise _Corrupt("an undefined address is used")
        self._storage.check(self._base + address, n)

    def fields(self, data, pos=0):
        return _Bytes(data, pos, self._o, self._l)

    def error(self, path, problem, kind=FileContentError):
        return kind(f"Cannot read '{self.source}': {path}: {problem}.")

    # ---------------------------------------------------- object headers ---
    def header(self, address):
        """[(type, flags, data)] of the messages of the object header at ``address``."""
        if address not in self._headers:
            self._headers[address] = self._parse_header(address)
        return self._headers[address]

    def _parse_header(self, address):
        if address is None:
            raise _Corrupt("an object has an undefined address")
        first = self.read(address, 4)
        if first == b"OHDR":
            return self._parse_header_v2(address)
        if first[0] != 1:
            raise _Corrupt(f"the object header at {address} has unknown version {first[0]}")
        prefix = self.fields(self.read(address, 16))
        prefix.skip(8)
        size = prefix.u32()
        messages, queue, seen = [], [(address + 16, size)], set()
        while queue:
            block, length = queue.pop(0)
            if block in seen or len(seen) >= _MAX_HEADER_CHUNKS:
                raise _Corrupt(f"the object header at {address} has looping or too many continuation blocks")
            seen.add(block)
            data = self.fields(self.read(block, length))
            while data.left >= 8:
                kind, n, flags = data.u16(), data.u16(), data.u8()
                data.skip(3)
                body = data.take(n)
                self._collect(kind, flags, body, messages, queue)
        return messages

    def _parse_header_v2(self, address):
        head = self.fields(self.read(address, 32))
        head.skip(4)
        if head.u8() != 2:
            raise _Corrupt(f"the object header at {address} has an unknown version")
        flags = head.u8()
        if flags & 0x20:
            head.skip(16)
        if flags & 0x10:
            head.skip(4)
        size = head.uint(1 << (flags & 3))
        track_order = bool(flags & 0x04)
        messages, queue, seen = [], [(address + head.pos, size, False)], set()
        while queue:
            block, length, is_continuation = queue.pop(0)
            if block in seen or len(seen) >= _MAX_HEADER_CHUNKS:
                raise _Corrupt(f"the object header at {address} has looping or too many continuation blocks")
            seen.add(block)
            raw = self.read(block, length)
            if is_continuation:
                if raw[:4] != b"OCHK" or length < 8:
                    raise _Corrupt(f"a continuation block of the object header at {address} is damaged")
                data = self.fields(raw[:-4], 4)
            else:
                data = self.fields(raw)
            step = 6 if track_order else 4
            while data.left >= step:
                kind, n, mflags = data.u8(), data.u16(), data.u8()
                if track_order:
                    data.skip(2)
                body = data.take(n)
                pending = []
                self._collect(kind, mflags, body, messages, pending)
                queue.extend((b, length_, True) for b, length_ in pending)
        return messages

    def _collect(self, kind, flags, body, messages, queue):
        if kind == 0x10:   # continuation: (address, length)
            f = self.fields(body)
            block, length = f.offset(), f.length()
            if block is None:
                raise _Corrupt("a header continuation has an undefined address")
            queue.append((block, length))
        elif kind != 0:
            messages.append((kind, flags, body))

    # ------------------------------------------------------------- heaps ---
    def local_heap(self, address):
        """The data segment of the local heap at ``address`` (the names of a symbol-table group)."""
        if address not in self._heaps:
            head = self.fields(self.read(address, 8 + 2 * self._l + self._o))
            if head.take(4) != b"HEAP":
                raise _Corrupt(f"the local heap at {address} is damaged")
            head.skip(4)
            size = head.length()
            head.length()
            data_address = head.offset()
            self._heaps[address] = self.read(data_address, size)
        return self._heaps[address]

    def global_heap_object(self, address, index):
        """The bytes of object ``index`` of the global heap collection at ``address``."""
        if address not in self._collections:
            head = self.fields(self.read(address, 8 + self._l))
            if head.take(4) != b"GCOL" or head.u8() != 1:
                raise _Corrupt(f"the global heap collection at {address} is damaged")
            head.skip(3)
            size = head.length()
            if size < head.pos:
                raise _Corrupt(f"the global heap collection at {address} has an invalid size {size}")
            data = self.fields(self.read(address, size), head.pos)
            objects = {}
            while data.left >= 8 + self._l:
                number = data.u16()
                data.skip(6)
                length = data.length()
                if number == 0:   # free space: the rest of the collection
                    break
                start = data.pos
                data.take(length)
                data.skip(min((-length) % 8, data.left))
                if number in objects:
                    raise _Corrupt(f"the global heap collection at {address} lists object {number} twice")
                objects[number] = (start, length)
            self._collections[address] = (data.data, objects)
        raw, objects = self._collections[address]
        if index not in objects:
            raise _Corrupt(f"the global heap collection at {address} has no object {index}")
        start, length = objects[index]
        return raw[start:start + length]

    # ------------------------------------------------------------ groups ---
    def group_links(self, path, address):
        """The links of the group at ``address`` (a ``_SymbolTable`` or a ``_CompactLinks``), or None
        when the object is not a group."""
        messages = self.header(address)
        table = [body for kind, _, body in messages if kind == 0x11]
        links = [body for kind, _, body in messages if kind == 0x06]
        info = [body for kind, _, body in messages if kind == 0x02]
        if table:
            f = self.fields(table[0])
            return _SymbolTable(self, f.offset(), f.offset())
        if not links and not info:
            return None
        if info:
            f = self.fields(info[0])
            f.skip(1)
            if f.u8() & 1:
                f.skip(8)
            if f.offset() is not None:
                raise self.error(path, "its links are stored densely (a fractal heap, as libver='latest' writes "
                                 "groups of more than 8 members), which tapeflow's HDF5 reader does not read; "
                                 "re-save the file with h5py's default settings", UnsupportedContentError)
        entries = {}
        for body in links:
            name, target = self._link(body)
            entries.setdefault(name, target)
        return _CompactLinks(entries)

    def _link(self, body):
        f = self.fields(body)
        if f.u8() != 1:
            raise _Corrupt("a link message has an unknown version")
        flags = f.u8()
        kind = f.u8() if flags & 0x08 else 0
        if flags & 0x04:
            f.skip(8)
        if flags & 0x10:
            f.skip(1)
        name = f.take(f.uint(1 << (flags & 3)))
        if kind == 0:
            return name, ("hard", f.offset())
        value = f.take(f.u16())
        if kind == 1:
            return name, ("soft", value.decode("utf-8", "replace"))
        if kind == 64:
            parts = value[1:].split(b"\x00")
            return name, ("external", parts[0].decode("utf-8", "replace"))
        return name, ("other", kind)


class _CompactLinks:
    """The links of a group stored as link messages in its header (new-style, compact)."""

    def __init__(self, entries):
        self._entries = entries

    def get(self, name):
        return self._entries.get(name)

    def names(self, limit):
        if limit is not None and len(self._entries) > limit:
            return None
        return list(self._entries)


class _SymbolTable:
    """The links of an old-style group: a B-tree (type 0) of symbol table nodes, names in a local heap.
    A child of a node holds the names in ``(key[i], key[i + 1]]``, so one name is found on one path."""

    def __init__(self, file, btree, heap_address):
        self.file = file
        self.btree = btree
        self.heap = file.local_heap(heap_address)

    def _node(self, address, parent_level):
        f = self.file
        head = f.fields(f.read(address, 8))
        if head.take(4) != b"TREE" or head.u8() != 0:
            raise _Corrupt(f"the group B-tree node at {address} is damaged")
        level, used = head.u8(), head.u16()
        if level > _MAX_BTREE_LEVEL or (parent_level is not None and level != parent_level - 1):
            raise _Corrupt(f"the group B-tree node at {address} has an inconsistent level")
        body = f.fields(f.read(address + 8 + 2 * f._o, used * (f._l + f._o) + f._l))
        keys, children = [], []
        for _ in range(used):
            keys.append(body.length())
            children.append(body.offset())
        keys.append(body.length())
        return level, keys, children

    def _symbols(self, address):
        """[(name, target)] of the symbol table node at ``address``."""
        f = self.file
        head = f.fields(f.read(address, 8))
        if head.take(4) != b"SNOD" or head.u8() != 1:
            raise _Corrupt(f"the symbol table node at {address} is damaged")
        head.skip(1)
        count = head.u16()
        body = f.fields(f.read(address + 8, count * (2 * f._o + 24)))
        out = []
        for _ in range(count):
            name_offset = body.uint(f._o)
            target = body.offset()
            cache = body.u32()
            body.skip(4)
            scratch = body.take(16)
            name = _c_string(self.heap, name_offset)
            if cache == 2:
                value = _c_string(self.heap, int.from_bytes(scratch[:4], "little"))
                out.append((name, ("soft", value.decode("utf-8", "replace"))))
            else:
                out.append((name, ("hard", target)))
        return out

    def get(self, name):
        address, level, seen = self.btree, None, set()
        while True:
            if address in seen:
                raise _Corrupt(f"the group B-tree node at {address} is reached twice")
            seen.add(address)
            level, keys, children = self._node(address, level)
            for i, child in enumerate(children):
                if name <= _c_string(self.heap, keys[i + 1]):
                    break
            else:
                return None
            if level == 0:
                return dict(self._symbols(child)).get(name)
            address = child

    def names(self, limit):
        """All names, in order; None as soon as there are more than ``limit``."""
        out, seen, stack = [], set(), [(self.btree, None)]
        while stack:
            address, parent_level = stack.pop()
            if address in seen:
                raise _Corrupt(f"the group B-tree node at {address} is reached twice")
            seen.add(address)
            level, _, children = self._node(address, parent_level)
            if level > 0:
                stack.extend((child, level) for child in reversed(children))
                continue
            for child in children:
                out.extend(name for name, _ in self._symbols(child))
                if limit is not None and len(out) > limit:
                    return None
        return out


def _c_string(heap, offset):
    if offset >= len(heap):
        raise _Corrupt(f"a name at offset {offset} lies outside its heap of {len(heap)} bytes")
    end = heap.find(b"\x00", offset, offset + _MAX_NAME)
    if end < 0:
        raise _Corrupt(f"the name at offset {offset} of a heap is not terminated")
    return heap[offset:end]


# -------------------------------------------------------------- objects ---
class _Object:
    def __init__(self, file, path, address):
        self.file = file
        self.name = path
        self.address = address
        self._attrs = None

    def _messages(self):
        try:
            return self.file.header(self.address)
        except _Corrupt as e:
            raise self.file.error(self.name, f"its object header is damaged ({e})") from None

    @property
    def attrs(self):
        if self._attrs is None:
            self._attrs = Attributes(self)
        return self._attrs

    def _fail(self, problem, kind=FileContentError):
        return self.file.error(self.name, problem, kind)


class Group(_Object):
    """A group: ``get(name)`` (``name`` may contain ``/``), ``keys(limit)``, ``attrs``."""

    def __init__(self, file, path, address):
        super().__init__(file, path, address)
        self._table = None

    def _links(self):
        if self._table is None:
            try:
                table = self.file.group_links(self.name, self.address)
            except _Corrupt as e:
                raise self._fail(f"the group is damaged ({e})") from None
            if table is None:
                raise self._fail("it should be a group but it is not")
            self._table = table
        return self._table

    def keys(self):
        return self.keys_at_most(None)

    def keys_at_most(self, limit):
        """The member names, or None when there are more than ``limit`` (found without listing them all)."""
        try:
            names = self._links().names(limit)
        except _Corrupt as e:
            raise self._fail(f"the group is damaged ({e})") from None
        return None if names is None else [_decode_name(n) for n in names]

    def __contains__(self, name):
        return self.get(name) is not None

    def get(self, name):
        """The Group or Dataset at ``name`` (relative, ``a/b`` allowed), or None when absent."""
        node = self
        for part in [p for p in str(name).split("/") if p]:
            if not isinstance(node, Group):
                return None
            node = node._child(part)
            if node is None:
                return None
        return node

    def _child(self, part):
        path = f"{self.name.rstrip('/')}/{part}"
        try:
            target = self._links().get(part.encode("utf-8", "surrogateescape"))
        except _Corrupt as e:
            raise self._fail(f"the group is damaged ({e})") from None
        if target is None:
            return None
        kind, value = target
        if kind == "soft":
            raise self.file.error(path, f"it is a soft link to '{value}'; tapeflow follows no links in a file it "
                                  "loads", ExternalReferenceError)
        if kind == "external":
            raise self.file.error(path, f"it is an external link to the file '{value}'; a model file must not "
                                  "read other files", ExternalReferenceError)
        if kind != "hard":
            raise self.file.error(path, f"it is a user-defined link (type {value})", ExternalReferenceError)
        try:
            messages = self.file.header(value)
        except _Corrupt as e:
            raise self.file.error(path, f"its object header is damaged ({e})") from None
        kinds = {k for k, _, _ in messages}
        if kinds & {0x11, 0x06, 0x02}:
            return Group(self.file, path, value)
        if 0x08 in kinds:
            return Dataset(self.file, path, value)
        raise self.file.error(path, "it is neither a group nor a dataset (a committed datatype or a damaged "
                              "object header)")


def _decode_name(raw):
    return raw.decode("utf-8", "surrogateescape")


# ------------------------------------------------------------ datatypes ---
_IEEE = {  # size: (precision, exponent location, exponent size, mantissa location, mantissa size, bias)
    2: (16, 10, 5, 0, 10, 15),
    4: (32, 23, 8, 0, 23, 127),
    8: (64, 52, 11, 0, 52, 1023),
}


class _Type:
    """A parsed datatype: ``kind`` is "number" (with ``dtype``), "string", "vlen-string" or "reference"."""

    def __init__(self, kind, size, dtype=None, padding=0):
        self.kind = kind
        self.size = size
        self.dtype = dtype
        self.padding = padding


def parse_type(f, depth=0):
    """The datatype at the current position of ``f`` (a ``_Bytes``)."""
    head = f.u8()
    cls, version = head & 0x0F, head >> 4
    bits = f.uint(3)
    size = f.u32()
    if cls == 0:     # fixed-point
        offset, precision = f.u16(), f.u16()
        if size not in (1, 2, 4, 8) or offset != 0 or precision != 8 * size or bits & ~0x09:
            raise _Corrupt(f"an integer type of {size} bytes with {precision} bits at bit {offset}")
        order = ">" if bits & 1 else "<"
        return _Type("number", size, np.dtype(f"{order}{'i' if bits & 8 else 'u'}{size}"))
    if cls == 1:     # floating point
        props = (f.u16(), f.u16(), f.u8(), f.u8(), f.u8(), f.u8(), f.u32())
        offset, rest = props[0], props[1:]
        ieee_bits = 0x20 | ((8 * size - 1) << 8)
        if size not in _IEEE or offset != 0 or rest != _IEEE[size] or bits & ~1 != ieee_bits:
            raise _Corrupt(f"a floating-point type of {size} bytes that is not IEEE 754 ({props})")
        return _Type("number", size, np.dtype(f"{'>' if bits & 1 else '<'}f{size}"))
    if cls == 3:     # fixed-length string
        return _Type("string", size, padding=bits & 0x0F)
    if cls == 7:
        return _Type("reference", size)
    if cls == 8 and depth == 0:     # enumeration: h5py's booleans only
        base = parse_type(f, depth + 1)
        count = bits & 0xFFFF
        names = []
        for _ in range(count):
            end = f.data.find(b"\x00", f.pos)
            if end < 0:
                raise _Corrupt("an enumeration name is not terminated")
            name = f.take(end - f.pos + 1)
            names.append(name[:-1])
            if version < 3:
                f.skip((-len(name)) % 8)
        values = [f.uint(base.size) for _ in range(count)]
        if base.kind == "number" and base.size == 1 and dict(zip(names, values)) == {b"FALSE": 0, b"TRUE": 1}:
            return _Type("number", 1, np.dtype(bool))
        raise _Corrupt("an enumeration type (only h5py's booleans are numbers tapeflow reads)")
    if cls == 9 and depth == 0:     # variable-length
        base = parse_type(f, depth + 1)
        if bits & 0x0F == 1 and base.kind == "number" and base.size == 1 and size == 8 + f.o:
            return _Type("vlen-string", size)
        raise _Corrupt("a variable-length sequence type")
    raise _Corrupt(f"a datatype of class {cls}")


def parse_shape(f):
    """The dims of a dataspace message (None for a null dataspace)."""
    version = f.u8()
    rank = f.u8()
    flags = f.u8()
    if version == 1:
        f.skip(5)
        kind = 1 if rank else 0
    elif version == 2:
        kind = f.u8()
    else:
        raise _Corrupt(f"a dataspace of unknown version {version}")
    if rank > _MAX_RANK:
        raise _Corrupt(f"a dataspace of rank {rank}")
    dims = tuple(f.length() for _ in range(rank))
    if flags & 1:
        for _ in range(rank):
            f.length()
    if kind == 2:
        return None
    return () if kind == 0 else dims


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ------------------------------------------------------------ datasets ---
class Dataset(_Object):
    """A dataset: ``shape``, ``dtype`` (native byte order) and ``nbytes`` come from its header; ``read()``
    reads the data."""

    def __init__(self, file, path, address):
        super().__init__(file, path, address)
        shape = file_type = layout = None
        filters = []
        try:
            for kind, flags, body in self._messages():
                if flags & 0x02 and kind in (0x01, 0x03, 0x08, 0x0B):
                    raise self._fail("its header uses shared messages", UnsupportedContentError)
                if kind == 0x07:
                    raise self._fail("its data is stored in external files (an HDF5 external storage list); a "
                                     "model file must hold its own data", ExternalReferenceError)
                if kind == 0x01 and shape is None:
                    shape = parse_shape(self.file.fields(body))
                elif kind == 0x03 and file_type is None:
                    file_type = self._type(body)
                elif kind == 0x08 and layout is None:
                    layout = self._layout(body)
                elif kind == 0x0B:
                    filters = self._filters(body)
        except _Corrupt as e:
            raise self._fail(f"its header is damaged ({e})") from None
        if shape is None or file_type is None or layout is None:
            raise self._fail("its header lacks a dataspace, a datatype or a layout")
        self.shape = shape
        self._file_dtype = file_type.dtype
        self.dtype = file_type.dtype.newbyteorder("=")
        self.nbytes = _count(shape) * file_type.size
        self._layout_info = layout
        self._filters_list = filters

    def _type(self, body):
        t = parse_type(self.file.fields(body))
        if t.kind == "reference":
            raise self._fail("it holds object references, which point elsewhere in or outside the file",
                             ExternalReferenceError)
        if t.kind != "number":
            raise self._fail(f"it holds {t.kind} data, not the numbers of a variable")
        return t

    def _layout(self, body):
        f = self.file.fields(body)
        version = f.u8()
        if version not in (3, 4):
            raise self._fail(f"its data layout has version {version}, which tapeflow does not read",
                             UnsupportedContentError)
        cls = f.u8()
        if cls == 0:
            size = f.u16()
            return ("compact", f.take(size))
        if cls == 1:
            return ("contiguous", f.offset(), f.length())
        if cls == 3:
            raise self._fail("it is a virtual dataset, whose data is read from other datasets or files",
                             ExternalReferenceError)
        if cls != 2:
            raise self._fail(f"its data layout class {cls} is unknown")
        if version == 3:
            rank = f.u8()
            btree = f.offset()
            dims = tuple(f.u32() for _ in range(rank))
            return ("btree", btree, dims[:-1])
        flags, rank, width = f.u8(), f.u8(), f.u8()
        dims = tuple(f.uint(width) for _ in range(rank))
        index = f.u8()
        if index != 1:
            raise self._fail(f"its chunks are indexed by a structure of type {index} (libver='latest'), which "
                             "tapeflow's HDF5 reader does not read", UnsupportedContentError)
        filtered = (f.length(), f.u32()) if flags & 2 else None
        return ("single", f.offset(), dims[:-1], filtered)

    def _filters(self, body):
        f = self.file.fields(body)
        version, count = f.u8(), f.u8()
        if version == 1:
            f.skip(6)
        out = []
        for _ in range(count):
            ident = f.u16()
            name_length = f.u16() if version == 1 or ident >= 256 else 0
            f.u16()
            values = f.u16()
            if version == 1:
                f.skip(name_length + (-name_length) % 8)
            else:
                f.skip(name_length)
            f.skip(4 * values)
            if version == 1 and values % 2:
                f.skip(4)
            if ident not in (1, 2, 3):
                raise self._fail(f"its data passes through HDF5 filter {ident}; tapeflow decodes only deflate, "
                                 "shuffle and fletcher32 (and never loads filter plugins)", UnsupportedContentError)
            out.append(ident)
        return out

    def read(self):
        """The data as a native-order numpy array of ``shape``."""
        try:
            flat = self._read_bytes()
        except _Corrupt as e:
            raise self._fail(f"its data is damaged or truncated ({e})") from None
        array = np.frombuffer(flat, dtype=self._file_dtype).reshape(self.shape)
        if not self._file_dtype.isnative:
            return array.astype(self.dtype)
        if not array.flags.writeable:
            array = array.copy()
        return array

    def _read_bytes(self):
        kind = self._layout_info[0]
        if kind == "compact":
            data = self._layout_info[1]
            if len(data) != self.nbytes:
                raise _Corrupt(f"{len(data)} bytes are stored for {self.nbytes}")
            return bytearray(data)
        if kind == "contiguous":
            address, size = self._layout_info[1:]
            if self.nbytes == 0:
                return bytearray()
            if address is None:
                raise _Corrupt("no data is stored for it")
            if size != self.nbytes:
                raise _Corrupt(f"{size} bytes are stored for {self.nbytes}")
            self.file.check(address, self.nbytes)
            buf = bytearray(self.nbytes)
            self.file.read_into(address, memoryview(buf))
            return buf
        if kind == "single":
            _, address, chunk, filtered = self._layout_info
            if chunk != self.shape and _count(self.shape):
                raise _Corrupt("a single chunk that does not cover the dataset")
            size, mask = filtered if filtered else (self.nbytes, 0)
            return bytearray(self._chunk(address, size, mask, self.nbytes))
        return self._read_chunked()

    def _chunk(self, address, size, mask, expected):
        """The decoded bytes of one chunk: ``size`` stored bytes at ``address``, filters undone."""
        if size > self.file._storage.size:
            raise _Corrupt(f"a chunk of {size} bytes is larger than the file")
        data = self.file.read(address, size)
        for position in reversed(range(len(self._filters_list))):
            if mask & (1 << position):
                continue
            ident = self._filters_list[position]
            if ident == 3:
                data = data[:-4]
            elif ident == 1:
                inflate = zlib.decompressobj()
                try:
                    out = inflate.decompress(data, expected + 1)
                except zlib.error as e:
                    raise _Corrupt(f"a compressed chunk does not inflate ({e})") from None
                if len(out) > expected or not inflate.eof:
                    raise _Corrupt("a compressed chunk inflates to more than its size")
                data = out
            elif ident == 2:
                item = self._file_dtype.itemsize
                if len(data) % item:
                    raise _Corrupt("a shuffled chunk is not a whole number of elements")
                data = np.frombuffer(data, np.uint8).reshape(item, -1).T.tobytes()
        if len(data) != expected:
            raise _Corrupt(f"a chunk holds {len(data)} bytes instead of {expected}")
        return data

    def _read_chunked(self):
        _, btree, chunk = self._layout_info
        rank = len(self.shape)
        if len(chunk) != rank or any(c <= 0 for c in chunk):
            raise _Corrupt(f"chunk dims {chunk} do not fit a dataset of rank {rank}")
        if _count(chunk) > max(_count(self.shape), 1 << 20):
            raise _Corrupt(f"chunks of {chunk} are larger than the dataset {self.shape}")   # inflation bound
        out = np.zeros(self.shape, dtype=self._file_dtype)
        if out.size == 0:
            return bytearray()
        item = self._file_dtype.itemsize
        chunk_bytes = _count(chunk) * item
        needed = _count(-(-s // c) for s, c in zip(self.shape, chunk))
        f = self.file
        done, seen, stack = set(), set(), [(btree, None)]
        while stack:
            address, level = stack.pop()
            if address in seen:
                raise _Corrupt(f"the chunk B-tree node at {address} is reached twice")
            seen.add(address)
            head = f.fields(f.read(address, 8 + 2 * f._o))
            if head.take(4) != b"TREE" or head.u8() != 1:
                raise _Corrupt(f"the chunk B-tree node at {address} is damaged")
            node_level, used = head.u8(), head.u16()
            if node_level > _MAX_BTREE_LEVEL or (level is not None and node_level != level - 1):
                raise _Corrupt(f"the chunk B-tree node at {address} has an inconsistent level")
            if used > needed:
                raise _Corrupt(f"the chunk B-tree node at {address} lists {used} chunks, the dataset has {needed}")
            key_size = 8 + 8 * (rank + 1)
            body = f.fields(f.read(address + head.pos + 2 * f._o, used * (key_size + f._o) + key_size))
            for _ in range(used):
                size, mask = body.u32(), body.u32()
                origin = tuple(body.u64() for _ in range(rank + 1))[:-1]
                child = body.offset()
                if node_level > 0:
                    stack.append((child, node_level))
                    continue
                if origin in done or any(o % c or o >= s for o, c, s in zip(origin, chunk, self.shape)):
                    raise _Corrupt(f"a chunk at {origin} is repeated or lies outside the dataset")
                done.add(origin)
                values = np.frombuffer(self._chunk(child, size, mask, chunk_bytes), self._file_dtype)
                values = values.reshape(chunk)
                region = tuple(slice(o, min(o + c, s)) for o, c, s in zip(origin, chunk, self.shape))
                out[region] = values[tuple(slice(0, r.stop - r.start) for r in region)]
        if len(done) != needed:
            raise _Corrupt(f"{needed - len(done)} of its {needed} chunks are missing")
        return bytearray(out.tobytes())


# ----------------------------------------------------------- attributes ---
class Attributes:
    """The attributes stored in an object's header, decoded on first use: ``name in attrs``,
    ``attrs.get(name)``, ``attrs[name]``. Strings come back as ``str`` (scalars) or object arrays of
    ``str``; fixed-length strings as ``bytes``; numbers as numpy arrays."""

    def __init__(self, owner):
        self._owner = owner
        self._raw = None
        self._dense = False

    def _messages(self):
        if self._raw is None:
            raw = {}
            for kind, flags, body in self._owner._messages():
                if kind == 0x15:
                    f = self._owner.file.fields(body)
                    f.skip(1)
                    if f.u8() & 1:
                        f.skip(2)
                    try:
                        self._dense = f.offset() is not None
                    except _Corrupt:
                        self._dense = True
                elif kind == 0x0C:
                    if flags & 0x02:
                        raise self._owner._fail("an attribute is a shared message", UnsupportedContentError)
                    try:
                        name, rest = self._name(body)
                    except _Corrupt as e:
                        raise self._owner._fail(f"an attribute message is damaged ({e})") from None
                    raw.setdefault(name, rest)
            self._raw = raw
        return self._raw

    def _name(self, body):
        f = self._owner.file.fields(body)
        version = f.u8()
        if version not in (1, 2, 3):
            raise _Corrupt(f"attribute message version {version}")
        flags = f.u8()
        if flags & 3:
            raise _Corrupt("an attribute with a shared datatype or dataspace")
        name_size, type_size, space_size = f.u16(), f.u16(), f.u16()
        if version == 3:
            f.skip(1)
        pad = (lambda n: n + (-n) % 8) if version == 1 else (lambda n: n)
        name = f.take(pad(name_size))[:name_size].split(b"\x00")[0].decode("utf-8", "replace")
        type_bytes = f.take(pad(type_size))
        space_bytes = f.take(pad(space_size))
        return name, (type_bytes, space_bytes, f.data[f.pos:])

    def __contains__(self, name):
        return name in self._messages() or self._missing_dense(name)

    def _missing_dense(self, name):
        if self._dense:
            raise self._owner._fail(f"its attributes are stored densely (a fractal heap), which tapeflow's HDF5 "
                                    f"reader does not read; attribute '{name}' cannot be looked up",
                                    UnsupportedContentError)
        return False

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __getitem__(self, name):
        messages = self._messages()
        if name not in messages:
            self._missing_dense(name)
            raise KeyError(name)
        try:
            return self._decode(*messages[name])
        except _Corrupt as e:
            raise self._owner.file.error(f"{self._owner.name} @{name}", f"the attribute is damaged ({e})") from None

    def _decode(self, type_bytes, space_bytes, data):
        file = self._owner.file
        t = parse_type(file.fields(type_bytes))
        shape = parse_shape(file.fields(space_bytes))
        if shape is None:
            return None
        count = _count(shape)
        if count * t.size > len(data):
            raise _Corrupt(f"{count} values of {t.size} bytes do not fit in its {len(data)} bytes")
        if t.kind == "reference":
            raise _Corrupt("it holds object references")
        if t.kind == "number":
            return np.frombuffer(data, t.dtype, count).astype(t.dtype.newbyteorder("=")).reshape(shape)[()]
        if t.kind == "string":
            values = [_strip(data[i * t.size:(i + 1) * t.size], t.padding) for i in range(count)]
            return np.bytes_(values[0]) if shape == () else np.array(values, dtype=f"S{max(t.size, 1)}").reshape(shape)
        f = file.fields(data)
        values = []
        for _ in range(count):
            length = f.u32()
            address = f.offset()
            index = f.u32()
            if length == 0:
                values.append("")
                continue
            raw = file.global_heap_object(address, index)
            if length > len(raw):
                raise _Corrupt(f"a string of {length} bytes in a heap object of {len(raw)}")
            try:
                values.append(raw[:length].decode("utf-8"))
            except UnicodeDecodeError as e:
                raise _Corrupt(f"a string is not valid UTF-8 ({e})") from None
        return values[0] if shape == () else np.array(values, dtype=object).reshape(shape)


def _strip(raw, padding):
    if padding == 0:       # null-terminated
        raw = raw.split(b"\x00")[0]
    elif padding == 1:     # null-padded
        raw = raw.rstrip(b"\x00")
    else:                  # space-padded
        raw = raw.rstrip(b" ")
    return raw


def read_expected(path, expected, source=None, follow_symlinks=True):
    """``{name: array}`` for every ``name: shape`` of ``expected``, read from the HDF5 file at ``path``
    (e.g. a SavedModel's ``variables.h5``). A missing dataset, one of another shape, or anything the
    reader refuses raises a FileContentError (or subclass) naming the file and dataset; data is read
    only once every dataset has been found with the expected shape."""
    source = source or path
    with H5File.open(path, source, follow_symlinks=follow_symlinks) as f:
        found = {}
        for name, shape in expected.items():
            item = f.root.get(name)
            if not isinstance(item, Dataset):
                raise FileContentError(f"Cannot read '{source}': it has no dataset '{name}'.")
            if tuple(item.shape) != tuple(shape):
                raise FileContentError(f"Cannot read '{source}': dataset '{name}' has shape {tuple(item.shape)}, "
                                       f"expected {tuple(shape)}.")
            found[name] = item
        return {name: item.read() for name, item in found.items()}
