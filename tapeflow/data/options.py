"""tf.data.Options: settings attached to a dataset with ``with_options``.

tapeflow records the options and reports them through ``dataset.options()``;
the only one that changes iteration is ``deterministic`` (parallel map keeps
the input order in any case, which a non-deterministic pipeline also allows).
"""
from .dataset import Dataset


class _OptionGroup:
    """A fixed set of attributes, each None until set; setting an unknown one raises."""
    _fields = {}

    def __init__(self):
        for name, default in self._fields.items():
            object.__setattr__(self, name, default() if callable(default) else default)

    def __setattr__(self, name, value):
        if name not in self._fields:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def _merge(self, other):
        merged = type(self)()
        for name in self._fields:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _OptionGroup):
                value = mine._merge(theirs)
            else:
                value = theirs if theirs is not None else mine
            object.__setattr__(merged, name, value)
        return merged

    def __eq__(self, other):
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self._fields)

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields) + ")"


class ThreadingOptions(_OptionGroup):
    _fields = {"max_intra_op_parallelism": None, "private_threadpool_size": None}


class AutotuneOptions(_OptionGroup):
    _fields = {"enabled": None, "cpu_budget": None, "ram_budget": None, "autotune_algorithm": None}


class OptimizationOptions(_OptionGroup):
    _fields = {"apply_default_optimizations": None, "filter_fusion": None, "map_and_batch_fusion": None,
               "map_and_filter_fusion": None, "map_fusion": None, "map_parallelization": None,
               "noop_elimination": None, "parallel_batch": None, "shuffle_and_repeat_fusion": None,
               "inject_prefetch": None}


class DistributeOptions(_OptionGroup):
    _fields = {"auto_shard_policy": None, "num_devices": None}


class Options(_OptionGroup):
    _fields = {"deterministic": None, "autotune": AutotuneOptions, "experimental_distribute": DistributeOptions,
               "experimental_optimization": OptimizationOptions, "threading": ThreadingOptions,
               "experimental_slack": None, "experimental_external_state_policy": None,
               "experimental_symbolic_checkpoint": None, "experimental_warm_start": None}

    def merge(self, options):
        return merge(self, options)


def merge(first, second):
    """Options set in ``second`` override those of ``first``."""
    return first._merge(second)


class OptionsDataset(Dataset):
    _tf_name = "_OptionsDataset"

    def __init__(self, input_dataset, options):
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a `tf.data.Options`, got {type(options).__name__}.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._options = options

    def options(self):
        return merge(super().options(), self._options)

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        return self._input._cardinality()

    def _iterate(self):
        return self._input._iterate()

    def _index_plan(self):
        return self._input._index_plan()
