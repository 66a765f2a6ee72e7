"""LayerNormalization: normalize each sample over ``axis`` (the features), then scale and shift."""
from tapeflow.ops import array_ops, math_ops, nn_ops, reduction_ops

from ..layer import Layer, deserialize_nested_objects
from .affine_arguments import affine_config, set_affine_arguments
from ..serialization_lib import keras_export


@keras_export("keras.layers.LayerNormalization")
class LayerNormalization(Layer):
    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else int(axis)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.rms_scaling = bool(rms_scaling)
        set_affine_arguments(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                             beta_constraint, gamma_constraint)
        self.supports_masking = True
        self.gamma = None
        self.beta = None

    def build(self, input_shape):
        rank = len(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f"Invalid axis {a} for LayerNormalization: the input has rank {rank}.")
        self._axes = sorted(a % rank for a in axes)
        shape = tuple(input_shape[a] for a in self._axes)
        if self.scale:
            self.gamma = self.add_weight(name="gamma", shape=shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(name="beta", shape=shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.built = True

    def _broadcastable(self, v, rank):
        shape = [1] * rank
        for a, d in zip(self._axes, v.shape):
            shape[a] = d
        return v if self._axes == list(range(rank - len(self._axes), rank)) else array_ops.reshape(v, shape)

    def call(self, inputs):
        rank = inputs.ndim
        M = math_ops
        if self.rms_scaling:
            variance = reduction_ops.reduce_mean(M.square(inputs), self._axes, keepdims=True)
            out = M.multiply(inputs, M.rsqrt(M.add(variance, self.epsilon)))
            if self.gamma is not None:
                out = M.multiply(out, self._broadcastable(self.gamma, rank))
            return out
        mean, variance = nn_ops.moments(inputs, self._axes, keepdims=True)
        gamma = None if self.gamma is None else self._broadcastable(self.gamma, rank)
        beta = None if self.beta is None else self._broadcastable(self.beta, rank)
        return nn_ops.batch_normalization(inputs, mean, variance, beta, gamma, self.epsilon)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"axis": self.axis, "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                       "rms_scaling": self.rms_scaling, **affine_config(self)})
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))
