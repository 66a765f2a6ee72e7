"""Lists and dicts attached to a ``tf.train.Checkpoint`` (TensorFlow's ListWrapper / DictWrapper), or to a
``tf.Module`` while a restore waits for its children.

A list or dict set as an attribute of a Checkpoint is stored as a ``TrackedList`` / ``TrackedDict``: a
copy that tells pending restorations when items are added, so ``ckpt.listed = []`` followed by
``ckpt.listed.append(v)`` after ``ckpt.restore(...)`` gives ``v`` its checkpointed value (deferred
restoration, as for attributes). The copy remembers the list it was made from: saving fails, as in
TensorFlow, when that original was changed afterwards, since such changes are not seen by the copy.
"""


def resume_deferred(owner):
    """Gives the restorations waiting on ``owner``'s children the children that exist now."""
    for restoration in list(owner._deferred_restorations):
        restoration.resume(owner)
        if not any(entry[0] is owner for entry in restoration.pending.values()):
            while restoration in owner._deferred_restorations:
                owner._deferred_restorations.remove(restoration)


def _same_items(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class TrackedList(list):
    def __init__(self, source=()):
        super().__init__(source)
        self._source = source if isinstance(source, list) else None
        self._deferred_restorations = []

    def _checkpoint_children(self):
        from .trackable_graph import is_trackable
        if self._source is not None and not _same_items(self._source, self):
            raise ValueError(f"Unable to save the object {self!r} (a list wrapper constructed to track trackable "
                             "objects): the wrapped list was modified outside the wrapper. Change the list "
                             "through the attribute it was assigned to.")
        return [(str(i), v) for i, v in enumerate(self) if is_trackable(v)]

    def _changed(self):
        self._source = None     # the copy now holds what the user wrote through it
        if self._deferred_restorations:
            resume_deferred(self)

    def append(self, value):
        super().append(value)
        self._changed()

    def extend(self, values):
        super().extend(values)
        self._changed()

    def insert(self, index, value):     # renumbers the items after it: TensorFlow restores nothing here either
        super().insert(index, value)
        self._source = None

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._changed()

    def __iadd__(self, values):
        super().__iadd__(values)
        self._changed()
        return self


class TrackedDict(dict):
    def __init__(self, source=()):
        super().__init__(source)
        self._source = source if isinstance(source, dict) else None
        self._deferred_restorations = []

    def _checkpoint_children(self):
        from .trackable_graph import children
        if self._source is not None and (self._source.keys() != self.keys()
                                         or any(self._source[k] is not v for k, v in self.items())):
            raise ValueError(f"Unable to save the object {self!r} (a dict wrapper constructed to track trackable "
                             "objects): the wrapped dict was modified outside the wrapper. Change the dict "
                             "through the attribute it was assigned to.")
        return children(dict(self))

    def _changed(self):
        self._source = None
        if self._deferred_restorations:
            resume_deferred(self)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key, default=None):
        value = super().setdefault(key, default)
        self._changed()
        return value


def watch_module(module):
    """Makes attributes set on ``module`` (a tf.Module, not a Layer) resume the restorations waiting on it."""
    module.__dict__.setdefault("_deferred_restorations", [])
    module.__dict__["_attribute_set_hook"] = _module_attribute_set


def _module_attribute_set(module, name, value):
    from .trackable_graph import is_trackable
    value = tracked(value)
    object.__setattr__(module, name, value)
    if is_trackable(value):
        resume_deferred(module)
    if not module._deferred_restorations:
        del module.__dict__["_attribute_set_hook"]    # nothing waits any more: plain attributes again


def tracked(value):
    """``value`` as an attribute of a Checkpoint holds it: plain lists and dicts become tracked copies."""
    if type(value) is list:
        return TrackedList(value)
    if type(value) is dict:
        return TrackedDict(value)
    return value
