"""Regularization layers."""
from .activity_regularization import ActivityRegularization  # noqa: F401
from .alpha_dropout import AlphaDropout  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .gaussian_dropout import GaussianDropout  # noqa: F401
from .gaussian_noise import GaussianNoise  # noqa: F401
from .spatial_dropout import SpatialDropout1D, SpatialDropout2D  # noqa: F401
