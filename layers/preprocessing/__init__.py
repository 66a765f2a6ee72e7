"""Preprocessing layers: one module per layer."""
from .center_crop import CenterCrop  # noqa: F401
from .random_brightness import RandomBrightness  # noqa: F401
from .random_contrast import RandomContrast  # noqa: F401
from .random_crop import RandomCrop  # noqa: F401
from .random_flip import RandomFlip  # noqa: F401
from .random_rotation import RandomRotation  # noqa: F401
from .random_translation import RandomTranslation  # noqa: F401
from .random_zoom import RandomZoom  # noqa: F401
from .resizing import Resizing  # noqa: F401
from .normalization import Normalization  # noqa: F401
from .rescaling import Rescaling  # noqa: F401
from .integer_lookup import IntegerLookup  # noqa: F401
from .string_lookup import StringLookup  # noqa: F401
from .text_vectorization import TextVectorization  # noqa: F401
from .category_encoding import CategoryEncoding  # noqa: F401
from .discretization import Discretization  # noqa: F401
from .hashing import Hashing  # noqa: F401
