"""Convolution layers."""
from .conv1d import Conv1D  # noqa: F401
from .conv1d_transpose import Conv1DTranspose  # noqa: F401
from .conv2d import Conv2D  # noqa: F401
from .conv2d_transpose import Conv2DTranspose  # noqa: F401
from .conv3d import Conv3D  # noqa: F401
from .depthwise_conv2d import DepthwiseConv2D  # noqa: F401
from .separable_conv1d import SeparableConv1D  # noqa: F401
from .separable_conv2d import SeparableConv2D  # noqa: F401
