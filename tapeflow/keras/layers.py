"""tf.keras.layers: the layer classes of tapeflow.layers."""
from tapeflow.layers import (Activation, Add, Average, BatchNormalization, Concatenate, Conv1D, Dense,  # noqa: F401
                             Dropout, Embedding, Flatten, Input, InputLayer, InputSpec, Layer, LayerNormalization,
                             Maximum, Minimum, Multiply, Reshape, Subtract)
from tapeflow.layers.serialization_lib import deserialize_keras_object as deserialize  # noqa: F401
from tapeflow.layers.serialization_lib import serialize_keras_object as serialize  # noqa: F401
from tapeflow.layers import (ELU, AveragePooling1D, AveragePooling2D, Conv1DTranspose, Conv2D,  # noqa: F401
                             Conv2DTranspose, Conv3D, DepthwiseConv2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
                             GlobalMaxPooling1D, GlobalMaxPooling2D, LeakyReLU, MaxPooling1D, MaxPooling2D, PReLU,
                             ReLU, SeparableConv1D, SeparableConv2D, Softmax)
from tapeflow.layers import (ActivityRegularization, AlphaDropout, Cropping1D, Cropping2D,  # noqa: F401
                             GaussianDropout, GaussianNoise, Identity, Permute, RepeatVector, SpatialDropout1D,
                             SpatialDropout2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from tapeflow.layers import Lambda, TFSMLayer  # noqa: F401
from tapeflow.layers import Dot, add, average, concatenate, dot, maximum, minimum, multiply, subtract  # noqa: F401
from tapeflow.layers import GroupNormalization, Normalization, Rescaling, UnitNormalization  # noqa: F401
from tapeflow.layers import CategoryEncoding, Discretization, Hashing  # noqa: F401
from tapeflow.layers import AdditiveAttention, Attention, EinsumDense, MultiHeadAttention  # noqa: F401
from tapeflow.layers import IntegerLookup, StringLookup, TextVectorization  # noqa: F401
from tapeflow.layers import (CenterCrop, RandomBrightness, RandomContrast, RandomCrop, RandomFlip,  # noqa: F401
                             RandomRotation, RandomTranslation, RandomZoom, Resizing)
from tapeflow.layers import (GRU, LSTM, RNN, Bidirectional, GRUCell, LSTMCell, Masking, SimpleRNN,  # noqa: F401
                             SimpleRNNCell, StackedRNNCells, TimeDistributed)
from tapeflow.layers import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
from tapeflow.layers import Cropping3D, UpSampling3D, ZeroPadding3D  # noqa: F401
