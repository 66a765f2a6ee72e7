"""FTRL-Proximal (McMahan et al., 2013), Keras 3's update rule, written with ops and assign."""
from tapeflow.ops import math_ops as M

from .base_optimizer import Optimizer


class Ftrl(Optimizer):
    """Follow The Regularized Leader.

    With accumulator ``n`` (squared gradients) and linear term ``z``, ``p = -learning_rate_power``::

        g' = g + 2 * l2_shrinkage * w
        n' = n + g^2
        z += g' - (n'^p - n^p) / lr * w
        w = (clip(z, -l1, l1) - z) / (n'^p / lr + 2 * (l2 + beta / (2 * lr)))

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        learning_rate_power: <= 0, how the step shrinks with the accumulated squares. Defaults to -0.5.
        initial_accumulator_value: >= 0, the accumulators' start. Defaults to 0.1.
        l1_regularization_strength, l2_regularization_strength, l2_shrinkage_regularization_strength: >= 0.
        beta: >= 0, added to the L2 strength as ``beta / (2 * lr)``. Defaults to 0.0.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="ftrl", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        checks = (("initial_accumulator_value", initial_accumulator_value, 0.0),
                  ("l1_regularization_strength", l1_regularization_strength, 0.0),
                  ("l2_regularization_strength", l2_regularization_strength, 0.0),
                  ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength, 0.0),
                  ("beta", beta, 0.0))
        for what, value, low in checks:
            if value < low:
                raise ValueError(f"`{what}` needs to be non-negative. Received: {what}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulators, self._linears = self.add_optimizer_variables(
            var_list, ["accumulator", "linear"], initializer=[self.initial_accumulator_value, "zeros"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        accumulator, linear = self._accumulators[i], self._linears[i]
        lr = M.cast(learning_rate, variable.dtype)
        gradient = M.cast(gradient, variable.dtype)
        power = -self.learning_rate_power
        l2 = M.add(self.l2_regularization_strength, M.divide(self.beta, M.multiply(2.0, lr)))
        shrunk = M.add(gradient, M.multiply(2.0 * self.l2_shrinkage_regularization_strength, variable))
        new_accumulator = M.add(accumulator, M.square(gradient))
        new_power = M.pow(new_accumulator, power)
        linear.assign_add(M.subtract(shrunk, M.multiply(
            M.divide(M.subtract(new_power, M.pow(accumulator, power)), lr), variable)))
        quadratic = M.add(M.divide(new_power, lr), M.multiply(2.0, l2))
        l1 = self.l1_regularization_strength
        clipped = M.clip_by_value(linear, -l1, l1)
        variable.assign(M.divide(M.subtract(clipped, linear), quadratic))
        accumulator.assign(new_accumulator)

    def get_config(self):
        config = super().get_config()
        config.update({"learning_rate_power": self.learning_rate_power,
                       "initial_accumulator_value": self.initial_accumulator_value,
                       "l1_regularization_strength": self.l1_regularization_strength,
                       "l2_regularization_strength": self.l2_regularization_strength,
                       "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                       "beta": self.beta})
        return config
