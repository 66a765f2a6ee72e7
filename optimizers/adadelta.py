"""Adadelta: step sizes from running averages of squared gradients and squared updates (Zeiler, 2012)."""
from .base_optimizer import Optimizer, runs_state_op


class Adadelta(Optimizer):
    """Adadelta.

    ::

        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = -sqrt(acc_d + epsilon) * g / sqrt(acc_g + epsilon)
        acc_d = rho * acc_d + (1 - rho) * delta**2
        w += lr * delta

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        rho: decay rate. Defaults to 0.95.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="adadelta", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            var_list, ["accumulated_grad", "accumulated_delta_var"])

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        self._update_op("ApplyAdadelta", variable, gradient,
                        [self._accumulated_grads[i], self._accumulated_delta_vars[i]], learning_rate,
                        rho=self.rho, epsilon=self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon})
        return config
