"""Adafactor (Shazeer & Stern, 2018): second moments factored into row and column means for matrices,
Keras 3's update rule written with ops and assign."""
from tapeflow.ops import array_ops as A
from tapeflow.ops import math_ops as M
from tapeflow.ops import reduction_ops as R

from .base_optimizer import Optimizer, _var_name


def _rms(x):
    return M.sqrt(R.reduce_mean(M.square(x)))


class Adafactor(Optimizer):
    """Adafactor.

    With ``t = iterations + 1``, ``rho = min(lr, 1 / sqrt(t))`` and ``beta = 1 - t^beta_2_decay``, for a
    variable of rank >= 2 the row means ``r`` and column means ``c`` of ``g^2 + epsilon_1`` are averaged with
    ``beta`` and ``v = (r / mean(r))[..., None] * c[..., None, :]``; a vector keeps ``v`` itself. Then::

        u = g / sqrt(v);  u /= max(1, rms(u) / clip_threshold)
        w -= max(epsilon_2, rms(w)) * rho * u

    Args:
        learning_rate: float, schedule or callable. Defaults to 0.001.
        beta_2_decay: decay exponent of the second moment. Defaults to -0.8.
        epsilon_1: added to the squared gradients. Defaults to 1e-30.
        epsilon_2: floor of the variable's RMS in the step size. Defaults to 1e-3.
        clip_threshold: the update's RMS threshold. Defaults to 1.0.
        relative_step: with a float learning rate, cap it at ``1 / sqrt(t)``. Defaults to True.
        **kwargs: The base optimizer arguments (see ``Optimizer``).
    """

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step=True, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None, name="adafactor", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for variable in var_list:
            shape = tuple(variable.shape)
            name = _var_name(variable)
            if len(shape) < 2:   # not factored: scalar placeholders keep Keras's variable order
                self._r.append(self.add_variable((), name=name))
                self._c.append(self.add_variable((), name=name))
            else:
                self._r.append(self.add_variable(shape[:-1], dtype=variable.dtype, name=name))
                self._c.append(self.add_variable(shape[:-2] + shape[-1:], dtype=variable.dtype, name=name))
            self._v.append(self.add_variable_from_reference(variable, name="velocity"))

    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        r, c, v = self._r[i], self._c[i], self._v[i]
        lr = M.cast(learning_rate, variable.dtype)
        gradient = M.cast(gradient, variable.dtype)
        step = M.cast(M.add(self.iterations, 1), variable.dtype)
        inverse_root_step = M.divide(1.0, M.sqrt(step))
        if not callable(self._learning_rate) and self.relative_step:
            lr = M.minimum(lr, inverse_root_step)
        rho = M.minimum(lr, inverse_root_step)
        alpha = M.multiply(M.maximum(M.cast(self.epsilon_2, variable.dtype), _rms(variable)), rho)
        squared = M.add(M.square(gradient), self.epsilon_1)
        beta = M.subtract(1.0, M.pow(step, self.beta_2_decay))
        if len(variable.shape) >= 2:
            r.assign(M.add(M.multiply(beta, r), M.multiply(M.subtract(1.0, beta), R.reduce_mean(squared, axis=-1))))
            c.assign(M.add(M.multiply(beta, c), M.multiply(M.subtract(1.0, beta), R.reduce_mean(squared, axis=-2))))
            v.assign(M.multiply(A.expand_dims(M.divide(r, R.reduce_mean(r, axis=-1, keepdims=True)), -1),
                                A.expand_dims(c, -2)))
        else:
            v.assign(M.add(M.multiply(beta, v), M.multiply(M.subtract(1.0, beta), squared)))
        u = M.divide(gradient, M.sqrt(v))
        u = M.divide(u, M.maximum(1.0, M.divide(_rms(u), self.clip_threshold)))
        variable.assign_sub(M.multiply(alpha, u))

    def get_config(self):
        config = super().get_config()
        config.update({"beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                       "clip_threshold": self.clip_threshold, "relative_step": self.relative_step})
        return config
