"""Putting loaded arrays into a model's variables: check everything first, then read, then assign, all or nothing.

``entries`` are ``(path, object, store)`` triples (``store`` is a dict
``{"0": dataset, ...}`` of datasets declared by the file but not yet read --
anything with ``shape``, ``dtype``, ``nbytes`` and ``read()`` -- or None when
the file has no group for the object). Every object that loads through the
default ``load_own_variables`` is checked against the file (variable count,
keys, shapes, kinds of number) before any data is read, and all problems are
reported together; then every dataset is read, then assigned. Objects that
override ``load_own_variables`` run under a snapshot of every variable: if
one raises, every variable is put back. An optimizer that the load had to
build (to check its slots against the file) is unbuilt again if the load
fails.
"""
import copy
import warnings

import numpy as np

from tapeflow.framework.variables import load_array
from tapeflow.layers.layer import Layer
from tapeflow.optimizers import Optimizer

from .object_walk import uses_default_io, variables_of
from .errors import FileContentError, OversizedContentError

CUSTOM_READ_SLACK = 64 << 20   # bytes that objects with their own loaders may read beyond the model's variables


def describe(path, obj):
    where = f"'{path}'" if path else "the top level"
    return f"{type(obj).__name__} '{getattr(obj, 'name', '?')}' (at {where} in the file)"


def _kind_fits(variable_kind, value_kind):
    if variable_kind in "fc":
        return value_kind in "biufc"
    return value_kind in "biu"


def _check(variables, store):
    """Why ``store`` cannot be loaded into ``variables`` (empty when it can)."""
    names = [getattr(v, "name", "?") for v in variables]
    expected = [str(i) for i in range(len(variables))]
    if getattr(store, "more", False):
        return [f"expected {len(variables)} variables {names}, but the file has more"]
    if set(store) != set(expected):
        if not store:
            return [f"expected {len(variables)} variables {names}, but the file has none for it"]
        keys = sorted(store, key=lambda k: (len(k), k))
        if len(store) != len(variables):
            return [f"expected {len(variables)} variables {names}, but the file has {len(store)} (keys {keys})"]
        return [f"the file's variables are keyed {keys}, expected {expected}"]
    problems = []
    for key, variable, name in zip(expected, variables, names):
        value = store[key]
        shape = tuple(variable.shape)
        if tuple(value.shape) != shape:
            problems.append(f"variable {key} '{name}' has shape {shape}, the file has shape {tuple(value.shape)}")
        elif not _kind_fits(np.dtype(variable.dtype.name).kind, value.dtype.kind):
            problems.append(f"variable {key} '{name}' is {variable.dtype.name}, the file holds {value.dtype}")
    return problems


class _Builds:
    """Optimizers built by a load, so that a failed load can put them back as they were."""

    def __init__(self):
        self._saved = []

    def build(self, optimizer, variables):
        state = {k: copy.copy(v) if isinstance(v, (list, dict, set)) else v for k, v in vars(optimizer).items()}
        self._saved.append((optimizer, state))
        optimizer.build(variables)

    def undo(self):
        for optimizer, state in reversed(self._saved):
            optimizer.__dict__.clear()
            optimizer.__dict__.update(state)
        self._saved = []


def _plan(entries, root, builds):
    plan, problems = [], []
    for path, obj, store in entries:
        if isinstance(obj, Optimizer):
            if store is None:
                continue  # the file has no optimizer state: the optimizer keeps its own
            if not obj.built and obj is getattr(root, "optimizer", None) and getattr(root, "built", False):
                builds.build(obj, root.trainable_variables)  # slots exist now, so their shapes can be checked
            if obj.built:
                own = variables_of(obj)
                if len(store) != len(own) or getattr(store, "more", False):
                    count = f"more than {len(store)}" if getattr(store, "more", False) else len(store)
                    warnings.warn(f"Skipping variable loading for optimizer '{obj.name}', because it has "
                                  f"{len(own)} variables whereas the saved optimizer has {count} variables.",
                                  stacklevel=4)
                    continue
                found = _check(own, store)
                if found:
                    problems.append((describe(path, obj), found))
                    continue
            plan.append((path, obj, store))
            continue
        store = {} if store is None else store
        if uses_default_io(obj):
            variables = variables_of(obj)
            if not variables and not store:
                continue
            if not variables and isinstance(obj, Layer) and not obj.built:
                problems.append((describe(path, obj), [
                    f"it was never built, so it has no variables, but the file has {len(store)} for it; build "
                    "the model (call it on data or call build()) before loading"]))
                continue
            found = _check(variables, store)
            if found:
                problems.append((describe(path, obj), found))
                continue
        plan.append((path, obj, store))
    return plan, problems


def _report(problems):
    lines = []
    for who, found in problems:
        lines.extend(f"  - {who}: {p}" for p in found)
    return "\n".join(lines)


def _all_variables(root, plan):
    seen, out = set(), []
    groups = [root.weights] if isinstance(root, Layer) else []
    groups += [variables_of(obj) for _, obj, _ in plan]
    for group in groups:
        for v in group:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def _read(plan, root, source):
    """The plan with every declared dataset read. Objects checked against the file read exactly their
    variables' sizes; the others (own loaders, unbuilt optimizers) share a budget of the model's size."""
    budget = sum(int(np.asarray(v).nbytes) for v in _all_variables(root, plan)) + CUSTOM_READ_SLACK
    out = []
    for path, obj, store in plan:
        checked = obj.built if isinstance(obj, Optimizer) else uses_default_io(obj)   # shape by shape, in _plan
        arrays = {}
        for key, dataset in store.items():
            if not hasattr(dataset, "read"):
                arrays[key] = dataset
                continue
            if not checked:
                budget -= dataset.nbytes
                if budget < 0:
                    raise OversizedContentError(
                        f"Cannot load '{source}': '{dataset.name}' declares {dataset.nbytes} bytes "
                        f"{tuple(dataset.shape)}, more than {describe(path, obj)} can hold with the model's "
                        "variables; nothing was read.")
            arrays[key] = dataset.read()
        out.append((path, obj, arrays))
    return out


def load_state(entries, root, source, skip_mismatch=False):
    """Loads ``entries`` into their objects; on any problem raises and leaves every variable (and every
    optimizer) as it was."""
    builds = _Builds()
    try:
        _load(entries, root, source, skip_mismatch, builds)
    except BaseException:
        builds.undo()
        raise


def _load(entries, root, source, skip_mismatch, builds):
    plan, problems = _plan(entries, root, builds)
    if problems:
        count = len(problems)
        if not skip_mismatch:
            raise FileContentError(
                f"Cannot load '{source}' into {type(root).__name__} '{getattr(root, 'name', '?')}': {count} "
                f"object(s) do not match the file, so no variable was changed.\n{_report(problems)}")
        for who, found in problems:
            warnings.warn(f"Skipping loading of {who} from '{source}': " + "; ".join(found), stacklevel=4)
    plan = _read(plan, root, source)
    snapshot = [(v, np.asarray(v)) for v in _all_variables(root, plan)]
    # Optimizers last: their own loading checks everything before it assigns, so once one has
    # started nothing can fail after it.
    ordered = [e for e in plan if not isinstance(e[1], Optimizer)] + [e for e in plan if isinstance(e[1], Optimizer)]
    current = None
    try:
        for current in ordered:
            path, obj, store = current
            if uses_default_io(obj) and getattr(obj, "built", True):
                # The default load_own_variables, on values checked above: variables[i] = store[str(i)].
                for i, variable in enumerate(variables_of(obj)):
                    load_array(variable, store[str(i)])  # a fresh array read from the file: no second copy
            else:
                obj.load_own_variables(store)
    except Exception as e:
        for variable, old in snapshot:
            if np.asarray(variable) is not old:
                variable.assign(old)
        raise FileContentError(f"Cannot load '{source}': loading {describe(current[0], current[1])} failed: "
                               f"{e}. No variable was changed.") from e


def assign_pairs(pairs, source):
    """Assigns already-checked ``(variable, value)`` pairs; if one fails, every variable is put back."""
    snapshot = [(v, np.asarray(v)) for v, _ in pairs]
    adopted = set()
    try:
        for variable, value in pairs:
            if id(value) in adopted:  # the same array for two variables (by_name): they must not share it
                variable.assign(value)
            else:
                adopted.add(id(value))
                load_array(variable, value)
    except Exception as e:
        for variable, old in snapshot:
            if np.asarray(variable) is not old:
                variable.assign(old)
        raise FileContentError(f"Cannot load '{source}': {e}. No variable was changed.") from e
