"""tf.autodiff: forward mode, plus second-order helpers (Hessians, HVPs, Newton steps)."""
from ..backprop import GradientTape  # noqa: F401
from .forwardprop import ForwardAccumulator  # noqa: F401
from .second_order import (flatten, hessian, hvp, input_gradient_norm, newton_cg_step,  # noqa: F401
                           newton_step, unflatten)
