"""Constant folding: a pure node whose inputs are all constants becomes the constant it computes.

The value is the one the node computed while the function was traced, on those
same constants: folding runs no op (a graph loaded from a file, which has no
trace, is never folded, so loading runs nothing). Results larger than
``MAX_FOLDED_BYTES`` are left to compute at each call rather than kept alive
with the function.
"""
import numpy as np

MAX_FOLDED_BYTES = 1 << 20


def fold_constants(graph):
    """Folds constant pure nodes of ``graph`` (a PassGraph); returns how many."""
    folded = 0
    for k, node in enumerate(graph.nodes):
        if node is None:
            continue
        node[1] = [graph.resolve(r) for r in node[1]]
        if not graph.is_pure(k) or any(r[0] != "const" for r in node[1]):
            continue
        values = [graph.values.get(("node", k, j)) for j in range(node[3])]
        if any(v is None for v in values) or sum(np.asarray(v).nbytes for v in values) > MAX_FOLDED_BYTES:
            continue
        for j, value in enumerate(values):
            graph.replace(("node", k, j), graph.add_constant(np.array(value)))
        graph.nodes[k] = None
        folded += 1
    graph.apply_replacements()
    return folded
