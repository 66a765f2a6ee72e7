"""Python computations on tensor values inside a trace.

Some layers compute their outputs in Python on their inputs' values (the text
and lookup preprocessing layers: numpy on strings and vocabularies), not with
ops. Traced as they are, their outputs would be constants of the graph: the
values computed from the trace's placeholders, replayed at every call whatever
the inputs. ``rerun_at_every_call`` detects such a call and makes it a Python
call node (``EagerPyFunc``, as ``tf.py_function``) that runs the computation on
each call's values.
"""
from .data.py_function import PY_FUNCTION
from .framework import nest, recording
from .framework.tensor import Tensor


def rerun_at_every_call(compute, inputs, outputs, name):
    """``outputs`` of ``compute(inputs)`` as they must appear in the graph being traced (if any): as they are
    when they are computed by ops or do not depend on the inputs, else the outputs of a node that runs
    ``compute`` on each call's inputs. ``name`` names the computation in errors."""
    from .function import GraphTensor
    graph = recording.tracing_graph()
    if graph is None:
        return outputs
    flat_outputs = nest.flatten(outputs)
    if all(isinstance(o, GraphTensor) or not isinstance(o, Tensor) for o in flat_outputs):
        return outputs
    leaves = nest.flatten(inputs)
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
    if not any(isinstance(leaves[i], GraphTensor) and graph.is_live(leaves[i]) for i in positions):
        return outputs      # computed from constants: a constant of the graph is right
    if not all(isinstance(o, Tensor) for o in flat_outputs):
        raise NotImplementedError(
            f"{name} computes its outputs in Python from its inputs' values; in a traced function this "
            "runs as a Python call node, which needs every output to be a tensor (got "
            f"{', '.join(type(o).__name__ for o in flat_outputs)}).")

    def run(*tensors):
        rebuilt = list(leaves)
        for i, t in zip(positions, tensors):
            rebuilt[i] = t
        return nest.flatten(compute(nest.pack_sequence_as(inputs, rebuilt)))
    # The node's values in the trace are the outputs just computed (a tf.py_function's would be stand-ins).
    results = graph._emit(PY_FUNCTION, [leaves[i] for i in positions],
                          {"func": run, "dtypes": [o.dtype.name for o in flat_outputs], "numpy": False},
                          [o._value for o in flat_outputs])
    return nest.pack_sequence_as(outputs, list(results))
