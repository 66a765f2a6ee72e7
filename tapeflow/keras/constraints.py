"""tf.keras.constraints: re-exports tapeflow.layers.constraints."""
from tapeflow.layers.constraints import (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm,  # noqa: F401
                                         deserialize, get, serialize)
