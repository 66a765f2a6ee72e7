"""The digits classifier trained data-parallel on several processes, TensorFlow's multi-worker way.

    mpiexec -n 2 .venv/bin/python examples/distributed_fit.py          # two workers on this machine
    mpiexec -n 8 -hosts node1,node2 python examples/distributed_fit.py  # eight workers on two machines
    srun -n 8 python examples/distributed_fit.py                        # under Slurm

(`.venv/bin/mpiexec` is the launcher of the `mpich` wheel that `make test` installs.) Every worker
runs this same script: the model is created inside the strategy's scope, so all workers start from
worker 0's weights; `batch_size` is the global batch, of which each worker trains on its share; the
gradients are summed over the workers every step; every worker logs the global loss and accuracy,
and only worker 0 prints progress bars and writes the checkpoint. Run with plain `python`, it is
one worker training on the whole batches (the same numbers, to float32 rounding).
Only the import differs from the TensorFlow version of this script.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tapeflow as tf  # noqa: E402
from keras_fit import build_model, load_digits  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main(epochs=10, global_batch_size=64, save_dir=os.path.join(HERE, "output")):
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    worker = strategy.cluster_resolver.task_id
    tf.keras.utils.set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = load_digits(0)
    with strategy.scope():
        model = build_model()
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
    checkpoint = tf.keras.callbacks.ModelCheckpoint(os.path.join(save_dir, "distributed_digits.weights.h5"),
                                                    save_weights_only=True)
    model.fit(x_train, y_train, batch_size=global_batch_size, epochs=epochs, validation_split=0.1,
              verbose=1, callbacks=[checkpoint])
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    if worker == 0:
        print(f"{strategy.num_replicas_in_sync} worker(s): test loss {loss:.4f}, test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--save-dir", default=os.path.join(HERE, "output"))
    arguments = parser.parse_args()
    main(epochs=arguments.epochs, save_dir=arguments.save_dir)
