"""The beta/gamma arguments the normalization layers share: initializers, regularizers and constraints."""
from .. import constraints, initializers, regularizers
from ..serialization_lib import serialize_keras_object


def set_affine_arguments(layer, beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
                         beta_constraint, gamma_constraint):
    layer.beta_initializer = initializers.get(beta_initializer)
    layer.gamma_initializer = initializers.get(gamma_initializer)
    layer.beta_regularizer = regularizers.get(beta_regularizer)
    layer.gamma_regularizer = regularizers.get(gamma_regularizer)
    layer.beta_constraint = constraints.get(beta_constraint)
    layer.gamma_constraint = constraints.get(gamma_constraint)


def affine_config(layer):
    """The six entries of a layer's config, in Keras's order."""
    s = serialize_keras_object
    return {"beta_initializer": s(layer.beta_initializer), "gamma_initializer": s(layer.gamma_initializer),
            "beta_regularizer": s(layer.beta_regularizer), "gamma_regularizer": s(layer.gamma_regularizer),
            "beta_constraint": s(layer.beta_constraint), "gamma_constraint": s(layer.gamma_constraint)}
