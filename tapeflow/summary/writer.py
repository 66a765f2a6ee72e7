"""``tf.summary.create_file_writer``: TensorBoard event files written by the ``tensorboard`` package's own
``EventFileWriter`` (an optional dependency: ``pip install tapeflow[tensorboard]``)."""
import atexit
import contextlib
import os
import time
import weakref

from .state import resolve_step, state

_INSTALL = ("tf.summary writes TensorBoard event files with the `tensorboard` package, which is not installed. "
            "Install it with: pip install tapeflow[tensorboard]")
_open_writers = weakref.WeakSet()


def tensorboard_modules():
    """(event_pb2, summary_pb2, EventFileWriter) from the tensorboard package, or a clear ImportError."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return event_pb2, summary_pb2, EventFileWriter


class SummaryWriter:
    """The base of summary writers: ``as_default(step=None)``, ``set_as_default``, ``flush``, ``close``."""

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Makes this the default writer in the block; with ``step``, also the default step (the
        previous step comes back when the block ends)."""
        previous_writer, previous_step = state.writer, state.step
        state.writer = self
        if step is not None:
            state.step = step
        try:
            yield self
        finally:
            state.writer = previous_writer
            if step is not None:
                state.step = previous_step

    def set_as_default(self, step=None):
        """Makes this the default writer of the thread (and ``step`` the default step, if given)."""
        state.writer = self
        if step is not None:
            state.step = step

    def init(self):
        """Nothing to do: the writer is ready when created."""

    def flush(self):
        pass

    def close(self):
        pass

    def write_summary(self, summary, step):
        """Writes a ``summary_pb2.Summary`` at ``step``; returns whether something was written."""
        return False


class NoopSummaryWriter(SummaryWriter):
    """``tf.summary.create_noop_writer()``: a default writer that writes nothing."""


class FileWriter(SummaryWriter):
    """Writes summaries to an event file ``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>`` in ``logdir``."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        event_pb2, _, EventFileWriter = tensorboard_modules()
        self._event_pb2 = event_pb2
        self.logdir = os.fspath(logdir)
        self._writer = EventFileWriter(self.logdir, max_queue_size=10 if max_queue is None else int(max_queue),
                                       flush_secs=(120000 if flush_millis is None else flush_millis) / 1000.0,
                                       filename_suffix=".v2" if filename_suffix is None else filename_suffix)
        self._closed = False
        _open_writers.add(self)

    def write_summary(self, summary, step):
        if self._closed:
            raise RuntimeError(f"The summary writer for logdir '{self.logdir}' is closed; create a new one with "
                               "tf.summary.create_file_writer().")
        self._writer.add_event(self._event_pb2.Event(wall_time=time.time(), step=resolve_step(step),
                                                     summary=summary))
        return True

    def flush(self):
        """Writes everything queued so far to disk."""
        if not self._closed:
            self._writer.flush()

    def close(self):
        """Flushes and closes the event file; later writes raise."""
        if not self._closed:
            self._closed = True
            self._writer.close()
            _open_writers.discard(self)

    def __repr__(self):
        return f"<tapeflow.summary.FileWriter logdir={self.logdir!r}{' (closed)' if self._closed else ''}>"


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    """A writer of TensorBoard event files in ``logdir`` (created if needed).

    ``max_queue`` summaries are buffered (default 10) and flushed at least every ``flush_millis``
    milliseconds (default 120000); call ``flush()`` or ``close()`` to write at once.
    """
    if logdir is None:
        raise ValueError("Argument `logdir` cannot be None.")
    return FileWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    return NoopSummaryWriter()


def flush(writer=None, name=None):
    """Flushes ``writer``, or the default writer."""
    writer = state.writer if writer is None else writer
    if writer is not None:
        writer.flush()


@atexit.register
def _flush_open_writers():
    for writer in list(_open_writers):
        try:
            writer.flush()
        except Exception:  # the process is ending: a writer that cannot flush has nothing left to save
            pass
