"""Dead-code elimination: pure nodes whose outputs nothing reads are removed (op_purity.is_removable).

Impure nodes (variable reads and assigns, deferred Python calls, prints, checks,
random draws, any op not declared pure) always stay, and so does what they read.
"""


def eliminate_dead_code(graph):
    """Removes unread pure nodes from ``graph`` (a PassGraph); returns how many."""
    graph.apply_replacements()
    live = {r for r in graph.outputs if r is not None}
    removed = 0
    for k in reversed(range(len(graph.nodes))):
        node = graph.nodes[k]
        if node is None:
            continue
        if graph.is_removable(k) and not any(("node", k, j) in live for j in range(node[3])):
            graph.nodes[k] = None
            removed += 1
            continue
        live.update(tuple(r) for r in node[1])
    return removed
