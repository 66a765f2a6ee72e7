"""Keras layers and models on the tapeflow engine (``tapeflow.layers``, also ``tf.keras``).

Laid out as Keras 3's tree: layer families in sub-packages (core, activations,
convolutional, normalization, merging, reshaping, regularization), models and
the training loop in ``models`` and ``trainers``, and the Keras API modules
(activations, losses, metrics, callbacks, initializers, regularizers,
constraints, backend) as sub-packages or modules. Layers: Layer, Dense, Conv1D,
BatchNormalization, Dropout, Activation, Flatten, Reshape, InputLayer/Input,
Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate,
LayerNormalization, Embedding, Masking, and the recurrent layers of ``rnn``
(SimpleRNN, LSTM, GRU, their cells, RNN, StackedRNNCells, Bidirectional,
TimeDistributed). Models: Sequential, functional
``Model(inputs, outputs)`` and subclassed ``Model``, with
compile/fit/evaluate/predict.
"""
from . import (activations, backend, callbacks, constraints, initializers, losses, metrics,  # noqa: F401
               regularizers, serialization_lib)
from .activations.activation import Activation  # noqa: F401
from .convolutional.conv1d import Conv1D  # noqa: F401
from .core.dense import Dense  # noqa: F401
from .core.embedding import Embedding  # noqa: F401
from .core.input_layer import Input, InputLayer  # noqa: F401
from .dtype_policy import DTypePolicy  # noqa: F401
from .input_gradient_regularization import InputGradientRegularizedModel, input_gradient_penalty  # noqa: F401
from .input_spec import InputSpec  # noqa: F401
from .keras_tensor import KerasTensor  # noqa: F401
from .layer import Layer  # noqa: F401
from .merging.add import Add  # noqa: F401
from .merging.average import Average  # noqa: F401
from .merging.concatenate import Concatenate  # noqa: F401
from .merging import Dot, add, average, concatenate, dot, maximum, minimum, multiply, subtract  # noqa: F401
from .merging.maximum import Maximum  # noqa: F401
from .merging.minimum import Minimum  # noqa: F401
from .merging.multiply import Multiply  # noqa: F401
from .merging.subtract import Subtract  # noqa: F401
from .models.functional import Functional  # noqa: F401
from .models.model import Model  # noqa: F401
from .models.sequential import Sequential  # noqa: F401
from .normalization.batch_normalization import BatchNormalization  # noqa: F401
from .normalization.layer_normalization import LayerNormalization  # noqa: F401
from .regularization.dropout import Dropout  # noqa: F401
from .reshaping.flatten import Flatten  # noqa: F401
from .reshaping.reshape import Reshape  # noqa: F401
from .variable import KerasVariable  # noqa: F401
from .activations.elu_layer import ELU  # noqa: F401
from .activations.leaky_relu_layer import LeakyReLU  # noqa: F401
from .activations.prelu_layer import PReLU  # noqa: F401
from .activations.relu_layer import ReLU  # noqa: F401
from .activations.softmax_layer import Softmax  # noqa: F401
from .convolutional import (Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, DepthwiseConv2D,  # noqa: F401
                            SeparableConv1D, SeparableConv2D)
from .pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D,  # noqa: F401
                      GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from .core import EinsumDense, Identity, Lambda  # noqa: F401
from .attention import AdditiveAttention, Attention, MultiHeadAttention  # noqa: F401
from .preprocessing import IntegerLookup, StringLookup, TextVectorization  # noqa: F401
from .regularization import (ActivityRegularization, AlphaDropout, GaussianDropout, GaussianNoise,  # noqa: F401
                             SpatialDropout1D, SpatialDropout2D)
from .reshaping import (Cropping1D, Cropping2D, Permute, RepeatVector, UpSampling1D,  # noqa: F401
                                   UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from .reshaping import Cropping3D, UpSampling3D, ZeroPadding3D  # noqa: F401
from .normalization import GroupNormalization, UnitNormalization  # noqa: F401
from .preprocessing import CategoryEncoding, Discretization, Hashing, Normalization, Rescaling  # noqa: F401
from .preprocessing import (CenterCrop, RandomBrightness, RandomContrast, RandomCrop, RandomFlip,  # noqa: F401
                            RandomRotation, RandomTranslation, RandomZoom, Resizing)
from .core.masking import Masking  # noqa: F401
from .core.tfsm_layer import TFSMLayer  # noqa: F401
from .rnn import (GRU, LSTM, RNN, Bidirectional, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell,  # noqa: F401
                  StackedRNNCells, TimeDistributed)
from .rnn import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
