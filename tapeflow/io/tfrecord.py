"""TFRecord files: a sequence of records, each framed as

    uint64 length | uint32 masked crc32c(length) | data | uint32 masked crc32c(data)

(little-endian; CRC-32C masked as LevelDB does), optionally inside one GZIP or ZLIB stream. Reading checks
every length and CRC and raises ``DataLossError`` naming the file and the record's offset; a length is
never trusted for an allocation: data is read in bounded chunks and a plain file's length is checked
against the bytes left in the file.
"""
import os
import struct
import zlib

from ..framework.errors import DataLossError, InvalidArgumentError, NotFoundError

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_CHUNK = 1 << 20
_WINDOW_BITS = {"": None, "ZLIB": 15, "GZIP": 31}


def _crc(data):
    from tapeflow.saving.crc32c import crc32c, masked   # saving sits above io in the layering
    return masked(crc32c(data))


def _compression_name(value):
    if value is None:
        return ""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, bytes):
        value = value.decode()
    if value not in _WINDOW_BITS:
        raise InvalidArgumentError(f"Unsupported compression_type: {value!r} (use '', 'GZIP' or 'ZLIB').")
    return value


class TFRecordCompressionType:
    NONE, ZLIB, GZIP = 0, 1, 2


class TFRecordOptions:
    """How a TFRecord file is compressed: ``compression_type`` '' / 'ZLIB' / 'GZIP' and zlib's level."""
    compression_type_map = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP"}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        if isinstance(compression_type, int):
            compression_type = self.compression_type_map.get(compression_type, compression_type)
        self.compression_type = _compression_name(compression_type)
        level = -1 if compression_level is None else int(compression_level)
        if not -1 <= level <= 9:
            raise ValueError(f"compression_level must be in [-1, 9], got {compression_level}")
        self.compression_level = compression_level
        self._level = level
        self.window_bits = window_bits
        for unused in ("flush_mode", "input_buffer_size", "output_buffer_size", "compression_method",
                       "mem_level", "compression_strategy"):
            setattr(self, unused, locals()[unused])

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _compression_name(cls.compression_type_map.get(options, options))

    def _wbits(self):
        base = _WINDOW_BITS[self.compression_type]
        if base is None or self.window_bits is None:
            return base
        return int(self.window_bits) + (16 if self.compression_type == "GZIP" else 0)


def frame(record):
    """The bytes of one record in the TFRecord framing."""
    header = struct.pack("<Q", len(record))
    return header + _FOOTER.pack(_crc(header)) + record + _FOOTER.pack(_crc(record))


class TFRecordWriter:
    """Writes records to a TFRecord file (``with tf.io.TFRecordWriter(path) as w: w.write(b"...")``)."""

    def __init__(self, path, options=None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(TFRecordOptions.get_compression_type_string(options))
        self._path = os.fspath(path.decode() if isinstance(path, bytes) else path)
        self._file = open(self._path, "wb")
        wbits = options._wbits()
        self._compressor = None if wbits is None else zlib.compressobj(options._level, zlib.DEFLATED, wbits)

    def _emit(self, data):
        if self._file is None:
            raise ValueError(f"TFRecordWriter for {self._path!r} is closed")
        self._file.write(self._compressor.compress(data) if self._compressor is not None else data)

    def write(self, record):
        """Appends one record (``bytes`` or a scalar string tensor)."""
        if hasattr(record, "numpy"):
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"TFRecordWriter.write expects bytes, got {type(record).__name__}")
        self._emit(frame(bytes(record)))

    def flush(self):
        if self._file is None:
            raise ValueError(f"TFRecordWriter for {self._path!r} is closed")
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush())
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class _DecompressingReader:
    """``read(n)`` over the decompressed content of a GZIP / ZLIB file, at most ``n`` bytes at a time."""

    def __init__(self, file, wbits, filename):
        self._file, self._filename = file, filename
        self._wbits = wbits
        self._decompressor = zlib.decompressobj(wbits)
        self._pending = b""

    def read(self, n):
        parts, wanted = [], n
        while wanted > 0:
            if not self._pending:
                self._pending = self._more(wanted)
                if not self._pending:
                    break
            part, self._pending = self._pending[:wanted], self._pending[wanted:]
            parts.append(part)
            wanted -= len(part)
        return b"".join(parts)

    def _more(self, wanted):
        limit = min(wanted, _CHUNK)
        try:
            while True:
                if self._decompressor.unconsumed_tail:
                    out = self._decompressor.decompress(self._decompressor.unconsumed_tail, limit)
                elif self._decompressor.eof:
                    rest = self._decompressor.unused_data
                    if not rest:
                        rest = self._file.read(_CHUNK)
                        if not rest:
                            return b""
                    self._decompressor = zlib.decompressobj(self._wbits)   # a further member (concatenated gzip)
                    out = self._decompressor.decompress(rest, limit)
                else:
                    chunk = self._file.read(_CHUNK)
                    if not chunk:
                        if not self._decompressor.eof and self._decompressor.unused_data == b"":
                            raise DataLossError(f"{self._filename}: truncated compressed stream")
                        return b""
                    out = self._decompressor.decompress(chunk, limit)
                if out:
                    return out
        except zlib.error as error:
            raise DataLossError(f"{self._filename}: corrupted compressed stream ({error})") from None


def read_records(filename, compression_type=None):
    """Yields the records of one TFRecord file as ``bytes``, checking every frame."""
    compression = _compression_name(compression_type)
    try:
        file = open(filename, "rb")
    except FileNotFoundError:
        raise NotFoundError(f"{filename}; No such file or directory") from None
    with file:
        size = os.fstat(file.fileno()).st_size
        wbits = _WINDOW_BITS[compression]
        stream = file if wbits is None else _DecompressingReader(file, wbits, filename)
        offset = 0
        while True:
            header = stream.read(_HEADER.size)
            if not header:
                return
            if len(header) < _HEADER.size:
                raise DataLossError(f"{filename}: truncated record at {offset} (header of {len(header)} bytes)")
            length, length_crc = _HEADER.unpack(header)
            if _crc(header[:8]) != length_crc:
                raise DataLossError(f"{filename}: corrupted record at {offset} (the length's CRC does not match)")
            if wbits is None and length + _FOOTER.size > size - offset - _HEADER.size:
                raise DataLossError(f"{filename}: truncated record at {offset} (length {length} runs past the "
                                    f"end of the file)")
            data = _read_exactly(stream, length)
            footer = stream.read(_FOOTER.size)
            if len(data) < length or len(footer) < _FOOTER.size:
                raise DataLossError(f"{filename}: truncated record at {offset} (length {length} runs past the "
                                    f"end of the data)")
            if _crc(data) != _FOOTER.unpack(footer)[0]:
                raise DataLossError(f"{filename}: corrupted record at {offset} (the data's CRC does not match)")
            yield data
            offset += _HEADER.size + length + _FOOTER.size


def _read_exactly(stream, length):
    parts, left = [], length
    while left > 0:
        part = stream.read(min(left, _CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file, as ``bytes`` (``tf.compat.v1.io.tf_record_iterator``)."""
    return read_records(path, TFRecordOptions.get_compression_type_string(options))
