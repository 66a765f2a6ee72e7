"""A custom training loop over a tf.data pipeline, with a tf.function step, checkpoints and TensorBoard.

Run it, kill it (Ctrl-C, or kill -9) at any point, run it again: it resumes from the last
checkpoint of `CheckpointManager` (model, optimizer and epoch counter) and ends with the same
weights as an uninterrupted run. `tensorboard --logdir <workdir>/logs` shows the curves.

Data: UCI ML hand-written digits (Alpaydin & Kaynak, 1998; CC BY 4.0), in examples/data/digits.npz.

    python examples/tf_data_custom_loop.py [--workdir DIR] [--epochs N]
"""
import argparse
import os
import tempfile

import tapeflow as tf
from custom_training_loop import load_digits

BATCH_SIZE = 32


def make_datasets(seed):
    (x_train, y_train), (x_test, y_test) = load_digits(seed)
    examples = tf.data.Dataset.from_tensor_slices((x_train, y_train))

    def epoch_batches(epoch):
        # Each epoch's order depends only on its number, so a resumed run sees the batches an
        # uninterrupted one would have seen.
        return (examples.shuffle(len(x_train), seed=seed + epoch, reshuffle_each_iteration=False)
                .batch(BATCH_SIZE)
                .prefetch(tf.data.AUTOTUNE))
    test = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)
    return epoch_batches, test


def make_model():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(64,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def train(workdir, epochs=12, seed=0, log=print):
    """Trains (or resumes) in ``workdir``; returns the model and its test accuracy."""
    tf.keras.utils.set_random_seed(seed)
    epoch_batches, test_ds = make_datasets(seed)
    model = make_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    epoch = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(workdir, "ckpts"), max_to_keep=3)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
        log(f"resumed from {manager.latest_checkpoint} at epoch {int(epoch.numpy())}")
    writer = tf.summary.create_file_writer(os.path.join(workdir, "logs"))

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss

    def accuracy(dataset):
        metric = tf.keras.metrics.SparseCategoricalAccuracy()
        for x, y in dataset:
            metric.update_state(y, model(x, training=False))
        return float(metric.result())

    while int(epoch.numpy()) < epochs:
        losses = [float(train_step(x, y)) for x, y in epoch_batches(int(epoch.numpy()))]
        epoch.assign_add(1)
        with writer.as_default(step=int(epoch.numpy())):
            tf.summary.scalar("loss", sum(losses) / len(losses))
            tf.summary.scalar("test_accuracy", accuracy(test_ds))
        writer.flush()
        path = manager.save(checkpoint_number=int(epoch.numpy()))
        log(f"epoch {int(epoch.numpy())}: loss {sum(losses) / len(losses):.4f}  saved {os.path.basename(path)}")
    return model, accuracy(test_ds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "tapeflow_tf_data_loop"))
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    _, test_accuracy = train(args.workdir, args.epochs)
    print(f"test accuracy: {test_accuracy:.3f}  (checkpoints and logs in {args.workdir})")


if __name__ == "__main__":
    main()
