"""tf.keras.regularizers: re-exports tapeflow.layers.regularizers."""
from tapeflow.layers.regularizers import (L1, L1L2, L2, Regularizer, deserialize, get, l1, l1_l2, l2,  # noqa: F401
                                          serialize)
