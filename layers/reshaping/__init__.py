"""Reshaping layers: change the shape of each sample, keeping the batch axis."""
from .cropping1d import Cropping1D  # noqa: F401
from .cropping2d import Cropping2D  # noqa: F401
from .flatten import Flatten  # noqa: F401
from .permute import Permute  # noqa: F401
from .repeat_vector import RepeatVector  # noqa: F401
from .reshape import Reshape  # noqa: F401
from .up_sampling1d import UpSampling1D  # noqa: F401
from .up_sampling2d import UpSampling2D  # noqa: F401
from .zero_padding1d import ZeroPadding1D  # noqa: F401
from .zero_padding2d import ZeroPadding2D  # noqa: F401
from .cropping3d import Cropping3D  # noqa: F401
from .up_sampling3d import UpSampling3D  # noqa: F401
from .zero_padding3d import ZeroPadding3D  # noqa: F401
