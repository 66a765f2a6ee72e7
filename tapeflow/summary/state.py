"""The summary state of each thread, as in TensorFlow: the default writer, the default step and the
recording condition (``record_if``)."""
import contextlib
import threading

import numpy as np


class _State(threading.local):
    def __init__(self):
        self.writer = None
        self.step = None
        self.condition = True


state = _State()

_NO_STEP = ("No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()")


def set_step(step):
    """Sets the default step of summaries in this thread (an int, or a Variable read at each write)."""
    state.step = step


def get_step():
    """The default step of summaries in this thread (None if none was set)."""
    return state.step


def resolve_step(step):
    """The int64 step for a write: ``step``, else the default step; a ValueError when there is none."""
    if step is None:
        step = state.step
        if step is None:
            raise ValueError(_NO_STEP)
    value = np.asarray(step.numpy() if hasattr(step, "numpy") else step)
    if value.shape != () or value.dtype.kind not in "biuf" or value != np.floor(value):
        raise ValueError(f"The summary step must be an integer scalar, got {step!r}.")
    return int(value)


@contextlib.contextmanager
def record_if(condition):
    """Records summaries in the block only when ``condition`` (a bool, or a callable evaluated at each
    write) is true."""
    previous = state.condition
    state.condition = condition
    try:
        yield
    finally:
        state.condition = previous


def should_record_summaries():
    """True when a write now would be recorded: a default writer exists and ``record_if`` allows it."""
    if state.writer is None:
        return False
    condition = state.condition
    if callable(condition):
        condition = condition()
    return bool(np.asarray(condition.numpy() if hasattr(condition, "numpy") else condition))
