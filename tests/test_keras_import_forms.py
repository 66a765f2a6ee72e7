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


def test_top_level_base_classes_and_utils_aliases():
    import tapeflow.optimizers
    from tapeflow.keras import Initializer, Loss, Metric, Optimizer, Regularizer
    assert Optimizer is tapeflow.optimizers.Optimizer and Loss is tf.keras.losses.Loss
    assert Metric is tf.keras.metrics.Metric and Initializer is tf.keras.initializers.Initializer
    assert Regularizer is tf.keras.regularizers.Regularizer
    assert tf.keras.version() == tf.keras.__version__ == "3.15.1"
    from tapeflow.keras.utils import clear_session, is_keras_tensor, standardize_dtype
    assert clear_session is tf.keras.backend.clear_session
    assert is_keras_tensor(tf.keras.Input((2,))) and not is_keras_tensor(np.zeros(2))
    assert standardize_dtype(np.float32) == "float32"
    assert tf.keras.utils.is_interactive_logging_enabled() is tf.keras.config.is_interactive_logging_enabled()


def test_lazy_namespaces_stay_unloaded_by_import_tapeflow():
    code = ("import sys, tapeflow\n"
            "lazy = ['tapeflow.keras_ops', 'tapeflow.keras.preprocessing', 'tapeflow.keras.datasets', 'PIL',\n"
            "        'tapeflow.layers.utils.image_utils']\n"
            "assert not [m for m in lazy if m in sys.modules], [m for m in lazy if m in sys.modules]\n")
    subprocess.run([sys.executable, "-c", code], check=True)
