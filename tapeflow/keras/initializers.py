"""tf.keras.initializers: re-exports tapeflow.layers.initializers."""
from tapeflow.layers.initializers import (Constant, GlorotNormal, GlorotUniform, HeNormal, HeUniform,  # noqa: F401
                                          Identity, Initializer, LecunNormal, LecunUniform, Ones, Orthogonal,
                                          OrthogonalInitializer, RandomNormal, RandomUniform, TruncatedNormal,
                                          VarianceScaling, Zeros, deserialize, get, serialize)
