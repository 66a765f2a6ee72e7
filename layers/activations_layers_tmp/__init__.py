from .elu import ELU  # noqa: F401
from .leaky_relu import LeakyReLU  # noqa: F401
from .prelu import PReLU  # noqa: F401
from .relu import ReLU  # noqa: F401
from .softmax import Softmax  # noqa: F401
