"""tf.function(jit_compile=True): traced graphs compiled to fused numba kernels (see compiler.py).

Nothing here compiles at import: a graph's kernels are generated when its
ConcreteFunction is first called compiled, and numba compiles them at their first call.
"""
from .compiler import CompiledGraph, plan_segments
from .module_cache import cache_directory, load_module
