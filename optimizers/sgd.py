"""SGD: gradient descent with optional (Nesterov) momentum."""
from .base_optimizer import Optimizer, _is_float, runs_state_op


class SGD(Optimizer):
    """Gradient descent (with momentum).

    ``w -= lr * g``; with ``momentum``: ``m = momentum * m - lr * g`` and
    ``w += m``, or ``w += momentum * m - lr * g`` when ``nesterov=True``.

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.01.
        momentum: float in [0, 1]. Defaults to 0.0 (no momentum slot).
        nesterov: Whether to apply Nesterov momentum.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="sgd", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if not _is_float(momentum) or not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be a float between [0, 1]. Received: momentum={momentum!r}")
        self.momentum = momentum
        self.nesterov = nesterov

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.momentums = self.add_optimizer_variables(var_list, "momentum") if self.momentum != 0 else []

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        slots = [self.momentums[self._get_variable_index(variable)]] if self.momentum != 0 else []
        self._update_op("ApplySGD", variable, gradient, slots, learning_rate, momentum=float(self.momentum),
                        nesterov=bool(self.nesterov))

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
