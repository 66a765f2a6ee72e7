"""``tf.summary``: TensorBoard summaries written as real event files by the ``tensorboard`` package
(``pip install tapeflow[tensorboard]``).

    writer = tf.summary.create_file_writer("logs/run1")
    with writer.as_default(step=0):
        tf.summary.scalar("loss", 0.25)
        tf.summary.histogram("weights", w)

The default writer, step and ``record_if`` condition belong to the current thread, as in TensorFlow.
Importing this module does not import tensorboard; creating a writer or writing a summary does.
"""
from . import experimental  # noqa: F401
from .ops import histogram, image, scalar, text, write  # noqa: F401
from .state import record_if, should_record_summaries  # noqa: F401
from .writer import SummaryWriter, create_file_writer, create_noop_writer, flush  # noqa: F401
