"""Optimisation passes over traced graphs, run before a ConcreteFunction plans its replay.

Each pass is its own module and rewrites a PassGraph (a copy of the FuncGraph's
nodes; the FuncGraph itself is untouched). Only nodes of ops declared pure
(framework/op_purity.py) are ever removed, merged or folded.
"""
from .algebraic import simplify_algebra
from .common_subexpressions import eliminate_common_subexpressions
from .constant_folding import fold_constants
from .dead_code import eliminate_dead_code
from .pass_graph import PassGraph

PASSES = (fold_constants, simplify_algebra, eliminate_common_subexpressions, eliminate_dead_code)
_MAX_ROUNDS = 4


def optimize(graph):
    """Runs the passes on ``graph`` (a PassGraph) until none changes anything; returns it compacted."""
    for _ in range(_MAX_ROUNDS):
        if not sum(p(graph) for p in PASSES):
            break
    graph.compact()
    return graph


def optimized_copy(func_graph, input_shapes):
    """The optimised PassGraph of a FuncGraph; ``input_shapes``: each input's shape at every call, or None."""
    return optimize(PassGraph.from_func_graph(func_graph, input_shapes))
