"""tf.keras.optimizers as an importable module (``from tapeflow.keras.optimizers import Adam``).

The module *is* ``tapeflow.optimizers``: it replaces itself in ``sys.modules`` so that
``tf.keras.optimizers is tapeflow.optimizers`` and ``tapeflow.keras.optimizers.schedules`` is the one schedules
module, never a second copy with its own classes.
"""
import sys

from tapeflow import optimizers as _optimizers

sys.modules[__name__ + ".schedules"] = _optimizers.schedules
sys.modules[__name__] = _optimizers
