"""AutoGraph (``tf.autograph``): tf.function's conversion of Python control flow on tensors and datasets.

converter.py rewrites a function's source; operators.py runs the rewritten statements (cond/while_loop
for tensors); calls.py converts the user functions a converted function calls; dataset_loops.py turns
``for x in dataset`` into a graph loop that pulls elements at each call.
"""
from . import experimental  # noqa: F401
from .converter import convert, to_code  # noqa: F401
