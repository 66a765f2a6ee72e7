"""RMSprop: divide the gradient by a running root mean square of its recent magnitudes."""
from .base_optimizer import Optimizer, runs_state_op


class RMSprop(Optimizer):
    """RMSprop.

    ::

        v = rho * v + (1 - rho) * g**2
        centered:  a = rho * a + (1 - rho) * g;  denom = v - a**2 + epsilon
        otherwise: denom = v + epsilon
        inc = lr * g / sqrt(denom)
        momentum > 0: mom = momentum * mom + inc; w -= mom      otherwise: w -= inc

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        rho: discounting factor of the running average. Defaults to 0.9.
        momentum: momentum factor. Defaults to 0.0 (no momentum slot).
        epsilon: small constant for numerical stability. Defaults to 1e-7.
        centered: normalise by the estimated variance of the gradient
            instead of its second moment (adds an ``average_gradient`` slot).
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name="rmsprop", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        # One call per slot kind: all velocities, then all momentums, then all average gradients.
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._momentums = self.add_optimizer_variables(var_list, "momentum") if self.momentum > 0 else []
        self._average_gradients = self.add_optimizer_variables(var_list, "average_gradient") \
            if self.centered else []

    @runs_state_op
    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        slots = ([self._velocities[i]] + ([self._momentums[i]] if self.momentum > 0 else [])
                 + ([self._average_gradients[i]] if self.centered else []))
        self._update_op("ApplyRMSProp", variable, gradient, slots, learning_rate, rho=self.rho,
                        epsilon=self.epsilon, momentum=float(self.momentum), centered=bool(self.centered))

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                       "centered": self.centered})
        return config
