"""A multi-worker fit with BackupAndRestore that fails, and its relaunch.

``mpiexec -n 2 python resume_after_failure.py OUT raise``: worker 1 raises in epoch 2
(epochs 0 and 1 are backed up); the whole job must stop at once with a message.
``... OUT kill``: worker 1 dies without a word (SIGKILL) at the same point; the job must stop too.
``... OUT resume``: the relaunched job resumes at epoch 2 and finishes; each worker writes
``OUT/resumed-rank<r>.npz`` (epochs it ran, final weights).
``python resume_after_failure.py OUT reference``: one process, no strategy, all epochs uninterrupted.
"""
import contextlib
import os
import signal
import sys

import numpy as np

import tapeflow as tf

EPOCHS = 4


class FailOnWorker1(tf.keras.callbacks.Callback):
    def __init__(self, rank, how):
        super().__init__()
        self.rank, self.how = rank, how

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        # After batch 0 of epoch 2 every worker is past epoch 1's end, so its backup is on disk.
        if self.epoch == 2 and batch == 1 and self.rank == 1:
            if self.how == "raise":
                raise RuntimeError("worker 1 fails on purpose")
            os.kill(os.getpid(), signal.SIGKILL)


class RecordEpochs(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)


def main(out, mode):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(24, 4)).astype(np.float32)
    y = rng.normal(size=(24, 2)).astype(np.float32)
    strategy = None if mode == "reference" else tf.distribute.MultiWorkerMirroredStrategy()
    rank = 0 if strategy is None else strategy.cluster_resolver.task_id
    tf.keras.utils.set_random_seed(5)
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(6, activation="tanh"),
                                     tf.keras.layers.Dense(2)])
        model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    record = RecordEpochs()
    callbacks = [record]
    if strategy is not None:
        callbacks.insert(0, tf.keras.callbacks.BackupAndRestore(os.path.join(out, "backup")))
    if mode in ("raise", "kill"):
        callbacks.append(FailOnWorker1(rank, mode))
    model.fit(x, y, batch_size=8, epochs=EPOCHS, shuffle=False, verbose=0, callbacks=callbacks)
    np.savez(os.path.join(out, f"{mode}-rank{rank}.npz"), epochs=np.asarray(record.epochs),
             **{f"weight_{i}": w.numpy() for i, w in enumerate(model.weights)})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
