"""GroupNormalization: channels split into ``groups``; each sample normalised over every group's values.

``groups=1`` is LayerNormalization over all non-batch axes, ``groups=channels``
is instance normalisation. ``gamma``/``beta`` are per channel, as in Keras.
"""
from tapeflow.ops import array_ops, math_ops, nn_ops

from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from .affine_arguments import affine_config, set_affine_arguments
from ..serialization_lib import keras_export


@keras_export("keras.layers.GroupNormalization")
class GroupNormalization(Layer):
    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups = int(groups)
        self.axis = int(axis)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        set_affine_arguments(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                             beta_constraint, gamma_constraint)
        self.gamma = None
        self.beta = None

    def build(self, input_shape):
        rank = len(input_shape)
        if not -rank <= self.axis < rank or self.axis % rank == 0:
            raise ValueError(f"Invalid axis {self.axis} for GroupNormalization: the input has rank {rank} and the "
                             "batch axis cannot be normalised over.")
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.input_spec = InputSpec(ndim=rank, axes={self.axis: dim})
        if self.scale:
            self.gamma = self.add_weight(shape=(dim,), name="gamma", initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=(dim,), name="beta", initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.built = True

    def call(self, inputs):
        shape = list(inputs.shape)
        rank = len(shape)
        axis = self.axis % rank
        dim = shape[axis]
        per_group = dim // self.groups
        # (..., channels, ...) -> (..., groups, channels per group, ...): statistics over all but batch and group.
        grouped_shape = shape[:axis] + [self.groups, per_group] + shape[axis + 1:]
        grouped = array_ops.reshape(inputs, grouped_shape)
        reduce_axes = [i for i in range(1, rank + 1) if i != axis]
        mean, variance = nn_ops.moments(grouped, reduce_axes, keepdims=True)
        params_shape = [1] * (rank + 1)
        params_shape[axis], params_shape[axis + 1] = self.groups, per_group

        def param(v):
            return None if v is None else math_ops.cast(array_ops.reshape(v, params_shape), grouped.dtype)
        out = nn_ops.batch_normalization(grouped, mean, variance, param(self.beta), param(self.gamma),
                                         self.epsilon)
        return array_ops.reshape(out, shape)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"groups": self.groups, "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                       "scale": self.scale, **affine_config(self)})
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))
