"""Restoring a checkpoint: binding its object graph to live objects, now or when they are created.

The checkpoint's graph is walked from its root alongside the live graph, matching children by name.
A checkpoint node binds to the first live object that reaches it. Values of variables that exist are
checked (shape and dtype from the file's headers), read, and assigned all together: if anything does
not fit, nothing is changed.

Deferred restoration, as TensorFlow does it: a child that does not exist yet (the variables of a Keras
layer that is not built, an attribute set on the Checkpoint later) keeps its values in memory and gets
them when it appears: when the layer's ``build`` returns, or when the attribute is set. An optimizer is
restored as a whole through its own ``load_own_variables``, whose pending values fill the slots when the
optimizer builds them (its first ``apply``).
"""
import warnings

import numpy as np

from tapeflow import init_scope
from tapeflow.framework.variables import Variable
from tapeflow.layers.layer import Layer
from tapeflow.module import Module
from tapeflow.optimizers import Optimizer

from .checkpoint_containers import watch_module
from .errors import FileContentError
from .trackable_graph import ObjectGraph, children, escape


def _describe_dtype(dtype):
    return np.dtype(dtype).newbyteorder("=").name


def _fits(variable, shape, dtype):
    """Why a value of ``shape``/``dtype`` cannot go into ``variable`` (None when it can)."""
    want_shape = tuple(variable.shape)
    want = np.dtype(variable.dtype.name)
    if tuple(shape) != want_shape:
        return f"the variable has shape {want_shape}, the checkpoint has shape {tuple(shape)}"
    if dtype.kind != want.kind or dtype.itemsize != want.itemsize:
        return f"the variable is {want.name}, the checkpoint holds {_describe_dtype(dtype)}"
    return None


class _Memory:
    """Values already read, served like a reader (for deferred restorations)."""

    def __init__(self, source, values):
        self.path = source
        self._values = values

    def header(self, key):
        value = self._values[key]
        return value.shape, value.dtype

    def read(self, key):
        return self._values[key]


class _Plan:
    def __init__(self):
        self.variables = []    # (variable, node id)
        self.optimizers = []   # (optimizer, node id)


class Restoration:
    """One ``restore()``: what was bound, what was restored, what still waits for its object."""

    def __init__(self, reader, root, children_of=children):
        self.source = reader.path
        self._children = children_of   # names of live children (TensorFlow's differ for Keras models)
        self.nodes = reader.nodes
        self.root = root
        self.bound = {}         # node id -> live object
        self.restored = set()   # node ids whose value was assigned
        self.optimizers = {}    # node id -> (optimizer, item node ids, count assigned at load)
        self.pending = {}       # id(parent) -> (parent, {escaped name: node id})
        self._memory = None
        self.names = self._pretty_names()
        plan = _Plan()
        self._bind(root, 0, plan)
        self._execute(plan, reader, read_pending=True)

    # ------------------------------------------------------------ names ---
    def _pretty_names(self):
        names = {0: "(root)"}
        queue = [0]
        for node_id in queue:
            for name, child in self.nodes[node_id].children:
                if child not in names:
                    names[child] = f"{names[node_id]}.{name}"
                    queue.append(child)
        return names

    def name(self, node_id):
        return self.names.get(node_id, f"(node {node_id})")

    # ---------------------------------------------------------- binding ---
    def _bind(self, live, node_id, plan):
        """Binds ``live`` to ``node_id`` and, breadth first as TensorFlow, its children to the node's."""
        queue = [(live, node_id)]
        for live, node_id in queue:
            if node_id in self.bound:
                continue
            self.bound[node_id] = live
            node = self.nodes[node_id]
            if isinstance(live, Variable):
                if node.key is not None:
                    plan.variables.append((live, node_id))
                continue
            if isinstance(live, Optimizer):
                plan.optimizers.append((live, node_id))
                continue
            live_children = {escape(name): child for name, child in self._children(live)}
            for name, child_id in node.children:
                child = live_children.get(name)
                if child is not None:
                    queue.append((child, child_id))
                elif self._can_grow(live):
                    self._defer(live, name, child_id)

    @staticmethod
    def _can_grow(live):
        return ((isinstance(live, Layer) and not live.built) or hasattr(live, "_checkpoint_children")
                or (isinstance(live, Module) and not isinstance(live, Layer)))

    def _defer(self, parent, name, node_id):
        entry = self.pending.get(id(parent))
        if entry is None:
            entry = self.pending[id(parent)] = (parent, {})
            if isinstance(parent, Layer):
                _install_build_hook(parent, self)
            elif isinstance(parent, Module):
                watch_module(parent)
                if self not in parent._deferred_restorations:
                    parent._deferred_restorations.append(self)
            elif self not in parent._deferred_restorations:
                parent._deferred_restorations.append(self)
        entry[1][name] = node_id

    # ------------------------------------------------------- optimizers ---
    def _optimizer_items(self, node_id):
        """Node ids of the optimizer's ``_variables`` list, in order; raises for a malformed list."""
        lists = [child for name, child in self.nodes[node_id].children if name == "_variables"]
        if not lists:
            return []
        items = dict(self.nodes[lists[0]].children)
        expected = [str(i) for i in range(len(items))]
        if sorted(items) != sorted(expected) or any(self.nodes[items[k]].key is None for k in expected):
            raise FileContentError(f"Cannot restore '{self.source}': the optimizer at {self.name(node_id)} has a "
                                   "malformed `_variables` list (its items must be values keyed 0..n-1).")
        return [items[k] for k in expected]

    def _check_optimizer(self, optimizer, node_id, source, problems):
        """The store for ``load_own_variables`` (keys only) after checking what can be checked now."""
        items = self._optimizer_items(node_id)
        own = optimizer.variables
        if len(items) != len(own) and (optimizer.built or len(items) < len(own)):
            warnings.warn(f"Skipping variable loading for optimizer '{optimizer.name}', because it has {len(own)} "
                          f"variables whereas the saved optimizer has {len(items)} variables.", stacklevel=5)
            return None
        for variable, item in zip(own, items):
            problem = _fits(variable, *source.header(self.nodes[item].key))
            if problem:
                problems.append(f"{self.name(item)}: {problem}")
        return items

    # -------------------------------------------------------- executing ---
    def _execute(self, plan, source, read_pending=False):
        """Checks, reads, then assigns everything in ``plan``; on any problem changes nothing."""
        problems = []
        for variable, node_id in plan.variables:
            problem = _fits(variable, *source.header(self.nodes[node_id].key))
            if problem:
                problems.append(f"{self.name(node_id)}: {problem}")
        optimizers = []
        for optimizer, node_id in plan.optimizers:
            items = self._check_optimizer(optimizer, node_id, source, problems)
            if items is not None:
                optimizers.append((optimizer, node_id, items))
        if problems:
            raise FileContentError(f"Cannot restore '{self.source}': {len(problems)} value(s) do not fit the "
                                   "objects they belong to, so nothing was changed:\n"
                                   + "\n".join(f"  - {p}" for p in problems))
        values = {node_id: source.read(self.nodes[node_id].key) for _, node_id in plan.variables}
        stores = [(optimizer, node_id, items, {str(i): source.read(self.nodes[item].key)
                                               for i, item in enumerate(items)})
                  for optimizer, node_id, items in optimizers]
        if read_pending:
            self._memory = _Memory(self.source, self._read_pending(source))
        self._assign(plan, values, stores)

    def _read_pending(self, source):
        """The values of every node below a pending child: they are restored when their objects appear."""
        keys, seen = {}, set(self.bound)
        queue = [node_id for _, names in self.pending.values() for node_id in names.values()]
        while queue:
            node_id = queue.pop()
            if node_id in seen:
                continue
            seen.add(node_id)
            node = self.nodes[node_id]
            if node.key is not None:
                keys[node.key] = source.read(node.key)
            queue.extend(child for _, child in node.children)
        return keys

    def _assign(self, plan, values, stores):
        targets = [v for v, _ in plan.variables] + [v for optimizer, *_ in stores for v in optimizer.variables]
        snapshot = [(v, np.array(v)) for v in targets]
        try:
            with init_scope():    # a layer built while a tf.function is traced restores eagerly, once
                for variable, node_id in plan.variables:
                    variable.assign(values[node_id].astype(np.dtype(variable.dtype.name), copy=False))
                for optimizer, _, _, store in stores:
                    optimizer.load_own_variables(store)
        except Exception as e:
            with init_scope():
                for variable, old in snapshot:
                    variable.assign(old)
            raise FileContentError(f"Cannot restore '{self.source}': {e}. Nothing was changed.") from e
        self.restored.update(node_id for _, node_id in plan.variables)
        for optimizer, node_id, items, _ in stores:
            self.optimizers[node_id] = (optimizer, items, min(len(items), len(optimizer.variables)))
            for item in items:
                self.bound.setdefault(item, optimizer)

    # --------------------------------------------------------- deferred ---
    def resume(self, parent):
        """Binds the pending children of ``parent`` that exist now and restores them."""
        entry = self.pending.pop(id(parent), None)
        if entry is None:
            return
        live = {escape(name): child for name, child in self._children(parent)}
        plan, waiting = _Plan(), {}
        for name, node_id in entry[1].items():
            if node_id in self.bound:
                continue
            if name in live:
                self._bind(live[name], node_id, plan)
            else:
                waiting[name] = node_id
        if waiting and self._can_grow(parent):
            for name, node_id in waiting.items():
                self._defer(parent, name, node_id)
        self._execute(plan, self._memory)
        if not self.pending:
            self._memory = None  # everything has found its object: the values are no longer needed

    # ----------------------------------------------------------- status ---
    def _restored_nodes(self):
        done = set(self.restored)
        for optimizer, items, assigned in self.optimizers.values():
            complete = optimizer.built and len(optimizer.variables) == len(items)
            done.update(items if complete else items[:assigned])
        return done

    def unbound_live_variables(self):
        bound = {id(obj) for obj in self.bound.values()}
        for optimizer, items, _ in self.optimizers.values():
            bound.update(id(v) for v in optimizer.variables[:len(items)])
        graph = ObjectGraph(self.root)
        return [(graph.paths[i], v) for i, v in graph.variables() if id(v) not in bound]

    def unrestored_nodes(self):
        done = self._restored_nodes()
        return [i for i, node in enumerate(self.nodes) if node.key is not None and i not in done]

    def bound_nodes(self):
        return set(self.bound)


def _install_build_hook(layer, restoration):
    """Wraps ``layer.build`` on the instance so that pending values are assigned when it returns.

    Hooks of several restorations nest; the latest restore's values are assigned last, so they win.
    """
    build = layer.build

    def build_then_restore(*args, **kwargs):
        result = build(*args, **kwargs)
        if layer.__dict__.get("build") is build_then_restore:
            del layer.__dict__["build"]  # every nested hook has run by now
        restoration.resume(layer)
        return result

    layer.__dict__["build"] = build_then_restore
