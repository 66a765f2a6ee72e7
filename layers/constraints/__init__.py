"""Weight constraints (``tf.keras.constraints``)."""
from .constraints import Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm, deserialize, get, serialize  # noqa: F401
