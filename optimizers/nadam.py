"""Nadam: Adam with Nesterov momentum (Dozat, 2015)."""
from .base_optimizer import Optimizer, runs_state_op


class Nadam(Optimizer):
    """Nadam.

    With ``t = iterations + 1``, the momentum schedule
    ``u_t = beta_1 * (1 - 0.5 * 0.96**t)`` and ``P_t = u_1 * ... * u_t``
    (the ``u_product`` variable)::

        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        m_hat = u_{t+1} * m / (1 - P_t * u_{t+1}) + (1 - u_t) * g / (1 - P_t)
        v_hat = v / (1 - beta_2**t)
        w -= m_hat * lr / (sqrt(v_hat) + epsilon)

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1, beta_2: decay rates of the first and second moments.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="nadam", **kwargs):
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
        var_list = list(var_list)
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        dtype = var_list[0].dtype if var_list else "float32"
        self._u_product = self.add_variable(shape=(), initializer="ones", dtype=dtype, name="u_product")

    def _backend_update_step(self, grads, variables, learning_rate):
        # P_t = P_{t-1} * u_t, once per step, before the variables are updated.
        self._state_update("UpdateNadamProduct", [self._u_product], [self.iterations], beta_1=self.beta_1)
        super()._backend_update_step(grads, variables, learning_rate)

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        self._update_op("ApplyNadam", variable, gradient, [self._momentums[i], self._velocities[i]], learning_rate,
                        self.iterations, self._u_product, beta_1=self.beta_1, beta_2=self.beta_2,
                        epsilon=self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
