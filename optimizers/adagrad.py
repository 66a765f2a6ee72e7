"""Adagrad: per-parameter learning rates scaled by the accumulated squared gradients."""
from .base_optimizer import Optimizer, runs_state_op


class Adagrad(Optimizer):
    """Adagrad: ``acc += g**2; w -= lr * g / sqrt(acc + epsilon)``.

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        initial_accumulator_value: starting value of the accumulators. Defaults to 0.1.
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None, gradient_accumulation_steps=None,
                 name="adagrad", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulators = self.add_optimizer_variables(var_list, "accumulator",
                                                          initializer=self.initial_accumulator_value)

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        acc = self._accumulators[self._get_variable_index(variable)]
        self._update_op("ApplyAdagrad", variable, gradient, [acc], learning_rate, epsilon=self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update({"initial_accumulator_value": self.initial_accumulator_value, "epsilon": self.epsilon})
        return config
