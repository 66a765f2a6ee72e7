"""``from tapeflow.keras.X import Y`` works wherever ``tf.keras.X.Y`` does (keras.io examples use both forms), and
the module reached by import is the same object as the attribute, never a second copy with its own classes."""
import subprocess
import sys

import numpy as np

import tapeflow as tf


def test_optimizers_import_forms_give_the_same_objects():
    import tapeflow.optimizers
    from tapeflow.keras.optimizers import Adam
    from tapeflow.keras.optimizers.schedules import ExponentialDecay
    import tapeflow.keras.optimizers.schedules as schedules
    assert Adam is tapeflow.optimizers.Adam
    assert schedules is tapeflow.optimizers.schedules and ExponentialDecay is schedules.ExponentialDecay
    assert tf.keras.optimizers is tapeflow.optimizers


def test_saving_import_form_is_tapeflow_saving():
    import tapeflow.saving
    from tapeflow.keras.saving import load_model, register_keras_serializable
    assert load_model is tapeflow.saving.load_model
    assert register_keras_serializable is tapeflow.saving.register_keras_serializable
    assert tf.keras.saving is tapeflow.saving


def test_import_forms_in_a_fresh_interpreter():
    # Import order matters for sys.modules aliases: run the forms first thing in a new process.
    code = ("from tapeflow.keras.optimizers.schedules import CosineDecay\n"
            "from tapeflow.keras.optimizers import Adam\n"
            "import tapeflow as tf\n"
            "assert tf.keras.optimizers.schedules.CosineDecay is CosineDecay and tf.keras.optimizers.Adam is Adam\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_to_categorical_dtypes_follow_keras():
    # Keras 3.15 on TF 2.21: numpy/list labels -> float64 numpy; a tensor -> float32 tensor (ops.one_hot).
    out = tf.keras.utils.to_categorical(np.array([[0], [2], [1]]), 3)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    assert tf.keras.utils.to_categorical([[0, 2], [1, 1]]).shape == (2, 2, 3)
    t = tf.keras.utils.to_categorical(tf.constant([[0], [2], [1]]), 3)
    assert isinstance(t, tf.Tensor) and t.dtype == tf.float32
    np.testing.assert_array_equal(t.numpy(), np.eye(3, dtype="float32")[[0, 2, 1]])
