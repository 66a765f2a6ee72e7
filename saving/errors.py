"""The exceptions a load raises for a file that is not what it should be.

Every problem with a file's content is a ``FileFormatError`` (a ``ValueError``)
whose message names the file, the member, dataset or config key, and what was
wrong. ``OSError`` stays for I/O itself (a missing or unreadable path).
"""


class FileFormatError(ValueError):
    """A file (or one of its members) is damaged, malformed, or not of the expected kind."""


class FileContentError(FileFormatError):
    """The file is readable but does not hold what was expected, or its data is damaged."""


class ArchiveError(FileFormatError):
    """The archive is not a readable zip file, or lacks a member."""


class ConfigContentError(FileContentError):
    """A model config (config.json, model_config) whose object entries have fields of the wrong type."""


class ExternalReferenceError(FileContentError):
    """The file points outside itself: an external or soft link, external raw storage, a virtual dataset,
    object references, or a member that is a symbolic link. Nothing outside the file is ever read."""


class UnsupportedContentError(FileContentError):
    """The file uses a feature of its format that tapeflow's reader does not read (it is not damaged)."""


class OversizedContentError(FileContentError):
    """The file declares more than the model can hold: a larger array, a larger member, more layers, a
    deeper config. Refused before anything of that size is read or allocated."""
