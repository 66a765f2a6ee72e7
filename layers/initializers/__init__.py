"""Initializers (``tf.keras.initializers``)."""
from .initializers import (Constant, GlorotNormal, GlorotUniform, HeNormal, HeUniform, Identity,  # noqa: F401
                           Initializer, LecunNormal, LecunUniform, Ones, Orthogonal,
                           OrthogonalInitializer, RandomNormal, RandomUniform, TruncatedNormal,
                           VarianceScaling, Zeros, compute_fans, deserialize, get, serialize)
