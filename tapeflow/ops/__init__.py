"""The op library: one module per family, each op's forward and gradient side by side."""
from . import core_ops, math_ops, array_ops, reduction_ops  # noqa: F401  (each imports only those before it)
from . import check_ops, linalg_ops, nn_ops, print_ops, random_ops  # noqa: F401
from . import conv_ops, pooling_ops  # noqa: F401
from . import decomposition_ops, extra_math_ops, stateless_random_ops, update_ops  # noqa: F401  (Keras extras)
from . import schedule_ops, training_ops  # noqa: F401  (learning-rate schedules, optimizer updates)
from . import image_ops  # noqa: F401  (tf.image)
from . import embedding_ops  # noqa: F401  (tf.nn.embedding_lookup)
from . import control_flow_ops  # noqa: F401  (If, While and Shape, which traced graphs replay)
from . import collective_ops  # noqa: F401  (tf.distribute's all-reduce, run at every replay)
from . import bytes_ops  # noqa: F401  (tf.io's decode_raw, base64, serialize_tensor / parse_tensor)
