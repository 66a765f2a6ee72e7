"""How fit / evaluate / predict run a step, as Keras 3 does on TensorFlow.

By default a step (``train_step``, ``test_step``, ``predict_step``) is traced
with ``tf.function`` and its graph is replayed on every batch: Python code in
the step (``print``, appending to a list, counters) runs when it is traced, not
at every batch; ``tf.print`` prints at every batch. ``compile(run_eagerly=True)``
runs the step as Python on every batch. ``compile(jit_compile=True)`` runs the
traced graph as generated numba code. ``jit_compile="auto"`` (the default)
traces without compiling: replaying the graph gives the eager numbers, and a
short fit does not pay for numba compilations (Keras on TensorFlow also resolves
"auto" to ``model.jit_compile == False``).

fit and evaluate trace their step with the batch dimension unknown, as Keras
traces on a dataset whose batch dimension is None: one trace serves the short
last batch too. train_on_batch, test_on_batch, predict and predict_on_batch are
functions of their own that trace the first batch's shapes and relax a
dimension when another size comes (``reduce_retracing``), as observed in Keras.

The functions are made at first use and kept until the next ``compile()``; a
later ``model.run_eagerly = ...`` takes effect at the next ``compile()``, as in
Keras. Before the first trace, the optimizer and the compiled loss and metrics
are built (as Keras builds them symbolically), so that the trace creates no
variables and runs the step's Python code once.
"""
import numpy as np

from tapeflow.function import Function
from tapeflow.framework.tensor import host_array

from ..keras_tensor import KerasTensor
from ..utils import tree
from .compile_utils import by_output
from .data_adapter import unpack_x_y_sample_weight

_STEP_METHODS = {"train": "train_step", "train_on_batch": "train_step", "test": "test_step",
                 "test_on_batch": "test_step", "predict": "predict_step", "predict_on_batch": "predict_step"}
_BATCH_RELAXED = ("train", "test")    # run on a whole dataset: traced with an unknown batch dimension


def run_step(model, kind, data):
    """Runs one step of ``kind`` (a key of _STEP_METHODS) on a batch of ``data``."""
    functions = model.__dict__.setdefault("_step_functions", {})
    function = functions.get(kind)
    if function is None:
        if not model.run_eagerly:
            _build_state(model, kind, data)
        function = functions[kind] = _make(model, kind)
    return function(data)


def reset_step_functions(model):
    """Forgets the traced steps (compile() does it: a new loss, optimizer or mode needs a new trace)."""
    model.__dict__["_step_functions"] = {}


def _make(model, kind):
    method = _STEP_METHODS[kind]
    if model.run_eagerly:
        return lambda data: getattr(model, method)(data)
    return Function(getattr(model, method), name=method, jit_compile=bool(model.jit_compile),
                    reduce_retracing=True, relax_batch_dimension=kind in _BATCH_RELAXED)


def _build_state(model, kind, data):
    """Creates before the first trace the state the default step would create in it (the optimizer's slots,
    the compiled loss's and metrics' variables), as Keras builds them symbolically before tracing: a first
    trace that creates variables is traced again, which would run the step's Python code twice. The
    compiled metrics are built from the output shapes of a model with a symbolic graph; other models build
    them in their first trace."""
    if not model.built or kind.startswith("predict"):
        return
    optimizer = model.optimizer
    if kind.startswith("train") and optimizer is not None and not getattr(optimizer, "built", True):
        optimizer.build(model.trainable_variables)
    unbuilt = [c for c in (model._compile_loss, model._compile_metrics) if c is not None and not c.built]
    x, y, _ = unpack_x_y_sample_weight(data)
    if not unbuilt or y is None or not getattr(model, "_has_symbolic_graph", False):
        return
    spec = tree.map_structure(lambda a: KerasTensor((None,) + tuple(a.shape)[1:], dtype=str(host_array(a).dtype)),
                              x)
    try:
        outputs = model.compute_output_spec(spec)
    except Exception:   # the step raises it, with its own context, when it runs
        return
    y_pred = tree.map_structure(lambda k: np.zeros([1 if d is None else d for d in k.shape], k.dtype), outputs)
    for compiled in unbuilt:
        compiled.build(by_output(y, compiled.output_names, "y"), by_output(y_pred, compiled.output_names, "y_pred"))
