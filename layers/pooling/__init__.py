from .average_pooling1d import AveragePooling1D  # noqa: F401
from .average_pooling2d import AveragePooling2D  # noqa: F401
from .global_average_pooling1d import GlobalAveragePooling1D  # noqa: F401
from .global_average_pooling2d import GlobalAveragePooling2D  # noqa: F401
from .global_max_pooling1d import GlobalMaxPooling1D  # noqa: F401
from .global_max_pooling2d import GlobalMaxPooling2D  # noqa: F401
from .max_pooling1d import MaxPooling1D  # noqa: F401
from .max_pooling2d import MaxPooling2D  # noqa: F401
