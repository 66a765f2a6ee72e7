"""BatchNormalization with Keras 3 semantics.

Training (``training=True`` and ``layer.trainable``): normalize with the batch
mean and biased variance (one fused numba op, forward and backward), and move
the moving statistics ``moving = moving * momentum + batch * (1 - momentum)``.
Otherwise, including a frozen layer called with ``training=True``, normalize
with the moving statistics.
"""
from tapeflow.ops import array_ops, batchnorm_ops, math_ops, nn_ops

from .. import initializers
from ..input_spec import InputSpec
from ..layer import Layer, deserialize_nested_objects
from .affine_arguments import set_affine_arguments
from ..serialization_lib import keras_export, serialize_keras_object


@keras_export("keras.layers.BatchNormalization")
class BatchNormalization(Layer):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, synchronized=False, **kwargs):
        super().__init__(**kwargs)
        if renorm:
            raise ValueError("BatchNormalization: batch renormalization (renorm=True) is not supported by tapeflow.")
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(f"BatchNormalization normalizes along a single axis. Received: axis={axis}")
            axis = axis[0]
        self.axis = int(axis)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        set_affine_arguments(self, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                             beta_constraint, gamma_constraint)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.synchronized = bool(synchronized)
        self.supports_masking = True
        self.gamma = None
        self.beta = None

    def build(self, input_shape):
        rank = len(input_shape)
        axis = self.axis % rank if rank else 0
        if not rank or not -rank <= self.axis < rank:
            raise ValueError(f"Invalid axis {self.axis} for BatchNormalization: the input has rank {rank} "
                             f"(shape {tuple(input_shape)}).")
        dim = input_shape[axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        shape = (dim,)
        if self.scale:
            self.gamma = self.add_weight(shape=shape, name="gamma", initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight(shape=shape, name="beta", initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.moving_mean = self.add_weight(shape=shape, name="moving_mean", initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight(shape=shape, name="moving_variance",
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.input_spec = InputSpec(ndim=rank, axes={self.axis: dim})
        self._channel_axis = axis
        self.built = True

    def _params(self, like):
        dim = self.moving_mean.shape[0]
        dtype = like.dtype
        gamma = self.gamma if self.gamma is not None else array_ops.ones((dim,), dtype=dtype)
        beta = self.beta if self.beta is not None else array_ops.zeros((dim,), dtype=dtype)
        return gamma, beta

    def call(self, inputs, training=None, mask=None):
        if training and self.trainable:
            return self._train(inputs)
        gamma, beta = self._params(inputs)
        rank = inputs.ndim
        mean, variance = self.moving_mean, self.moving_variance
        if self._channel_axis != rank - 1:
            shape = [1] * rank
            shape[self._channel_axis] = -1
            mean, variance, gamma, beta = (array_ops.reshape(t, shape) for t in (mean, variance, gamma, beta))
        return nn_ops.batch_normalization(inputs, mean, variance, beta, gamma, self.epsilon)

    def _train(self, inputs):
        gamma, beta = self._params(inputs)
        rank = inputs.ndim
        last = self._channel_axis == rank - 1
        x = inputs
        if not last:
            perm = [a for a in range(rank) if a != self._channel_axis] + [self._channel_axis]
            x = array_ops.transpose(x, perm)
        y, mean, variance = batchnorm_ops.fused_batch_norm_training(x, gamma, beta, self.epsilon)
        if not last:
            inverse = [0] * rank
            for i, p in enumerate(perm):
                inverse[p] = i
            y = array_ops.transpose(y, inverse)
        self._update_moving_statistics(mean, variance)
        return y

    def _update_moving_statistics(self, mean, variance):
        """moving = moving * momentum + batch * (1 - momentum), in the variables' dtype: ops and an assign,
        so inside tf.function they are nodes of the graph, run at every call."""
        for variable, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            batch = math_ops.cast(batch, variable.dtype)
            variable.assign(math_ops.add(math_ops.multiply(variable, self.momentum),
                                         math_ops.multiply(batch, 1.0 - self.momentum)))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        config.update({
            "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon, "center": self.center,
            "scale": self.scale, "beta_initializer": s(self.beta_initializer),
            "gamma_initializer": s(self.gamma_initializer),
            "moving_mean_initializer": s(self.moving_mean_initializer),
            "moving_variance_initializer": s(self.moving_variance_initializer),
            "beta_regularizer": s(self.beta_regularizer), "gamma_regularizer": s(self.gamma_regularizer),
            "beta_constraint": s(self.beta_constraint), "gamma_constraint": s(self.gamma_constraint),
            "synchronized": self.synchronized, "renorm": False, "renorm_clipping": None, "renorm_momentum": 0.99,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))
