"""tf.keras.initializers (and tf.initializers): re-exports tapeflow.layers.initializers, with the lowercase
names Keras 3 gives the same classes (``tf.initializers.zeros()`` is a ``Zeros``)."""
from tapeflow.layers.initializers import (Constant, GlorotNormal, GlorotUniform, HeNormal, HeUniform,  # noqa: F401
                                          Identity, Initializer, LecunNormal, LecunUniform, Ones, Orthogonal,
                                          OrthogonalInitializer, RandomNormal, RandomUniform, TruncatedNormal,
                                          VarianceScaling, Zeros, deserialize, get, serialize)

IdentityInitializer = Identity
constant, zeros, ones, identity = Constant, Zeros, Ones, Identity
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling, orthogonal = VarianceScaling, Orthogonal
glorot_normal, glorot_uniform, he_normal, he_uniform = GlorotNormal, GlorotUniform, HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform
