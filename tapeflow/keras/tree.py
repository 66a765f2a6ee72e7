"""keras.tree: nested-structure utilities (tapeflow.framework.nest, the order of tf.nest and of keras.tree)."""
from tapeflow.framework.nest import (assert_same_structure, flatten, is_nested, map_structure,  # noqa: F401
                                     pack_sequence_as)
