"""tf.keras.saving as an importable module (``from tapeflow.keras.saving import load_model``).

The module *is* ``tapeflow.saving`` (it replaces itself in ``sys.modules``), so the custom-object registry and
every class are the same objects under both names.
"""
import sys

from tapeflow import saving as _saving

sys.modules[__name__] = _saving
