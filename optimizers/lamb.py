"""LAMB: Adam with a layer-wise trust ratio (You et al., 2019), Keras 3's update rule with ops and assign."""
from tapeflow.ops import core_ops as C
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .base_optimizer import Optimizer


class Lamb(Optimizer):
    """LAMB.

    With ``t = iterations + 1``::

        m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
        u = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
        w -= lr * r * u,  r = ||w|| / ||u|| when both norms are positive, else 1

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_1, beta_2: decay rates of the first and second moments. Defaults to 0.9 and 0.999.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="lamb", **kwargs):
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
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        lr = M.cast(learning_rate, variable.dtype)
        gradient = M.cast(gradient, variable.dtype)
        step = M.cast(M.add(self.iterations, 1), variable.dtype)
        beta_1_power = M.pow(M.cast(self.beta_1, variable.dtype), step)
        beta_2_power = M.pow(M.cast(self.beta_2, variable.dtype), step)
        m.assign_add(M.multiply(M.subtract(gradient, m), 1 - self.beta_1))
        v.assign_add(M.multiply(M.subtract(M.square(gradient), v), 1 - self.beta_2))
        m_hat = M.divide(m, M.subtract(1.0, beta_1_power))
        v_root = M.add(M.sqrt(M.divide(v, M.subtract(1.0, beta_2_power))), self.epsilon)
        update = M.divide(m_hat, v_root)
        w_norm = M.sqrt(R.reduce_sum(M.square(variable)))
        u_norm = M.sqrt(R.reduce_sum(M.square(update)))
        one = M.cast(1.0, variable.dtype)
        ratio = C.where(M.greater(w_norm, 0.0), C.where(M.greater(u_norm, 0.0), M.divide(w_norm, u_norm), one),
                        one)
        variable.assign_sub(M.multiply(M.multiply(lr, ratio), update))

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
