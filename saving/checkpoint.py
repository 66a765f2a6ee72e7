"""``tf.train`` checkpoints: ``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``.

Object-based, as in TensorFlow: a checkpoint saves the variables reachable from the objects given to
``Checkpoint(...)`` (Keras models and layers, optimizers, ``tf.Module``s, Variables, and lists/dicts of
them), each under the path of names that reaches it, with TensorFlow's key names
(``model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``; see trackable_graph). Restoring
matches the saved object graph to the live one by those names, so it does not depend on creation order
or layer names; values of objects that do not exist yet are restored when they are created (deferred
restoration, see checkpoint_restore).

Storage differs from TensorFlow's: tapeflow writes a checkpoint ``<prefix>`` as one HDF5 file
``<prefix>.h5`` (the values under TensorFlow's keys plus the object graph as JSON, see checkpoint_file),
not TensorFlow's ``<prefix>.index`` + ``<prefix>.data-00000-of-00001`` bundle. It reads both: a prefix
with no ``.h5`` file but an ``.index`` is read as TensorFlow's bundle (tf_bundle, which needs the
``tfcheckpoint`` extra), matching Keras 3's names for models and layer weights (tf_object_names).
The ``checkpoint`` state file of a directory is TensorFlow's own text format. Files are written
atomically; loading checks every shape and dtype against the variables before reading data and
changes nothing when something does not fit (``tapeflow.saving.FileFormatError``).
"""
import glob
import os
import time
import warnings
from collections import OrderedDict

import numpy as np

from tapeflow.framework.variables import Variable

from .checkpoint_containers import resume_deferred, tracked
from .checkpoint_file import GRAPH_KEY, CheckpointReader, file_of, write_checkpoint
from .checkpoint_restore import Restoration
from .checkpoint_state import read_state, write_state
from .trackable_graph import ObjectGraph, children, is_trackable


class CheckpointOptions:
    """``tf.train.CheckpointOptions``: accepted for compatibility; tapeflow has one device and writes
    synchronously, so the options change nothing."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False, experimental_sharding_callback=None,
                 experimental_skip_slot_variables=False):
        self.experimental_io_device = experimental_io_device
        self.enable_async = enable_async or experimental_enable_async_checkpoint
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


def _check_trackable(name, value):
    if not is_trackable(value) or isinstance(value, (list, tuple, dict)) and not value:
        raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (a Variable, Keras layer or "
                         f"model, optimizer, tf.Module, or a list/dict of them), got {value!r}.")


def _open_reader(save_path):
    """A reader of checkpoint ``save_path``: tapeflow's ``<prefix>.h5``, else TensorFlow's ``<prefix>.index``
    bundle; and the function naming live objects' children as that checkpoint's writer did."""
    path = file_of(save_path)
    if os.path.isfile(path):
        return CheckpointReader(path), children
    if os.path.isfile(save_path + ".index"):
        from .tf_bundle import BundleReader   # protobuf and tensorboard: only for TensorFlow's checkpoints
        from .tf_object_names import tf_children
        return BundleReader(save_path), tf_children
    raise FileNotFoundError(f"Cannot restore '{save_path}': no checkpoint file '{path}' or '{save_path}.index' "
                            "(a checkpoint prefix such as 'ckpts/ckpt-3' is expected, or a directory holding a "
                            "`checkpoint` file).")


class Checkpoint:
    """Groups trackable objects and saves or restores their variables (``tf.train.Checkpoint``).

    ``Checkpoint(model=model, optimizer=optimizer)`` saves both under those names;
    ``Checkpoint(root, **kwargs)`` saves ``root``'s own children at the top level. ``save(prefix)``
    numbers the checkpoints (``prefix-1``, ``prefix-2``, ...) with ``save_counter`` and records the
    latest in the directory's ``checkpoint`` file; ``write(prefix)`` writes exactly ``prefix``.
    """

    def __init__(self, root=None, **kwargs):
        if root is not None:
            _check_trackable("root", root)
            if isinstance(root, Variable):
                raise ValueError("A Variable cannot be the root of a Checkpoint; pass it by keyword: "
                                 "Checkpoint(v=variable).")
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_attached", OrderedDict())
        object.__setattr__(self, "_deferred_restorations", [])
        object.__setattr__(self, "_save_counter", None)   # created by save(), restore() or reading the property
        for name, value in kwargs.items():
            _check_trackable(name, value)
            if root is not None and any(n == name for n, _ in children(root)):
                raise ValueError(f"Cannot attach {name!r} to the Checkpoint: its root already has a child of "
                                 "that name.")
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        value = tracked(value)
        object.__setattr__(self, name, value)
        if is_trackable(value):
            self._attached[name] = value
            resume_deferred(self)
        else:
            self._attached.pop(name, None)

    def _checkpoint_children(self):
        out = children(self._root) if self._root is not None else []
        counter = [] if self._save_counter is None else [("save_counter", self._save_counter)]
        return out + list(self._attached.items()) + counter

    @property
    def save_counter(self):
        """An int64 variable: the number of ``save()`` calls, which numbers the checkpoints.

        As in TensorFlow it exists (and is saved) only once ``save()``, ``restore()`` or this property
        created it: ``write()`` on a fresh Checkpoint saves no counter."""
        if self._save_counter is None:
            object.__setattr__(self, "_save_counter", Variable(np.int64(0), trainable=False, name="save_counter"))
            resume_deferred(self)
        return self._save_counter

    # ------------------------------------------------------------ write ---
    def write(self, file_prefix, options=None):
        """Writes checkpoint ``file_prefix`` (the file ``<file_prefix>.h5``) and returns ``file_prefix``.

        Does not touch ``save_counter`` or the ``checkpoint`` state file."""
        file_prefix = os.fspath(file_prefix)
        directory = os.path.dirname(os.path.abspath(file_prefix))
        os.makedirs(directory, exist_ok=True)
        write_checkpoint(file_prefix, ObjectGraph(self))
        return file_prefix

    def save(self, file_prefix, options=None):
        """Saves a numbered checkpoint ``<file_prefix>-<save_counter>`` and returns its prefix."""
        file_prefix = os.fspath(file_prefix)
        counter = self.save_counter
        previous = counter.numpy()
        counter.assign_add(1)
        try:
            path = self.write(f"{file_prefix}-{int(counter.numpy())}", options)
        except BaseException:
            counter.assign(previous)
            raise
        write_state(os.path.dirname(file_prefix) or ".", path, [path])
        return path

    # ------------------------------------------------------------- read ---
    def read(self, save_path, options=None):
        """Restores checkpoint ``save_path`` (a prefix) and returns a load status."""
        save_path = os.fspath(save_path)
        reader, children_of = _open_reader(save_path)
        with reader:
            restoration = Restoration(reader, self, children_of)
        return CheckpointLoadStatus(restoration)

    def restore(self, save_path, options=None):
        """Restores checkpoint ``save_path`` (a prefix, or a directory: its latest checkpoint).

        Values whose objects do not exist yet are assigned when they are created. Returns a status
        with ``assert_consumed()``, ``assert_existing_objects_matched()`` and ``expect_partial()``.
        ``save_path=None`` restores nothing (``InitializationOnlyStatus``)."""
        if save_path is None:
            return InitializationOnlyStatus()
        self.save_counter   # noqa: B018 -- TensorFlow's restore creates the counter, so the checkpoint's restores it
        save_path = os.fspath(save_path)
        if os.path.isdir(save_path):
            latest = latest_checkpoint(save_path)
            if latest is None:
                raise FileNotFoundError(f"Cannot restore from directory '{save_path}': it holds no checkpoint "
                                        "(no `checkpoint` state file naming an existing checkpoint).")
            save_path = latest
        return self.read(save_path, options)


# ---------------------------------------------------------------- status ---
class CheckpointLoadStatus:
    """What a restore matched (``tf.train.Checkpoint.restore``'s return value)."""

    def __init__(self, restoration):
        self._restoration = restoration

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a variable that exists now got no value from the checkpoint."""
        r = self._restoration
        unrestored = set(r.unrestored_nodes())
        unassigned = [i for i, obj in r.bound.items() if isinstance(obj, Variable) and i in unrestored]
        if unassigned:
            raise AssertionError(f"Object {r.name(unassigned[0])} not assigned a value from checkpoint "
                                 f"'{r.source}'.")
        unbound = r.unbound_live_variables()
        if unbound:
            shown = [f"{path} (shape {tuple(v.shape)})" for path, v in unbound[:10]]
            raise AssertionError(f"Found {len(unbound)} Python objects that were not bound to checkpointed values, "
                                 "likely due to changes in the Python program. Showing "
                                 f"{len(shown)} of {len(unbound)} unmatched objects: {shown}")
        return self

    def assert_consumed(self):
        """Raises AssertionError unless every value in the checkpoint was restored (deferred ones
        count once their objects exist) and every existing variable got a value."""
        self.assert_existing_objects_matched()
        r = self._restoration
        unrestored = r.unrestored_nodes()
        if unrestored:
            names = [r.name(i) for i in unrestored]
            raise AssertionError(f"Unresolved object in checkpoint '{r.source}': {names[0]} has not been "
                                 f"restored (no matching Python object, or it has not been created yet). "
                                 f"{len(names)} unresolved in all: {names[:10]}")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing but the root and its save counter matched."""
        r = self._restoration
        trivial = {0} | {child for name, child in r.nodes[0].children if name == "save_counter"}
        if not r.bound_nodes() - trivial:
            raise AssertionError(f"Nothing except the root object matched a checkpointed value in '{r.source}'. "
                                 "Typically this means that the checkpoint does not match the Python program.")
        return self

    def expect_partial(self):
        """Declares that a partial restore is intended (tapeflow does not warn about it either way)."""
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are assigned eagerly."""

    def initialize_or_restore(self, session=None):
        """Nothing to run: values are assigned eagerly."""


class InitializationOnlyStatus:
    """The status of ``restore(None)``: nothing was restored."""

    def _fail(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_consumed(self):
        self._fail()

    def assert_existing_objects_matched(self):
        self._fail()

    def assert_nontrivial_match(self):
        self._fail()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run."""

    def initialize_or_restore(self, session=None):
        """Nothing to run: variables are initialized when created."""


# ------------------------------------------------------------- functions ---
def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the latest checkpoint recorded in ``checkpoint_dir``'s state file, or None."""
    state = read_state(os.fspath(checkpoint_dir), latest_filename or "checkpoint")
    if state is None:
        return None
    prefix = state.model_checkpoint_path
    if os.path.isfile(file_of(prefix)) or os.path.isfile(prefix + ".index"):
        return prefix
    warnings.warn(f"Couldn't match files for checkpoint {prefix}", stacklevel=2)
    return None


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise FileNotFoundError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        path = latest
    return _open_reader(path)[0]


class TensorReader:
    """``tf.train.load_checkpoint``'s reader of either format: ``get_variable_to_shape_map()``,
    ``get_variable_to_dtype_map()``, ``has_tensor(key)``, ``get_tensor(key)``."""

    def __init__(self, ckpt_dir_or_file):
        self._reader = _resolve(ckpt_dir_or_file)
        if isinstance(self._reader, CheckpointReader):
            entries = {key: self._reader.header(key) for key in self._reader.keys()}
            self._entries = {key: (shape, np.dtype(dtype).name) for key, (shape, dtype) in entries.items()}
            self._entries[GRAPH_KEY] = ((), "string")
        else:
            self._entries = self._reader.entries()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._reader.close()

    def get_variable_to_shape_map(self):
        return {key: list(shape) for key, (shape, _) in self._entries.items()}

    def get_variable_to_dtype_map(self):
        from tapeflow.framework.dtypes import as_dtype
        return {key: as_dtype(dtype) for key, (_, dtype) in self._entries.items()
                if not dtype.startswith("unsupported:")}

    def has_tensor(self, key):
        return key in self._entries

    def get_tensor(self, key):
        if key not in self._entries:
            raise ValueError(f"Key {key!r} not found in checkpoint '{self._reader.path}'.")
        if isinstance(self._reader, CheckpointReader) and key == GRAPH_KEY:
            raise ValueError(f"'{self._reader.path}' is a tapeflow checkpoint: its object graph is JSON, not "
                             "TensorFlow's serialized proto.")
        return self._reader.get_tensor(key) if hasattr(self._reader, "get_tensor") else self._reader.read(key)


def load_checkpoint(ckpt_dir_or_file):
    """A ``TensorReader`` of a checkpoint (prefix or directory: its latest), tapeflow's or TensorFlow's."""
    return TensorReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file):
    """``[(key, shape)]`` of every value in a checkpoint (prefix or directory), sorted by key."""
    with TensorReader(ckpt_dir_or_file) as reader:
        return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The value (a numpy array) stored under key ``name`` in a checkpoint (prefix or directory)."""
    with TensorReader(ckpt_dir_or_file) as reader:
        return reader.get_tensor(name)


# --------------------------------------------------------------- manager ---
def _delete_checkpoint(prefix):
    """Deletes checkpoint ``prefix``: its ``.h5`` file, or the files of a TensorFlow bundle it took over."""
    bundle = glob.glob(glob.escape(prefix) + ".data-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]")
    for path in [file_of(prefix), prefix + ".index"] + bundle:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


class CheckpointManager:
    """Numbers, records and rotates the checkpoints of one ``Checkpoint`` in ``directory``.

    Keeps the ``max_to_keep`` latest (None: all); with ``keep_checkpoint_every_n_hours``, a checkpoint
    leaving the window is kept on disk (but no longer listed) if it is at least that many hours newer
    than the last one so kept. With ``checkpoint_interval`` (and ``step_counter``), ``save()`` writes
    only when the step advanced by that much. A manager created on a directory that holds checkpoints
    takes over their management from its ``checkpoint`` state file.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"`checkpoint` must be a tf.train.Checkpoint, got {checkpoint!r}.")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_checkpoint_step = None
        self._maybe_delete = OrderedDict()
        self._recover(time.time())

    def _recover(self, now):
        state = read_state(self._directory)
        if state is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved_timestamp = state.last_preserved_timestamp
        if now < self._last_preserved_timestamp:
            warnings.warn("time.time() returned a value earlier than the last preserved checkpoint's timestamp "
                          f"in '{self._directory}'; old checkpoints will not be deleted until the clock catches "
                          "up.", stacklevel=3)
        timestamps = state.all_model_checkpoint_timestamps
        if len(timestamps) != len(state.all_model_checkpoint_paths):
            timestamps = [self._last_preserved_timestamp] * len(state.all_model_checkpoint_paths)
        directory = os.path.abspath(self._directory)
        for path, timestamp in zip(state.all_model_checkpoint_paths, timestamps):
            if os.path.dirname(os.path.abspath(path)) != directory:
                # Rotation deletes what it manages: never anything outside the manager's directory.
                warnings.warn(f"Not managing checkpoint '{path}' listed in '{self._directory}': it lies outside "
                              "that directory.", stacklevel=3)
                continue
            timestamp = min(timestamp, now)
            if timestamp > self._last_preserved_timestamp:
                self._maybe_delete[path] = timestamp

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The prefixes of the managed checkpoints, oldest first."""
        return list(self._maybe_delete)

    def _record_state(self):
        if self._latest_checkpoint is None:
            return
        write_state(self._directory, self._latest_checkpoint, list(self._maybe_delete),
                    list(self._maybe_delete.values()), self._last_preserved_timestamp)

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            prefix, timestamp = self._maybe_delete.popitem(last=False)
            hours = self._keep_checkpoint_every_n_hours
            if hours and timestamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = timestamp
                continue
            _delete_checkpoint(prefix)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a checkpoint numbered ``checkpoint_number`` (default: the save counter) and rotates
        old ones; returns its prefix, or None when ``checkpoint_interval`` says it is too early."""
        if self._checkpoint_interval is not None:
            step = int(np.asarray(self._step_counter))
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        counter = self._checkpoint.save_counter
        previous = counter.numpy()
        counter.assign_add(1)
        if checkpoint_number is None:
            checkpoint_number = int(counter.numpy())
        elif isinstance(checkpoint_number, Variable) or hasattr(checkpoint_number, "numpy"):
            checkpoint_number = int(np.asarray(checkpoint_number))
        try:
            path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}", options)
        except BaseException:
            counter.assign(previous)
            raise
        self._maybe_delete.pop(path, None)  # an overwritten checkpoint moves to the end of the queue
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._record_state()  # first record the new checkpoint: an interruption while deleting keeps it
        self._sweep()
        self._record_state()
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its prefix; else runs ``init_fn`` and returns None."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = int(np.asarray(self._step_counter))
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None
