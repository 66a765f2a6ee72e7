"""TensorBoard: writes logs (scalars, graph, weight histograms and images) for TensorBoard."""
import os
import time
import warnings

import numpy as np

from ..serialization_lib import keras_export
from .callback import Callback


@keras_export("keras.callbacks.TensorBoard")
class TensorBoard(Callback):
    """Writes TensorBoard logs: ``log_dir/train`` and ``log_dir/validation`` event files.

    Every epoch: ``epoch_<metric>`` (and ``epoch_learning_rate``) at step ``epoch`` in ``train``, the
    ``val_`` metrics as ``epoch_<metric>`` in ``validation``, and after each evaluation
    ``evaluation_<metric>_vs_iterations`` at step ``optimizer.iterations`` in ``validation``. With an
    integer ``update_freq`` (or ``"batch"`` = 1), ``batch_<metric>`` every that many batches at the
    global batch number; ``tf.summary`` calls inside the model then go to ``train`` at that step too.
    ``histogram_freq``: weight histograms ``<weight name>/histogram`` every that many epochs (and
    ``<weight name>/image`` with ``write_images``). ``write_graph``: the model's JSON config as a
    ``keras`` summary for Sequential and functional models. Profiling and embeddings are not available.
    Needs the ``tensorboard`` package (``pip install tapeflow[tensorboard]``).
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        if profile_batch not in (0, None, "0", (0, 0)):
            raise ValueError(f"Profiling is not available in tapeflow. Received: profile_batch={profile_batch} "
                             "(must be 0)")
        if embeddings_freq:
            raise ValueError("Embedding visualisation (the TensorBoard projector) is not available in tapeflow. "
                             f"Received: embeddings_freq={embeddings_freq} (must be 0)")
        update_freq = 1 if update_freq == "batch" else update_freq
        if update_freq != "epoch" and (isinstance(update_freq, bool) or not isinstance(update_freq, int)
                                       or update_freq <= 0):
            raise ValueError(f"`update_freq` must be 'epoch', 'batch' or a positive integer. Received: "
                             f"update_freq={update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers = {}
        self._contexts = []
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._train_step = None
        self._batch_start_time = 0.0
        self._epoch_start_time = 0.0
        self._previous_epoch_iterations = 0

    @property
    def summary(self):
        from tapeflow import summary
        return summary

    def set_model(self, model):
        super().set_model(model)
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        if self.write_graph:
            self._write_keras_model_summary()

    def _writer(self, which):
        if which not in self._writers:
            self._writers[which] = self.summary.create_file_writer(
                self._train_dir if which == "train" else self._val_dir)
        return self._writers[which]

    def _write_keras_model_summary(self):
        if type(self.model).__name__ not in ("Functional", "Sequential"):
            return
        writer = self._writer("train")  # first: without tensorboard it raises the ImportError saying what to install
        from tensorboard.compat.proto import summary_pb2
        try:
            config = self.model.to_json()
        except Exception as e:  # noqa: BLE001 - a model that cannot be described still trains (Keras warns too)
            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {e}", stacklevel=3)
            return
        metadata = summary_pb2.SummaryMetadata()
        metadata.plugin_data.plugin_name = "graph_keras_model"
        metadata.plugin_data.content = b"1"
        with writer.as_default():
            self.summary.write("keras", config, step=0, metadata=metadata)

    # -- the default writer for batch-level summaries ----------------------------------------
    def _push_writer(self, writer, counter):
        if self.update_freq == "epoch":
            return
        step, freq = counter, self.update_freq
        contexts = (writer.as_default(step), self.summary.record_if(lambda: int(step.numpy()) % freq == 0))
        for context in contexts:
            context.__enter__()
        self._contexts.append(contexts)

    def _pop_writer(self):
        if self.update_freq == "epoch" or not self._contexts:
            return
        for context in reversed(self._contexts.pop()):
            context.__exit__(None, None, None)

    def _step_variable(self, value):
        from tapeflow.framework.variables import Variable
        return Variable(np.int64(value), trainable=False, name="tensorboard_step")

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._train_step = self._step_variable(0)
        self._push_writer(self._writer("train"), self._train_step)

    def on_train_end(self, logs=None):
        self._pop_writer()
        for writer in self._writers.values():
            writer.close()

    def on_test_begin(self, logs=None):
        self._test_step = self._step_variable(self._global_test_batch)
        self._push_writer(self._writer("val"), self._test_step)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations"):
            with self._writer("val").as_default(), self.summary.record_if(True):
                for name, value in (logs or {}).items():
                    self.summary.scalar(f"evaluation_{name}_vs_iterations", value, step=optimizer.iterations)
        self._pop_writer()

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if getattr(self, "_test_step", None) is not None:
            self._test_step.assign(self._global_test_batch)

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self._train_step is not None:
            self._train_step.assign(self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch":
            return
        if self.write_steps_per_second:
            elapsed = time.time() - self._batch_start_time
            self.summary.scalar("batch_steps_per_second", 1.0 / elapsed if elapsed > 0 else 0.0,
                                step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                self.summary.scalar("batch_" + name, value, step=self._global_train_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._previous_epoch_iterations = int(np.asarray(self.model.optimizer.iterations))
            self._epoch_start_time = time.time()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch_metrics(self, epoch, logs):
        if not logs:
            return
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "learning_rate"):
            train_logs["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        if self.write_steps_per_second:
            elapsed = time.time() - self._epoch_start_time
            steps = int(np.asarray(self.model.optimizer.iterations)) - self._previous_epoch_iterations
            train_logs["steps_per_second"] = steps / elapsed if elapsed > 0 else 0.0
        with self.summary.record_if(True):
            for which, entries in (("train", train_logs), ("val", val_logs)):
                if entries:
                    with self._writer(which).as_default():
                        for name, value in entries.items():
                            self.summary.scalar("epoch_" + name, value, step=epoch)

    def _log_weights(self, epoch):
        writer = self._writer("train")
        with writer.as_default(), self.summary.record_if(True):
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = weight.name.replace(":", "_")
                    self.summary.histogram(f"{name}/histogram", weight, step=epoch)
                    if self.write_images:
                        self._log_weight_as_image(weight, f"{name}/image", epoch)
        writer.flush()

    def _log_weight_as_image(self, weight, name, epoch):
        image = np.squeeze(np.asarray(weight))
        if image.ndim == 1:  # a bias: one row
            image = image.reshape(1, 1, image.shape[0], 1)
        elif image.ndim == 2:  # a dense kernel, wider than tall
            if image.shape[0] > image.shape[1]:
                image = image.T
            image = image.reshape(1, image.shape[0], image.shape[1], 1)
        elif image.ndim == 3:  # a conv kernel: one image per output channel (channels_last)
            image = np.transpose(image, (2, 0, 1))[..., np.newaxis]
        if image.ndim == 4 and image.shape[-1] in (1, 3, 4):
            self.summary.image(name, image, step=epoch)
