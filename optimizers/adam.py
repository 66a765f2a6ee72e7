"""Adam: adaptive moment estimation (Kingma & Ba, 2014)."""
from .base_optimizer import Optimizer, runs_state_op


class Adam(Optimizer):
    """Adam.

    With ``t = iterations + 1`` and ``alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)``::

        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        w -= m * alpha / (sqrt(v) + epsilon)      # v -> max(v_hat, v) with amsgrad

    ``epsilon`` is the "epsilon hat" of the paper (not bias-corrected).

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1, beta_2: decay rates of the first and second moments.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        amsgrad: keep the maximum of the second moments (AMSGrad).
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name="adam", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(var_list, "velocity_hat")

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        slots = [self._momentums[i], self._velocities[i]] + ([self._velocity_hats[i]] if self.amsgrad else [])
        self._update_op("ApplyAdam", variable, gradient, slots, learning_rate, self.iterations,
                        beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                       "amsgrad": self.amsgrad})
        return config
