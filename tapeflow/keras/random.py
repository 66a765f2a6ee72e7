"""tf.keras.random: re-exports tapeflow.keras_ops.random."""
from tapeflow.keras_ops.random import (SeedGenerator, beta, binomial, categorical, dropout, gamma, normal,  # noqa: F401
                                       randint, shuffle, truncated_normal, uniform)
