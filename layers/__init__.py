"""Keras layers and models on the tapeflow engine (``tapeflow.layers``, also ``tf.keras``).

Layers: Layer, Dense, Conv1D, BatchNormalization, Dropout, Activation, Flatten,
Reshape, InputLayer/Input, Add, Subtract, Multiply, Average, Maximum,
Minimum, Concatenate, LayerNormalization, Embedding. Models: Sequential,
functional ``Model(inputs, outputs)`` and subclassed ``Model``, with
compile/fit/evaluate/predict. Losses, metrics, callbacks, initializers,
activations, regularizers and constraints live in their own submodules.
"""
from . import (activations, backend, callbacks, constraints, initializers, losses, metrics,  # noqa: F401
               regularizers, serialization_lib)
from .activation import Activation  # noqa: F401
from .batch_normalization import BatchNormalization  # noqa: F401
from .conv1d import Conv1D  # noqa: F401
from .dense import Dense  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .dtype_policy import DTypePolicy  # noqa: F401
from .embedding import Embedding  # noqa: F401
from .functional import Functional  # noqa: F401
from .input_gradient_regularization import InputGradientRegularizedModel, input_gradient_penalty  # noqa: F401
from .input_layer import Input, InputLayer  # noqa: F401
from .input_spec import InputSpec  # noqa: F401
from .keras_tensor import KerasTensor  # noqa: F401
from .layer import Layer  # noqa: F401
from .layer_normalization import LayerNormalization  # noqa: F401
from .merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract  # noqa: F401
from .model import Model  # noqa: F401
from .reshaping import Flatten, Reshape  # noqa: F401
from .sequential import Sequential  # noqa: F401
from .variable import KerasVariable  # noqa: F401
from .activations_layers_tmp import ELU, LeakyReLU, PReLU, ReLU, Softmax  # noqa: F401
from .convolutional import (Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, DepthwiseConv2D,  # noqa: F401
                            SeparableConv1D, SeparableConv2D)
from .pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D,  # noqa: F401
                      GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from .core import Identity  # noqa: F401
from .regularization import (ActivityRegularization, AlphaDropout, GaussianDropout, GaussianNoise,  # noqa: F401
                             SpatialDropout1D, SpatialDropout2D)
from .reshaping_layers_tmp import (Cropping1D, Cropping2D, Permute, RepeatVector, UpSampling1D,  # noqa: F401
                                   UpSampling2D, ZeroPadding1D, ZeroPadding2D)
