"""Lion: evolved sign momentum (Chen et al., 2023)."""
from .base_optimizer import Optimizer, runs_state_op


class Lion(Optimizer):
    """Lion.

    ::

        w -= lr * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Lion's updates have a larger norm than Adam's; use a learning rate
    3-10x smaller (and a weight decay 3-10x larger).

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1: interpolation factor of the update direction, in (0, 1]. Defaults to 0.9.
        beta_2: decay rate of the momentum. Defaults to 0.99.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="lion", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if not 0 < beta_1 <= 1:
            raise ValueError("Argument `beta_1` must be in the (0, 1] range: with beta_1=0 Lion degenerates to "
                             f"SignSGD. Received: beta_1={beta_1!r}")
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        m = self._momentums[self._get_variable_index(variable)]
        self._update_op("ApplyLion", variable, gradient, [m], learning_rate, beta_1=self.beta_1, beta_2=self.beta_2)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2})
        return config
