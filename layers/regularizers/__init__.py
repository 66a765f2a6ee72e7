"""Regularizers (``tf.keras.regularizers``)."""
from .regularizers import L1, L1L2, L2, Regularizer, deserialize, get, l1, l1_l2, l2, serialize  # noqa: F401
