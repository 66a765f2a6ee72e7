"""``tf.autograph.experimental``."""
from .converter import do_not_convert  # noqa: F401
