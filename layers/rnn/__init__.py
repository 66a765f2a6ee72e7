"""Recurrent layers: SimpleRNN, LSTM, GRU, their cells, the generic RNN, StackedRNNCells, Bidirectional and
TimeDistributed. Standard LSTM/GRU/SimpleRNN cells run a whole sequence as one fused op."""
from .bidirectional import Bidirectional  # noqa: F401
from .gru import GRU, GRUCell  # noqa: F401
from .lstm import LSTM, LSTMCell  # noqa: F401
from .rnn import RNN  # noqa: F401
from .simple_rnn import SimpleRNN, SimpleRNNCell  # noqa: F401
from .stacked_rnn_cells import StackedRNNCells  # noqa: F401
from .time_distributed import TimeDistributed  # noqa: F401
from .conv_lstm1d import ConvLSTM1D  # noqa: F401
from .conv_lstm2d import ConvLSTM2D  # noqa: F401
from .conv_lstm3d import ConvLSTM3D  # noqa: F401
