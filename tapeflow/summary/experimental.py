"""``tf.summary.experimental``: the default step and summary scopes."""
from .ops import summary_scope  # noqa: F401
from .state import get_step, set_step  # noqa: F401
