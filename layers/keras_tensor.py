"""KerasTensor, the symbolic tensor of functional models; defined with keras.ops (as Keras defines it in its
backend), which records an operation when called on one."""
from tapeflow.keras_ops.keras_tensor import KerasTensor, is_keras_tensor  # noqa: F401
