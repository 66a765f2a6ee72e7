"""Warnings in TensorFlow's style: ``WARNING:tapeflow:<message>`` on stderr, some capped per call site."""
import logging
import sys

logger = logging.getLogger("tapeflow")
_counts = {}


class _StderrHandler(logging.Handler):
    """Writes to whatever sys.stderr is at the time (so captured stderr sees it)."""

    def emit(self, record):
        sys.stderr.write(self.format(record) + "\n")


if not logger.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logger.addHandler(_handler)
    logger.propagate = False


def _user_call_site():
    """(file, line) of the first frame outside the tapeflow package."""
    frame = sys._getframe(2)
    while frame is not None and "/tapeflow/" in frame.f_code.co_filename.replace("\\", "/"):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def warn_first_n(message, n):
    """Logs ``message`` at most ``n`` times per user call site, as TensorFlow's log_first_n."""
    site = (_user_call_site(), message.split(",")[0])
    count = _counts.get(site, 0)
    if count < n:
        _counts[site] = count + 1
        logger.warning(message)


def warn(message):
    logger.warning(message)
