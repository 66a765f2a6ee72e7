"""Optimizer: the base class of every tapeflow optimizer (Keras 3's ``BaseOptimizer``).

The base class owns the whole pipeline of one step, in Keras 3's order:

    validate -> build (first call) -> overwrite-with-gradient variables ->
    drop None gradients -> unscale (loss_scale_factor) -> [gradient
    accumulation] -> clip -> weight decay -> update_step per variable ->
    EMA -> constraints -> iterations += 1

A subclass only creates its slot variables in ``build`` (through
``add_optimizer_variables``) and writes the update rule of one variable in
``update_step(gradient, variable, learning_rate)``. The built-in optimizers
run their rule as one state op (``tapeflow/ops/training_ops.py``: a fused
numba kernel updating the variable and its slots in place, in one pass over
memory, with the decoupled weight decay folded in). A user subclass may
instead write its rule with tapeflow ops and ``variable.assign*``, as in
Keras. Clipping, loss-scale division, accumulation and the moving average
are ops too: a step traced in ``tf.function`` records all of it, so the
traced step replays, and saves, exactly as it runs eagerly.

Everything is checked before anything is written: a bad call (gradient and
variable counts, shapes or dtypes that do not match, a variable the
optimizer was not built for) raises and leaves every variable unchanged.
"""
import contextlib
import inspect
import re
import warnings

import numpy as np

from tapeflow.distribute import distribute_lib
from tapeflow.framework import dtypes
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow import init_scope
from tapeflow.framework.recording import execute_state
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, math_ops

from . import schedules as lr_schedules

# ----------------------------------------------------------------- helpers ---
def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _is_float(value):
    return isinstance(value, (float, np.floating))


def _is_number(value):
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))


def _is_int(value):
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def _owner(variable):
    """The variable itself (``assign`` returns a view whose parent owns the storage)."""
    return getattr(variable, "_parent", variable)


def _shape(variable):
    """The shape of a variable / tensor / array as a tuple (no copy)."""
    return np.asarray(variable).shape


def _var_name(variable):
    return re.sub(r":\d+$", "", str(getattr(variable, "name", "variable")))


def _var_path(variable):
    """Keras's ``variable.path`` ('seq/dense/kernel'); a plain tf.Variable falls back to its name."""
    path = getattr(variable, "path", None)
    return path if isinstance(path, str) and path else _var_name(variable)


def _describe(variable):
    return f"'{_var_path(variable)}' (shape={TensorShape(_shape(variable))}, dtype={variable.dtype.name})"


def _as_array(value):
    """A Tensor / Variable / numpy value as a numpy array (configuration values, not step state)."""
    return value.numpy() if isinstance(value, (Tensor, Variable)) else np.asarray(value)


def _constant(value, dtype):
    """``value`` as a scalar tensor of ``dtype``."""
    return convert_to_tensor(np.asarray(value, dtype=dtypes.as_dtype(dtype).as_numpy_dtype))


def runs_state_op(update_step):
    """Marks a built-in ``update_step`` that runs its rule as one state op (through ``_update_op``):
    the op applies the decoupled weight decay itself and honours gated updates."""
    update_step._runs_state_op = True
    return update_step


class OptimizerVariable(Variable):
    """A variable created by an optimizer (iteration, learning_rate, slots).

    ``path`` is ``'<optimizer name>/<variable name>'``, as in Keras 3
    (e.g. ``'adam/seq_dense_kernel_momentum'``).
    """

    def __init__(self, initial_value, name, path, dtype=None):
        super().__init__(initial_value, trainable=False, name=name, dtype=dtype)
        self._path = path

    @property
    def path(self):
        return self._path


# -------------------------------------------------------------- the class ---
class Optimizer:
    """Base class for optimizers (``tapeflow.optimizers.Optimizer``).

    Args:
        learning_rate: A Python float, a
            ``tapeflow.optimizers.schedules.LearningRateSchedule``, or a
            callable returning the rate (called with the current iteration
            if it takes an argument, else with none).
        weight_decay: If set, decoupled weight decay: each step, before the
            update, ``w -= w * weight_decay * learning_rate`` for every
            variable not excluded with ``exclude_from_weight_decay``.
        clipnorm: If set, each gradient is clipped to this L2 norm.
        clipvalue: If set, each gradient is clipped to [-clipvalue, clipvalue].
        global_clipnorm: If set, all gradients are scaled together so that
            their global L2 norm is at most this value.
        use_ema: Keep an exponential moving average of the variables.
        ema_momentum: Momentum of that average.
        ema_overwrite_frequency: Every that many iterations, overwrite the
            variables with their moving average (None: never).
        loss_scale_factor: Gradients are divided by it before they are used
            (pair it with ``scale_loss``).
        gradient_accumulation_steps: If an int ``n >= 2``, the variables are
            updated every ``n`` steps with the mean of the accumulated
            gradients.
        name: The optimizer's name (prefix of its variables' paths).
    """

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if "decay" in kwargs:
            kwargs.pop("decay")
            warnings.warn("Argument `decay` is no longer supported and will be ignored; use a "
                          "`tapeflow.optimizers.schedules.LearningRateSchedule` instead.", stacklevel=3)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        clips = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
        if sum(v is not None for v in clips.values()) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                             + ", ".join(f"{k}={v}" for k, v in clips.items()))
        for key, value in clips.items():
            if value is not None and (not _is_number(value) or value < 0):
                raise ValueError(f"Argument `{key}` must be a non-negative number. Received: {key}={value!r}")
        if weight_decay is not None and not _is_number(weight_decay):
            raise ValueError(f"Argument `weight_decay` must be a float. Received: weight_decay={weight_decay!r}")
        if use_ema:
            if not _is_number(ema_momentum) or not 0 <= ema_momentum <= 1:
                raise ValueError("`ema_momentum` must be in the range [0, 1]. "
                                 f"Received: ema_momentum={ema_momentum!r}")
            if ema_overwrite_frequency is not None and (
                    not _is_int(ema_overwrite_frequency) or ema_overwrite_frequency < 1):
                raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. "
                                 f"Received: ema_overwrite_frequency={ema_overwrite_frequency!r}")
        if gradient_accumulation_steps is not None and (
                not _is_int(gradient_accumulation_steps) or gradient_accumulation_steps < 2):
            raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. "
                             f"Received: gradient_accumulation_steps={gradient_accumulation_steps!r}")
        if loss_scale_factor is not None and (not _is_number(loss_scale_factor) or loss_scale_factor == 0):
            raise ValueError("`loss_scale_factor` must be a non-zero number or None. "
                             f"Received: loss_scale_factor={loss_scale_factor!r}")
        if name is not None and not isinstance(name, str):
            raise ValueError(f"Argument `name` must be a string. Received: name={name!r}")

        self.name = _snake_case(type(self).__name__) if name is None else name
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = bool(use_ema)
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.built = False

        self._variables = []
        self._trainable_variables = []
        self._variable_index = {}
        self._exclude_ids = set()
        self._exclude_names = ()
        self._pending_values = None
        self._decay_flags = {}
        self._gate = None           # the condition state updates run under (see ``_gated``)
        self._model_variables_moving_average = []
        self._accumulated_gradients = []
        self._iterations = self.add_variable(shape=(), initializer="zeros", dtype="int64", name="iteration")
        self._learning_rate = self._build_learning_rate(learning_rate)

    # ------------------------------------------------------ learning rate ---
    def _build_learning_rate(self, learning_rate):
        if isinstance(learning_rate, lr_schedules.LearningRateSchedule):
            return learning_rate
        if callable(learning_rate) and not isinstance(learning_rate, (Tensor, Variable)):
            return learning_rate
        value = self._learning_rate_value(learning_rate)
        return self.add_variable(shape=(), initializer=value, dtype="float32", name="learning_rate")

    @staticmethod
    def _learning_rate_value(learning_rate):
        if isinstance(learning_rate, (Tensor, Variable, np.ndarray)):
            arr = _as_array(learning_rate)
            if arr.ndim == 0 and arr.dtype.kind == "f":
                return float(arr)
        elif _is_float(learning_rate):
            return float(learning_rate)
        raise ValueError(
            "Argument `learning_rate` should be a float, a "
            "`tapeflow.optimizers.schedules.LearningRateSchedule` instance, or a callable returning the "
            f"learning rate. Received: learning_rate={learning_rate!r} of type {type(learning_rate).__name__}"
            + (f" (write {float(learning_rate)!r} for a float)" if _is_int(learning_rate) else ""))

    @property
    def learning_rate(self):
        """The current learning rate: the variable for a float rate, else the
        schedule or callable evaluated at the current iteration."""
        return self._get_current_learning_rate()

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if isinstance(learning_rate, lr_schedules.LearningRateSchedule) or (
                callable(learning_rate) and not isinstance(learning_rate, (Tensor, Variable))):
            previous = self._learning_rate
            self._learning_rate = learning_rate
            if isinstance(previous, Variable):
                self._variables = [v for v in self._variables if v is not previous]
            return
        if not isinstance(self._learning_rate, Variable):
            kind = ("a `LearningRateSchedule`" if isinstance(self._learning_rate, lr_schedules.LearningRateSchedule)
                    else "a callable")
            raise TypeError(
                f"This optimizer was created with {kind} as its `learning_rate`, hence its learning rate is "
                "not settable to a number. If you need the learning rate to be settable, create the "
                "optimizer with a float `learning_rate`, or assign a new schedule.")
        value = _as_array(learning_rate)
        if value.ndim != 0 or value.dtype.kind not in "fiu":
            raise ValueError(f"The learning rate must be a scalar number. Received: {learning_rate!r}")
        self._learning_rate.assign(float(value))

    def _get_current_learning_rate(self):
        lr = self._learning_rate
        if isinstance(lr, lr_schedules.LearningRateSchedule):
            return lr(self._iterations)
        if isinstance(lr, Variable):
            return lr
        return self._call_learning_rate_callable(lr)

    def _call_learning_rate_callable(self, fn):
        try:
            params = inspect.signature(fn).parameters.values()
            takes_step = any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                             for p in params) or any(p.kind == p.VAR_POSITIONAL for p in params)
        except (TypeError, ValueError):
            takes_step = False
        return fn(self._iterations) if takes_step else fn()

    @property
    def iterations(self):
        """The number of steps taken so far (an int64 variable)."""
        return self._iterations

    # ---------------------------------------------------------- variables ---
    @property
    def variables(self):
        """All optimizer variables in Keras's order: iteration, learning_rate
        (for a float rate), then the ones ``build`` created."""
        self._restore_pending()
        return list(self._variables)

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="none", layout=None, name=None):
        """Creates and tracks an optimizer variable (``initializer``: 'zeros',
        'ones', a number, an array, or a callable ``(shape, dtype)``)."""
        shape = tuple(int(d) for d in shape)
        np_dtype = dtypes.as_dtype(dtype or "float32")._np
        if isinstance(initializer, str):
            if initializer not in ("zeros", "ones"):
                raise ValueError(f"Unknown initializer '{initializer}' for optimizer variable '{name}'; "
                                 "use 'zeros', 'ones', a number or a callable (shape, dtype).")
            value = (np.zeros if initializer == "zeros" else np.ones)(shape, np_dtype)
        elif callable(initializer):
            value = _as_array(initializer(shape, dtype or "float32")).astype(np_dtype)
        else:
            value = np.broadcast_to(np.asarray(initializer, dtype=np_dtype), shape).copy()
        name = name or "variable"
        variable = OptimizerVariable(value, name=name, path=f"{self.name}/{name}", dtype=np_dtype)
        self._variables.append(variable)
        return variable

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A variable shaped like ``reference_variable``, named
        ``'<reference path with _ for />_<name>'``."""
        slot = f"{_var_path(reference_variable).replace('/', '_')}_{name}"
        return self.add_variable(shape=_shape(reference_variable), initializer=initializer,
                                 dtype=reference_variable.dtype, name=slot)

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """One slot per trainable variable for each name in ``name``.

        With a list of names the slots are interleaved per variable
        (``m0, v0, m1, v1, ...``) and a tuple of lists is returned; with one
        name, a list. Variables with ``overwrite_with_gradient`` get None.
        """
        names = [name] if isinstance(name, str) else list(name)
        inits = initializer if isinstance(initializer, (list, tuple)) else [initializer] * len(names)
        if len(inits) != len(names):
            raise ValueError(f"Got {len(names)} slot names but {len(inits)} initializers.")
        slots = tuple([] for _ in names)
        for variable in trainable_variables:
            for k, (slot_name, init) in enumerate(zip(names, inits)):
                slots[k].append(None if getattr(variable, "overwrite_with_gradient", False) else
                                self.add_variable_from_reference(variable, name=slot_name, initializer=init))
        return slots[0] if isinstance(name, str) else slots

    def _var_key(self, variable):
        return _owner(variable)._id

    def _get_variable_index(self, variable):
        return self._variable_index[self._var_key(variable)]

    def _check_variables(self, variables, what):
        seen = set()
        for v in variables:
            if not isinstance(_owner(v), Variable):
                raise TypeError(f"{what} must be tf.Variable objects. Received: {v!r} of type {type(v).__name__}")
            if v.dtype._np.kind != "f":
                raise ValueError(f"Optimizers can only update floating-point variables. Variable {_describe(v)} "
                                 "is not.")
            key = self._var_key(v)
            if key in seen:
                raise ValueError(f"Variable {_describe(v)} appears more than once in {what}; pass each "
                                 "variable once.")
            seen.add(key)

    def build(self, var_list):
        """Creates the optimizer's per-variable state for ``var_list``.

        Called by the first ``apply``; call it yourself to create the slots
        up front. Subclasses call ``super().build(var_list)`` first, then
        create their slots. Building again is a no-op.
        """
        if self.built:
            return
        var_list = list(var_list)
        self._check_variables(var_list, "`var_list`")
        if self.use_ema:
            self._model_variables_moving_average = self.add_optimizer_variables(var_list, "average")
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = self.add_optimizer_variables(var_list, "gradient_accumulator")
        self._trainable_variables = var_list
        self._variable_index = {self._var_key(v): i for i, v in enumerate(var_list)}
        self.built = True

    # -------------------------------------------------------- weight decay ---
    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Exempts variables from weight decay: those in ``var_list``, and
        those whose name matches a regular expression in ``var_names``.
        Must be called before the optimizer is built."""
        if self.built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before the optimizer is "
                             "built (before its first `apply`/`build`).")
        if var_list:
            self._exclude_ids |= {self._var_key(v) for v in var_list}
        if var_names:  # matched against the variable's name ('kernel'), as Keras does
            self._exclude_names = tuple(self._exclude_names) + tuple(var_names)

    def _use_weight_decay(self, variable):
        key = self._var_key(variable)
        use = self._decay_flags.get(key)
        if use is None:  # exclusions are frozen once built, so the answer is cached
            use = key not in self._exclude_ids and not any(
                re.search(pattern, _var_name(variable)) for pattern in self._exclude_names)
            if self.built:
                self._decay_flags[key] = use
        return use

    def _apply_weight_decay(self, variables, learning_rate):
        """``w -= w * weight_decay * lr`` with ops (a built-in rule's state op does it in its own pass)."""
        if self.weight_decay is None:
            return
        for variable in variables:
            if self._use_weight_decay(variable):
                w = convert_to_tensor(variable)
                lr = math_ops.cast(learning_rate, w.dtype)
                variable.assign(math_ops.subtract(w, math_ops.multiply(
                    math_ops.multiply(w, _constant(self.weight_decay, w.dtype)), lr)))

    # ------------------------------------------------------------ applying ---
    def apply_gradients(self, grads_and_vars):
        """Applies ``zip(grads, vars)``; returns ``iterations``."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("No gradients provided for any variable: `apply_gradients` received an empty "
                             "list of (gradient, variable) pairs.")
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError("`apply_gradients` expects (gradient, variable) pairs, e.g. "
                                 f"`zip(grads, model.trainable_variables)`. Received an element: {pair!r}")
        grads, variables = zip(*pairs)
        self.apply(list(grads), list(variables))
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Updates ``trainable_variables`` with ``grads`` (one gradient or None
        per variable). Without variables, the optimizer must be built and
        ``grads`` follow the variables it was built with.

        Every update is an op (the optimizers' state ops, ``assign``), so a
        step traced in ``tf.function`` replays, and saves, as it runs eagerly."""
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `trainable_variables`, the optimizer must already "
                                 "be built on a list of variables. Call `optimizer.build(trainable_variables)` "
                                 "first.")
            if len(grads) != len(self._trainable_variables):
                raise ValueError(f"When passing `grads` without variables, there must be one gradient per "
                                 f"variable of the optimizer. Received {len(grads)} gradients, but the optimizer "
                                 f"is tracking {len(self._trainable_variables)} variables.")
            trainable_variables = self._trainable_variables
        else:
            trainable_variables = list(trainable_variables)
        if not grads and not trainable_variables:
            return
        grads = self._validate(grads, trainable_variables)

        if not self.built:
            with init_scope():   # slots are created once, even when the first step is being traced
                self.build(trainable_variables)
        self._restore_pending()
        grads = distribute_lib.aggregate_gradients(grads, trainable_variables)  # summed over workers

        # Variables marked overwrite_with_gradient take the gradient as their new value.
        kept = []
        for g, v in zip(grads, trainable_variables):
            if g is not None and getattr(v, "overwrite_with_gradient", False):
                v.assign(g)
            else:
                kept.append((g, v))
        missing = [v for g, v in kept if g is None]
        kept = [(g, v) for g, v in kept if g is not None]
        if not kept:
            if missing:
                raise ValueError("No gradients provided for any variable: "
                                 f"{[_var_path(v) for v in missing]}.")
            return
        if missing:
            warnings.warn(f"Gradients do not exist for variables {[_var_path(v) for v in missing]} when "
                          "minimizing the loss. If you're using `model.compile()`, did you forget to provide a "
                          "`loss` argument?", stacklevel=3)
        grads = [g for g, _ in kept]
        variables = [v for _, v in kept]
        if self.loss_scale_factor is not None:
            grads = [math_ops.divide(g, _constant(self.loss_scale_factor, g.dtype)) for g in grads]

        self._backend_apply_gradients(grads, variables)
        for variable in variables:
            constraint = getattr(variable, "constraint", None)
            if constraint is not None:
                variable.assign(constraint(variable))
        self._iterations.assign_add(1)

    def _validate(self, grads, variables):
        """Checks every (gradient, variable) pair; returns the gradients as
        tensors in their variable's dtype (None stays None)."""
        if len(grads) != len(variables):
            raise ValueError(f"Received {len(grads)} gradients for {len(variables)} variables; there must be "
                             "exactly one gradient (or None) per variable.")
        self._check_variables(variables, "the list of variables")
        if self.built:
            unknown = [v for v in variables if self._var_key(v) not in self._variable_index]
            if unknown:
                raise ValueError(
                    f"Unknown variable: {_describe(unknown[0])}. This optimizer can only be called for the "
                    "variables it was originally built with. When working with a new set of variables, you "
                    "should recreate a new optimizer instance.")
        tensors = []
        for g, v in zip(grads, variables):
            if g is None:
                tensors.append(None)
                continue
            if isinstance(g, (Tensor, Variable, np.ndarray, np.generic)):
                t = convert_to_tensor(g)
                if not t.dtype.is_floating:
                    raise ValueError(f"The gradient for variable {_describe(v)} has dtype {t.dtype.name}; "
                                     "gradients must be floating point.")
            else:
                try:
                    t = convert_to_tensor(np.asarray(g, dtype=v.dtype.as_numpy_dtype))
                except (TypeError, ValueError) as err:
                    raise ValueError(f"Cannot use {g!r} as the gradient of variable {_describe(v)}: {err}") \
                        from None
            if tuple(t.shape) != _shape(v):
                raise ValueError(f"The gradient for variable {_describe(v)} has shape {t.shape}, "
                                 "which does not match the variable's shape.")
            tensors.append(t if t.dtype == v.dtype else math_ops.cast(t, v.dtype))
        return tensors

    def _backend_apply_gradients(self, grads, variables):
        learning_rate = self._get_current_learning_rate()
        steps = self.gradient_accumulation_steps
        if steps:
            # Every ``steps`` calls, update with the mean of the accumulated gradients and reset the
            # accumulators; in between, accumulate. Both are gated state ops: one graph, either branch.
            accumulators = [self._accumulated_gradients[self._get_variable_index(v)] for v in variables]
            is_update_step = math_ops.equal(
                math_ops.floormod(math_ops.add(self._iterations, _constant(1, "int64")), _constant(steps, "int64")),
                _constant(0, "int64"))
            averaged = [math_ops.divide(math_ops.add(g, acc), _constant(steps, g.dtype))
                        for g, acc in zip(grads, accumulators)]
            with self._gated(is_update_step):
                self._update(self._clip_gradients(averaged), variables, learning_rate)
                for acc in self._accumulated_gradients:
                    if acc is not None:
                        self._state_update("AssignVariable", [acc], [array_ops.zeros_like(acc)])
            with self._gated(math_ops.logical_not(is_update_step)):
                for g, acc in zip(grads, accumulators):
                    self._state_update("AccumulateGradient", [acc], [g])
        else:
            self._update(self._clip_gradients(grads), variables, learning_rate)
        if self.use_ema:
            self._update_model_variables_moving_average(self._trainable_variables)
            frequency = self.ema_overwrite_frequency
            if frequency:
                overwrite = math_ops.equal(
                    math_ops.floormod(math_ops.add(self._iterations, _constant(1, "int64")),
                                      _constant(frequency, "int64")), _constant(0, "int64"))
                with self._gated(overwrite):
                    self._overwrite_model_variables_with_average_value(self._trainable_variables)

    def _update(self, grads, variables, learning_rate):
        if not self._updates_with_state_ops():
            if self._gate is not None and not self._eager_condition(self._gate):
                return
            self._apply_weight_decay(variables, learning_rate)
        self._backend_update_step(grads, variables, learning_rate)

    def _eager_condition(self, condition):
        """A gate's value, for a user's update rule (ops and ``assign``) that a state op cannot gate."""
        try:
            return bool(condition)
        except TypeError:   # a symbolic tensor: the step is being traced
            raise ValueError(
                f"{type(self).__name__}: `gradient_accumulation_steps` inside tf.function needs the optimizer's "
                "update as a state op, and this optimizer's `update_step` is written with ops and assign. Run "
                "the step eagerly, or accumulate the gradients yourself.") from None

    def _backend_update_step(self, grads, variables, learning_rate):
        for g, v in zip(grads, variables):
            self.update_step(g, v, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        """The update rule for one variable; every optimizer implements it."""
        raise NotImplementedError(f"{type(self).__name__} must implement `update_step(gradient, variable, "
                                  "learning_rate)`.")

    # ---------------------------------------------------------- state ops ---
    def _updates_with_state_ops(self):
        """Whether ``update_step`` is a built-in rule run by a state op (``_update_op``), which applies
        the weight decay itself and honours a gate; a user's rule written with ops and ``assign`` is not."""
        return getattr(type(self).update_step, "_runs_state_op", False)

    @contextlib.contextmanager
    def _gated(self, condition):
        """State updates issued inside run only when the boolean scalar ``condition`` holds."""
        previous, self._gate = self._gate, condition
        try:
            yield
        finally:
            self._gate = previous

    def _state_update(self, op_type, variables, inputs, **attrs):
        """Runs the state op ``op_type`` on ``variables`` (under the current gate, if any)."""
        if self._gate is not None:
            inputs = list(inputs) + [self._gate]
            attrs["gated"] = True
        execute_state(op_type, variables, [convert_to_tensor(t) for t in inputs], attrs)

    def _update_op(self, op_type, variable, gradient, slots, learning_rate, *inputs, **hyper):
        """A built-in update rule: ``op_type`` on ``[variable, *slots]`` with the gradient, the learning
        rate, ``inputs`` and the hyper-parameters ``hyper``, the decoupled weight decay folded in."""
        decay = self.weight_decay is not None and self._use_weight_decay(variable)
        self._state_update(op_type, [_owner(variable), *slots], [gradient, learning_rate, *inputs],
                           decay=decay, weight_decay=float(self.weight_decay or 0.0), **hyper)

    # ------------------------------------------------------------ clipping ---
    def _clip_gradients(self, grads):
        if self.clipnorm is not None and self.clipnorm > 0:
            return [math_ops.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            return math_ops.clip_by_global_norm(grads, self.global_clipnorm)[0]
        if self.clipvalue is not None and self.clipvalue > 0:
            return [math_ops.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    # ----------------------------------------------------------------- EMA ---
    def _update_model_variables_moving_average(self, variables):
        for variable, average in zip(variables, self._model_variables_moving_average):
            if average is not None:
                self._state_update("ApplyMovingAverage", [average], [variable, self._iterations],
                                   momentum=float(self.ema_momentum))

    def _overwrite_model_variables_with_average_value(self, variables):
        for variable, average in zip(variables, self._model_variables_moving_average):
            if average is not None:
                self._state_update("AssignVariable", [_owner(variable)], [average])

    def finalize_variable_values(self, var_list):
        """At the end of training: with ``use_ema``, set the variables to their moving averages."""
        if self.use_ema:
            self._overwrite_model_variables_with_average_value(var_list)

    # ------------------------------------------------------ conveniences ---
    def minimize(self, loss, var_list, tape=None):
        """Computes gradients of ``loss`` with respect to ``var_list`` and applies them.

        ``loss`` is a zero-argument callable (evaluated under a new tape), or
        a Tensor together with the ``tape`` that recorded it. ``var_list``
        may be a list of variables or a callable returning one.
        """
        from tapeflow.backprop import GradientTape
        if not callable(loss) and tape is None:
            raise ValueError("`tape` is required when a `Tensor` loss is passed. "
                             f"Received: loss={loss!r}, tape={tape!r}.")
        if callable(loss):
            tape = tape if tape is not None else GradientTape()
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list, output_gradients=self._scaled_loss_seed(loss))
        return self.apply_gradients(zip(grads, var_list))

    def _scaled_loss_seed(self, loss):
        """The cotangent that makes ``tape.gradient(loss)`` the gradient of ``scale_loss(loss)``, which
        ``apply`` divides back: scaling is a multiplication by a constant, so its derivative is the
        scaled one. Seeding the backward pass (rather than scaling under the tape) also serves a
        Tensor loss whose tape the caller has left or is still recording on. None without a factor."""
        if self.loss_scale_factor is None:
            return None
        return self.scale_loss(array_ops.ones_like(loss))

    def scale_loss(self, loss):
        """Multiplies ``loss`` by ``loss_scale_factor`` (the gradients are divided back in ``apply``).

        ``fit`` and ``minimize`` do it themselves; a custom loop computes the gradients of
        ``optimizer.scale_loss(loss)`` under its tape, as in Keras.
        """
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    def assign(self, variable, value):
        variable.assign(value)

    def assign_add(self, variable, value):
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        variable.assign_sub(value)

    # -------------------------------------------------------------- saving ---
    def save_own_variables(self, store):
        """Writes ``variables`` into ``store`` as ``store["0"] ... store[str(n-1)]``."""
        for i, variable in enumerate(self.variables):
            store[str(i)] = variable.numpy()

    def load_own_variables(self, store):
        """Restores ``variables`` from ``store`` (the ``save_own_variables`` layout).

        On an optimizer not built yet, ``iteration`` and ``learning_rate``
        are restored at once and the slot values when ``build`` creates the
        slots. A count mismatch warns and keeps the current state, as Keras
        does; a shape mismatch raises before anything is written.
        """
        keys = list(store.keys())
        expected = [str(i) for i in range(len(keys))]
        if sorted(keys, key=str) != sorted(expected, key=str):
            raise ValueError(f"Optimizer '{self.name}': the saved variables must be keyed '0'..'{len(keys) - 1}'. "
                             f"Received keys: {sorted(keys)}")
        values = [np.asarray(store[k]) for k in expected]
        own = self._variables
        if not self.built and len(values) > len(own):
            self._assign_all(own, values[:len(own)])
            self._pending_values = (len(own), values[len(own):])
            return
        if len(values) != len(own):
            warnings.warn(
                f"Skipping variable loading for optimizer '{self.name}', because it has {len(own)} variables "
                f"whereas the saved optimizer has {len(values)} variables.", stacklevel=2)
            return
        self._assign_all(own, values)

    def _assign_all(self, variables, values):
        problems = [f"{v.path}: expected shape {TensorShape(_shape(v))}, saved value has shape "
                    f"{TensorShape(val.shape)}"
                    for v, val in zip(variables, values) if val.shape != _shape(v)]
        if problems:
            raise ValueError(f"Cannot load the state of optimizer '{self.name}': " + "; ".join(problems))
        with init_scope():   # values from a file, even when the optimizer is built while a step is traced
            for v, val in zip(variables, values):
                v.assign(val.astype(v.dtype._np, copy=False))

    def _restore_pending(self):
        """Assigns slot values loaded before the optimizer was built (see ``load_own_variables``)."""
        if self._pending_values is None or not self.built:
            return
        base, values = self._pending_values
        self._pending_values = None
        slots = self._variables[base:]
        if len(slots) != len(values):
            warnings.warn(
                f"Skipping variable loading for optimizer '{self.name}', because it has {len(self._variables)} "
                f"variables whereas the saved optimizer has {base + len(values)} variables.", stacklevel=3)
            return
        self._assign_all(slots, values)

    # -------------------------------------------------------------- config ---
    def get_config(self):
        lr = self._learning_rate
        if isinstance(lr, lr_schedules.LearningRateSchedule):
            learning_rate = lr_schedules.serialize(lr)
        elif isinstance(lr, Variable):
            learning_rate = float(_as_array(lr))
        else:
            learning_rate = lr
        return {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = lr_schedules.deserialize(config["learning_rate"],
                                                               custom_objects=custom_objects)
        return cls(**config)
