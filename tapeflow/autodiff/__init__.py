"""tf.autodiff: forward mode and (with the optimizers issue) second-order helpers."""
from ..backprop import GradientTape  # noqa: F401
from .forwardprop import ForwardAccumulator  # noqa: F401
