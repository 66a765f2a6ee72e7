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
