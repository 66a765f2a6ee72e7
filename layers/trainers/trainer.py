"""Trainer: compile / fit / evaluate / predict and the per-batch steps, as in Keras 3.

``train_step(data)`` is the unit a user overrides to customize fit: the
default runs the model under a GradientTape, computes the compiled loss plus
``model.losses``, applies the gradients with the optimizer and updates the
metrics; it returns the metric results. The epoch loss is the mean of the
batch losses weighted by batch size (the loss tracker is a Mean metric).
"""
import inspect
import warnings

import numpy as np

from tapeflow.backprop import GradientTape
from tapeflow.framework.tensor import Tensor, host_array
from tapeflow.ops import array_ops, math_ops

from ..utils import tree
from ..callbacks import CallbackList
from . import distributed_training
from .compile_utils import CompileLoss, CompileMetrics
from .step_functions import reset_step_functions, run_step
from .data_adapter import (ArrayDataAdapter, check_data_cardinality, get_data_adapter, is_array_like,
                           pack_x_y_sample_weight, structure_to_arrays, train_validation_split,
                           unpack_x_y_sample_weight)
from ..keras_tensor import KerasTensor
from ..metrics import Mean
from ..serialization_lib import serialize_keras_object


def _python_value(value):
    """A scalar tensor as a Python float, as Keras does; a symbolic one (inside a traced step) stays a tensor:
    its value is known only when the graph runs."""
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        try:
            value = value.numpy()
        except (TypeError, NotImplementedError):
            return value
    if isinstance(value, np.ndarray):
        return float(value) if value.ndim == 0 else value
    if isinstance(value, np.generic):
        return value.item()
    return value


def pythonify_logs(logs):
    """Sorted keys, nested dicts flattened, scalar tensors as Python floats."""
    flat = {}
    for key, value in (logs or {}).items():
        if isinstance(value, dict):
            flat.update(pythonify_logs(value))
        else:
            flat[key] = _python_value(value)
    return {k: flat[k] for k in sorted(flat)}



def call_compute_loss(model, x, y, y_pred, sample_weight, training):
    """Calls ``model.compute_loss`` as Keras does: positionally, with ``training=`` only when the method names a
    ``training`` parameter (an override with the documented signature, or with ``**kwargs``, gets none)."""
    if "training" in inspect.signature(model.compute_loss).parameters:
        return model.compute_loss(x, y, y_pred, sample_weight, training=training)
    return model.compute_loss(x, y, y_pred, sample_weight)

class Trainer:
    """Mixed into Model: the compile/fit/evaluate/predict API."""

    def _init_trainer(self):
        d = self.__dict__
        d["compiled"] = False
        d["optimizer"] = None
        d["loss"] = None
        d["_compile_loss"] = None
        d["_compile_metrics"] = None
        d["_loss_tracker"] = None
        d["_compile_config"] = None
        d["stop_training"] = False
        d["history"] = None
        d["_run_eagerly"] = False
        d["steps_per_execution"] = 1
        d["jit_compile"] = False
        d["_distribute_strategy"] = distributed_training.creation_strategy()

    # -- compile ----------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        """Configures the model for training: optimizer, loss and metrics (strings or objects)."""
        from tapeflow import optimizers
        optimizer = optimizers.get(optimizer)
        output_names = self._output_names()
        compile_loss = None if loss is None else CompileLoss(loss, loss_weights, output_names=output_names)
        compile_metrics = None
        if metrics is not None or weighted_metrics is not None:
            compile_metrics = CompileMetrics(metrics, weighted_metrics, output_names=output_names)
        d = self.__dict__
        d["optimizer"] = optimizer
        d["loss"] = loss
        d["_compile_loss"] = compile_loss
        d["_compile_metrics"] = compile_metrics
        d["_loss_tracker"] = Mean(name="loss")
        if run_eagerly and jit_compile is True:
            warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be True. Disabling "
                          "`jit_compile`.", stacklevel=2)
        d["_run_eagerly"] = bool(run_eagerly)
        d["steps_per_execution"] = steps_per_execution
        # "auto": traced, not compiled (step_functions.py); Keras on TensorFlow resolves it to False as well
        d["jit_compile"] = jit_compile is True and not run_eagerly
        reset_step_functions(self)
        d["compiled"] = True
        d["_compile_config"] = {"optimizer": optimizer, "loss": loss, "loss_weights": loss_weights,
                                "metrics": metrics, "weighted_metrics": weighted_metrics,
                                "run_eagerly": bool(run_eagerly), "steps_per_execution": steps_per_execution,
                                "jit_compile": d["jit_compile"]}

    @property
    def run_eagerly(self):
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value):
        self.__dict__["_run_eagerly"] = bool(value)

    def _output_names(self):
        return None

    def get_compile_config(self):
        if not self.compiled or self._compile_config is None:
            return {}
        from tapeflow import optimizers
        config = serialize_keras_object(self._compile_config)
        if isinstance(self.optimizer, optimizers.Optimizer):
            config["optimizer"] = optimizers.serialize(self.optimizer)  # "module": "keras.optimizers", as Keras
        return config

    def compile_from_config(self, config):
        from tapeflow import optimizers
        config = dict(config)
        if isinstance(config.get("optimizer"), dict):
            config["optimizer"] = optimizers.deserialize(config["optimizer"])
        for key in ("loss", "metrics", "weighted_metrics"):
            if isinstance(config.get(key), dict) and "class_name" in config[key]:
                from ..serialization_lib import deserialize_keras_object
                config[key] = deserialize_keras_object(config[key])
        self.compile(**config)
        if self.built and hasattr(self.optimizer, "build"):
            self.optimizer.build(self.trainable_variables)

    def _assert_compile_called(self, method):
        if not self.compiled:
            raise RuntimeError(f"You must call `compile()` before using the model (`{method}()` was called on "
                               f"model '{self.name}', which is not compiled).")

    # -- metrics ----------------------------------------------------------
    @property
    def metrics(self):
        out = []
        if self.compiled:
            if self._loss_tracker is not None:
                out.append(self._loss_tracker)
            if self._compile_metrics is not None:
                out.append(self._compile_metrics)
            if self._compile_loss is not None:
                out.extend(m for m in self._compile_loss.metrics if m is not None)
        out.extend(self._metrics)
        for layer in self._flatten_layers(include_self=False):
            if not isinstance(layer, Trainer):
                out.extend(layer._metrics)
        return out

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self):
        logs = {}
        with distributed_training.global_metric_state(self):  # the figures of all workers
            for metric in self.metrics:
                result = metric.result()
                if isinstance(result, dict):
                    logs.update(result)
                else:
                    logs[metric.name] = result
        return pythonify_logs(logs)

    def _get_metrics_result_or_logs(self, logs):
        metric_logs = self.get_metrics_result()
        if isinstance(logs, dict) and set(logs) == set(metric_logs):
            return metric_logs
        return logs

    def _flatten_metrics_in_order(self, logs):
        names = []
        for metric in self.metrics:
            if isinstance(metric, CompileMetrics):
                names.extend(m.name for m in metric.metrics)
            else:
                names.append(metric.name)
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    # -- losses -------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus the model's own losses (regularizers, add_loss)."""
        total = None
        if self._compile_loss is not None:
            total = self._compile_loss(y, y_pred, sample_weight)
        for extra in self.losses:
            extra = extra if isinstance(extra, Tensor) else Tensor(np.asarray(extra, np.float32))
            if total is not None and host_array(extra).dtype != host_array(total).dtype:
                extra = math_ops.cast(extra, total.dtype)
            total = extra if total is None else math_ops.add(total, extra)
        if total is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return distributed_training.scale_loss(self, total)  # this worker's share of the global batch's loss

    @property
    def compiled_loss(self):
        """Keras 2 style access: ``self.compiled_loss(y, y_pred, sample_weight, regularization_losses=...)``."""
        model = self

        def compiled_loss(y, y_pred, sample_weight=None, regularization_losses=None):
            total = model._compile_loss(y, y_pred, sample_weight)
            for extra in regularization_losses or ():
                total = math_ops.add(total, extra)
            return total
        return compiled_loss

    @property
    def compiled_metrics(self):
        """Keras 2 style access: ``self.compiled_metrics.update_state(y, y_pred)``."""
        return self._compile_metrics

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    # -- steps --------------------------------------------------------------
    def train_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = call_compute_loss(self, x, y, y_pred, sample_weight, training=True)
            # As Keras: the logs get the loss, the gradients come from the scaled loss (loss_scale_factor),
            # and the optimizer's apply divides them back.
            scaled_loss = loss if self.optimizer is None else self.optimizer.scale_loss(loss)
        self._loss_tracker.update_state(distributed_training.unscale_loss(self, loss), sample_weight=_batch_size(x))
        variables = self.trainable_weights
        if variables:
            grads = tape.gradient(scaled_loss, variables)
            self.optimizer.apply_gradients(zip(grads, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = call_compute_loss(self, x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(distributed_training.unscale_loss(self, loss), sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    # -- loops ----------------------------------------------------------------
    @distributed_training.in_model_scope
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Trains for ``epochs`` epochs and returns the History."""
        self._assert_compile_called("fit")
        if validation_split and validation_data is None:
            if not is_array_like(x):
                raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays; pass "
                                 "`validation_data` instead.")
            if not 0 < validation_split < 1:
                raise ValueError(f"`validation_split` must be in (0, 1). Received: validation_split={validation_split}")
            x, y, sample_weight = (structure_to_arrays(x), structure_to_arrays(y),
                                   structure_to_arrays(sample_weight))
            check_data_cardinality((x, y, sample_weight))
            (x, y, sample_weight), validation_data = train_validation_split((x, y, sample_weight), validation_split)
        data = get_data_adapter(x, y, sample_weight, batch_size, shuffle, class_weight, steps_per_epoch)
        val_data = None
        if validation_data is not None:
            vx, vy, vsw = unpack_x_y_sample_weight(validation_data)
            val_data = get_data_adapter(vx, vy, vsw, validation_batch_size or batch_size, False, None,
                                        validation_steps)
        verbose = 1 if verbose == "auto" else int(verbose)
        self._check_before_training(data)
        if val_data is not None:
            self._check_before_training(val_data)
        data, val_data = distributed_training.shard(data), distributed_training.shard(val_data)
        callbacks = CallbackList(callbacks, add_history=True,
                                 add_progbar=verbose != 0 and distributed_training.prints(), model=self,
                                 verbose=verbose, epochs=epochs, steps=data.num_batches)
        self.stop_training = False
        self._initial_epoch = None
        callbacks.on_train_begin()
        if self._initial_epoch is not None:  # set by BackupAndRestore when it resumes a backup
            initial_epoch = self._initial_epoch
        training_logs = None
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for step, (bx, by, bsw) in enumerate(data):
                callbacks.on_train_batch_begin(step)
                logs = pythonify_logs(distributed_training.train_step(self, pack_x_y_sample_weight(bx, by, bsw)))
                callbacks.on_train_batch_end(step, logs)
                if self.stop_training:
                    break
            distributed_training.average_non_trainable(self)
            epoch_logs = dict(self._get_metrics_result_or_logs(logs))
            if val_data is not None and _should_validate(epoch, validation_freq):
                val_logs = self._run_evaluation(val_data, callbacks)
                epoch_logs.update({"val_" + k: v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        callbacks.on_train_end(logs=training_logs)
        return self.history

    def _run_evaluation(self, data, callbacks):
        self.reset_metrics()
        callbacks.on_test_begin()
        logs = {}
        for step, (bx, by, bsw) in enumerate(data):
            callbacks.on_test_batch_begin(step)
            logs = pythonify_logs(distributed_training.test_step(self, pack_x_y_sample_weight(bx, by, bsw)))
            callbacks.on_test_batch_end(step, logs)
        logs = self._get_metrics_result_or_logs(logs)
        callbacks.on_test_end(logs)
        return logs

    @distributed_training.in_model_scope
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, **kwargs):
        """The loss and metrics on the data: a float, a list ``[loss, *metrics]``, or a dict."""
        if kwargs:
            raise ValueError(f"Arguments not recognized: {kwargs}")
        self._assert_compile_called("evaluate")
        data = get_data_adapter(x, y, sample_weight, batch_size, False, None, steps)
        self._check_before_training(data)
        data = distributed_training.shard(data)
        verbose = 1 if verbose == "auto" else int(verbose)
        callbacks = CallbackList(callbacks, add_progbar=verbose != 0 and distributed_training.prints(),
                                 model=self, verbose=verbose, epochs=1,
                                 steps=data.num_batches)
        logs = self._run_evaluation(data, callbacks)
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    @distributed_training.in_model_scope
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs on ``x``, batch by batch, as numpy arrays."""
        data = distributed_training.shard(get_data_adapter(x, None, None, batch_size, False, None, steps))
        verbose = 1 if verbose == "auto" else int(verbose)
        callbacks = CallbackList(callbacks, add_progbar=verbose != 0 and distributed_training.prints(),
                                 model=self, verbose=verbose, epochs=1,
                                 steps=data.num_batches)
        callbacks.on_predict_begin()
        outputs = []
        for step, (bx, by, bsw) in enumerate(data):
            callbacks.on_predict_batch_begin(step)
            out = run_step(self, "predict", pack_x_y_sample_weight(bx, by, bsw))
            out = tree.map_structure(host_array, out)
            out = distributed_training.gather_batch(out)  # the rows of every worker
            outputs.append(out)
            callbacks.on_predict_batch_end(step, {"outputs": out})
        callbacks.on_predict_end()
        if not outputs:
            raise ValueError("Unexpected result of `predict_function` (empty batch_outputs). Please use "
                             "`Model.compile(..., run_eagerly=True)`, or `tf.config.run_functions_eagerly(True)` "
                             "for more information of where went wrong, or file a issue/bug to `tf.keras`.")
        flat = [tree.flatten(o) for o in outputs]
        merged = [np.concatenate([f[i] for f in flat], axis=0) for i in range(len(flat[0]))]
        first = outputs[0]
        if isinstance(first, np.ndarray):
            return merged[0]
        it = iter(merged)
        return tree.map_structure(lambda _: next(it), first)

    def _batch_arrays(self, x, y=None, sample_weight=None, class_weight=None):
        size = check_data_cardinality((structure_to_arrays(x), None, None))
        adapter = ArrayDataAdapter(x, y, sample_weight, batch_size=max(1, size), class_weight=class_weight)
        self._check_before_training(adapter)
        return next(iter(adapter)), adapter

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        self._assert_compile_called("train_on_batch")
        (bx, by, bsw), _ = self._batch_arrays(x, y, sample_weight, class_weight)
        self.reset_metrics()   # Keras reports this batch alone
        logs = pythonify_logs(run_step(self, "train_on_batch", (bx, by, bsw)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._assert_compile_called("test_on_batch")
        (bx, by, bsw), _ = self._batch_arrays(x, y, sample_weight)
        self.reset_metrics()   # Keras reports this batch alone
        logs = pythonify_logs(run_step(self, "test_on_batch", (bx, by, bsw)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        (bx, _, _), _ = self._batch_arrays(x)
        out = run_step(self, "predict_on_batch", (bx,))
        return tree.map_structure(host_array, out)

    # -- validation before any state changes ---------------------------------------
    def _check_before_training(self, data):
        """Errors about the data (shapes, label ranges) are raised before any weight changes.

        Sequential and functional models are checked symbolically. A subclassed
        model has no graph: it is run once on zeros (in inference mode), and
        only when a cross-entropy loss needs the number of classes.
        """
        if not isinstance(data, ArrayDataAdapter) or data.num_samples == 0:
            return
        if not getattr(self, "_has_symbolic_graph", False):
            losses = self._compile_loss._user_loss if self._compile_loss is not None else None
            entries = tree.flatten(losses) if isinstance(losses, (list, tuple, dict)) else [losses]
            if data.y is None or not any(_loss_kind(loss) for loss in entries):
                return
        spec = tree.map_structure(lambda a: KerasTensor((None,) + a.shape[1:], dtype=_dtype_name(a)), data.x)
        try:
            out = self._output_spec_for(spec)
        except NotImplementedError:
            return
        if data.y is None or self._compile_loss is None:
            return
        outputs = out if isinstance(out, (list, tuple)) else [out]
        ys = data.y if isinstance(data.y, (list, tuple)) else [data.y]
        if isinstance(data.y, dict):
            names = self._output_names() or []
            ys = [data.y.get(n) for n in names]
        losses = self._compile_loss._user_loss
        per_output = losses if isinstance(losses, (list, tuple)) and len(outputs) > 1 else [losses] * len(outputs)
        if isinstance(losses, dict):
            per_output = [losses.get(n) for n in (self._output_names() or [])]
        for y_arr, pred, loss in zip(ys, outputs, per_output):
            if y_arr is None or not isinstance(pred, KerasTensor):
                continue
            _check_targets(loss, y_arr, pred.shape)

    def _output_spec_for(self, input_spec):
        return self.compute_output_spec(input_spec)


def _dtype_name(a):
    return str(a.dtype)


def _loss_kind(loss):
    """'sparse', 'categorical' or None for a compile() loss entry."""
    from .. import losses as L
    name = None
    if isinstance(loss, str):
        name = loss
    elif isinstance(loss, L.LossFunctionWrapper):
        name = getattr(loss.fn, "__name__", None)
    elif callable(loss):
        name = getattr(loss, "__name__", None)
    if name in ("sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"):
        return "sparse"
    if name in ("categorical_crossentropy", "CategoricalCrossentropy"):
        return "categorical"
    return None


def _check_targets(loss, y, output_shape):
    kind = _loss_kind(loss)
    classes = output_shape[-1] if output_shape else None
    if kind == "sparse" and classes is not None:
        values = np.asarray(y)
        if values.ndim == len(output_shape) and values.shape[-1] == 1:
            values = values[..., 0]
        if values.shape[1:] != tuple(output_shape[1:-1]):
            raise ValueError(f"Arguments `target` and `output` must have the same shape up until the last "
                             f"dimension: target.shape={(None,) + values.shape[1:]}, output.shape={output_shape}")
        if values.size and (values.min() < 0 or values.max() >= classes):
            bad = values[(values < 0) | (values >= classes)].ravel()[0]
            raise ValueError(f"Received a label value of {bad} which is outside the valid range of [0, {classes}). "
                             f"The model has {classes} output classes, so sparse labels must be integers in "
                             f"0..{classes - 1}.")
    elif kind == "categorical":
        target = (None,) + tuple(np.shape(y)[1:])
        if len(target) != len(output_shape) or any(a is not None and b is not None and a != b
                                                   for a, b in zip(target, output_shape)):
            raise ValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                             f"target.shape={target}, output.shape={tuple(output_shape)}. For integer class labels "
                             "use loss='sparse_categorical_crossentropy'.")


def _batch_size(x):
    """The number of samples in ``x``: a number, or a tensor when a trace leaves the batch dimension unknown."""
    first = tree.flatten(x)[0]
    shape = getattr(first, "shape", None)
    if not shape:
        return 1
    return int(shape[0]) if shape[0] is not None else array_ops.shape(first)[0]


def _should_validate(epoch, validation_freq):
    epoch = epoch + 1
    if isinstance(validation_freq, int):
        if validation_freq < 1:
            raise ValueError(f"`validation_freq` can not be less than 1. Received: validation_freq={validation_freq}")
        return epoch % validation_freq == 0
    if isinstance(validation_freq, (list, tuple)):
        return epoch in validation_freq
    raise ValueError(f"Expected `validation_freq` to be a list or int. Received: validation_freq={validation_freq} "
                     f"of the type {type(validation_freq)}.")
