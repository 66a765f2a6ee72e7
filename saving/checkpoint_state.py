"""The ``checkpoint`` state file of a checkpoint directory, in TensorFlow's text format.

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"
    all_model_checkpoint_timestamps: 1717171717.25
    all_model_checkpoint_timestamps: 1717171718.5
    last_preserved_timestamp: 1717171710.0

Paths inside the directory are written relative to it and read back joined to it, as TensorFlow does.
Strings use the protobuf text format's C escapes. The file is written atomically; reading parses only
these four fields and fails with a FileContentError naming the file and line for anything else.
"""
import math
import os
import re

from .atomic import atomic_file
from .errors import FileContentError

STATE_FILENAME = "checkpoint"
_MAX_STATE_BYTES = 16 << 20
_STRING_FIELDS = ("model_checkpoint_path", "all_model_checkpoint_paths")
_FLOAT_FIELDS = ("all_model_checkpoint_timestamps", "last_preserved_timestamp")
_LINE = re.compile(r"^\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|nan)$", re.IGNORECASE)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\", "a": "\a", "b": "\b",
                   "f": "\f", "v": "\v", "?": "?"}


class CheckpointState:
    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths=(), all_model_checkpoint_timestamps=(),
                 last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return (f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, "
                f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})")


# ----------------------------------------------------------------- write ---
def _escape(text):
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\'\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def _relative(path, directory):
    """``path`` relative to ``directory`` when it lies inside it, else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.path.abspath(directory))
    return absolute if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def write_state(directory, model_checkpoint_path, all_model_checkpoint_paths, all_model_checkpoint_timestamps=None,
                last_preserved_timestamp=None, filename=STATE_FILENAME):
    lines = [f'model_checkpoint_path: "{_escape(_relative(model_checkpoint_path, directory))}"']
    lines += [f'all_model_checkpoint_paths: "{_escape(_relative(p, directory))}"' for p in all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in all_model_checkpoint_timestamps or ()]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {float(last_preserved_timestamp)!r}")
    with atomic_file(os.path.join(directory, filename)) as tmp:
        with open(tmp, "w", encoding="ascii") as f:
            f.write("\n".join(lines) + "\n")


# ------------------------------------------------------------------ read ---
def _unescape(body, fail):
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char == '"':
            fail("an unescaped quote inside a string")
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        if i + 1 >= len(body):
            fail("a string ending in a lone backslash")
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[nxt].encode("ascii")
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()
            if int(digits, 8) > 255:
                fail(f"the octal escape \\{digits} is out of range")
            out.append(int(digits, 8))
            i += 1 + len(digits)
        elif nxt in "xX":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            if digits is None:
                fail("a \\x escape without hex digits")
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        else:
            fail(f"the unknown escape \\{nxt}")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        fail("a string that is not valid UTF-8")


def _parse(text, path):
    values = {name: [] for name in _STRING_FIELDS + _FLOAT_FIELDS}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue

        def fail(problem):
            raise FileContentError(f"Cannot read the checkpoint state file '{path}', line {number}: {problem}.")
        match = _LINE.match(line)
        if match is None:
            fail("expected `field: value`")
        name, value = match.groups()
        if name in _STRING_FIELDS:
            if len(value) < 2 or value[0] != '"' or value[-1] != '"':
                fail(f"the value of {name} must be a double-quoted string")
            values[name].append(_unescape(value[1:-1], fail))
        elif name in _FLOAT_FIELDS:
            if not _FLOAT.match(value):
                fail(f"the value of {name} must be a number, not {value[:40]!r}")
            number_value = float(value)
            if not math.isfinite(number_value):
                fail(f"the value of {name} must be finite")
            values[name].append(number_value)
        else:
            fail(f"unknown field {name!r}")
    for name in ("model_checkpoint_path", "last_preserved_timestamp"):
        if len(values[name]) > 1:
            raise FileContentError(f"Cannot read the checkpoint state file '{path}': {name} appears "
                                   f"{len(values[name])} times.")
    return values


def read_state(directory, filename=STATE_FILENAME):
    """The CheckpointState of ``directory`` (paths joined to it), or None when it has no state file."""
    path = os.path.join(directory, filename)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        raw = f.read(_MAX_STATE_BYTES + 1)
    if len(raw) > _MAX_STATE_BYTES:
        raise FileContentError(f"Cannot read the checkpoint state file '{path}': it is larger than "
                               f"{_MAX_STATE_BYTES} bytes.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileContentError(f"Cannot read the checkpoint state file '{path}': it is not text ({e}).") from e
    values = _parse(text, path)
    if not values["model_checkpoint_path"]:
        return None

    def joined(p):
        return p if os.path.isabs(p) else os.path.join(directory, p)
    return CheckpointState(joined(values["model_checkpoint_path"][0]),
                           [joined(p) for p in values["all_model_checkpoint_paths"]],
                           values["all_model_checkpoint_timestamps"],
                           (values["last_preserved_timestamp"] or [0.0])[0])
