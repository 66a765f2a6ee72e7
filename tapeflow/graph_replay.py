"""Replays a traced graph on raw numpy arrays, for calls that nothing records.

When no tape, forward accumulator, variable watcher or outer trace is active,
a ConcreteFunction need not go through ``execute`` op by op: its forwards are
resolved once, every value lives in one flat list addressed by index (no
Tensor per intermediate), and each value is dropped after its last use. Dropping
early also frees memory and lets a state op (an optimizer's in-place update)
find its variables unshared (no copy-on-write).
"""
from .framework import nest
from .framework.recording import _FORWARDS, state_node_parts, state_op_variable_counts
from .framework.tensor import Tensor

_OP, _OP_TUPLE, READ, ASSIGN, STATE = range(5)
ASSIGN_METHODS = {"assign": "assign", "add": "assign_add", "sub": "assign_sub"}  # node mode -> Variable method


class ArrayReplay:
    """``plan``: ConcreteFunction's [(op type, argument slots, attrs, n outputs, first output slot)]."""

    def __init__(self, plan, n_slots, n_inputs, n_constants, output_slots, special_ops):
        self._n_slots = n_slots
        bases = {"s": 0, "i": n_slots, "c": n_slots + n_inputs, "x": n_slots + n_inputs + n_constants}
        index = lambda slot: bases[slot[0]] + slot[1]  # noqa: E731
        steps = []
        for op_type, slots, attrs, n_out, out in plan:
            args = tuple(index(s) for s in slots)
            if op_type in special_ops:
                steps.append([special_ops[op_type], None, args, attrs, n_out, out, (), op_type])
            elif state_op_variable_counts(op_type) is not None:
                steps.append([STATE, _FORWARDS[op_type][0], args, state_node_parts(attrs), n_out, out, (), op_type])
            else:
                forward, registered_outputs = _FORWARDS[op_type]
                # An op with a variable number of outputs (split, unstack) returns a sequence even
                # when it produced one output: its arity, not the traced count, decides.
                kind = _OP if registered_outputs == 1 else _OP_TUPLE
                steps.append([kind, forward, args, attrs or None, n_out, out, (), op_type])
        self._output_slots = output_slots
        leaves = [] if output_slots is None else nest.flatten(output_slots)
        kept = {index(leaf.ref) for leaf in leaves if leaf.ref is not None}
        last_use = {}
        for k, step in enumerate(steps):
            for i in range(step[5], step[5] + step[4]):
                last_use[i] = k       # a value nothing reads dies where it is made
            for i in step[2]:
                last_use[i] = k
        dead = [[] for _ in steps]
        for i, k in last_use.items():
            if i not in kept:
                dead[k].append(i)
        for step, values in zip(steps, dead):
            step[6] = tuple(values)
        self._steps = [tuple(s) for s in steps]
        # The outputs, resolved once: (value index, None) for a tensor, (None, value) for a Python value.
        self._flat_outputs = [(None, leaf.python) if leaf.ref is None else (index(leaf.ref), None) for leaf in leaves]
        self._single_output = (self._flat_outputs[0][0] if output_slots is not None and not nest.is_nested(output_slots)
                               else None)

    def __call__(self, inputs, constants, captures, variables):
        values = [None] * self._n_slots
        values += [t._value for t in inputs]
        values += constants
        values += [t._value for t in captures]
        for kind, forward, args, attrs, n_out, out, dead, op_type in self._steps:
            if kind <= _OP_TUPLE:
                if attrs is None:
                    result = forward(*[values[i] for i in args])
                else:
                    result = forward(*[values[i] for i in args], **attrs)
                if kind == _OP:
                    values[out] = result
                elif len(result) == n_out:
                    values[out:out + n_out] = result
                else:
                    raise output_count_error(op_type, n_out, len(result))
            elif kind == READ:
                values[out] = variables[attrs["variable"]]._as_tensor()._value
            elif kind == ASSIGN:
                var = variables[attrs["variable"]]
                getattr(var, ASSIGN_METHODS[attrs["mode"]])(Tensor(values[args[0]]))
            else:
                updated, attrs = attrs
                forward([variables[i] for i in updated], *[values[i] for i in args], **attrs)
            for i in dead:
                values[i] = None
        if self._single_output is not None:
            return Tensor(values[self._single_output])
        if self._output_slots is None:
            return None
        return nest.pack_sequence_as(self._output_slots, [python if i is None else Tensor(values[i])
                                                          for i, python in self._flat_outputs])


def output_count_error(op_type, traced, produced):
    """A replayed op made a different number of outputs than when it was traced."""
    return ValueError(f"{op_type} produced {produced} outputs when the traced graph has {traced}: the number of "
                      "outputs depends on an input shape that the trace left unknown; give tf.function an "
                      "input_signature with that dimension known")
