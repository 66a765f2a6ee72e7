"""Adamax: Adam with the infinity norm (Kingma & Ba, 2014, section 7)."""
from .base_optimizer import Optimizer, runs_state_op


class Adamax(Optimizer):
    """Adamax.

    With ``t = iterations + 1``::

        m += (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w -= lr * m / ((1 - beta_1**t) * (u + epsilon))

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1: decay rate of the first moment. Defaults to 0.9.
        beta_2: decay rate of the infinity norm. Defaults to 0.999.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="adamax", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m, self._u = self.add_optimizer_variables(var_list, ["momentum", "norm"])

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        self._update_op("ApplyAdamax", variable, gradient, [self._m[i], self._u[i]], learning_rate, self.iterations,
                        beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
