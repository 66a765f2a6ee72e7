"""Trains the same small models with model.fit and with a GradientTape loop under strategy.run.

``python train_equivalence.py OUT --reference``: one process, no strategy, over the global batches.
``mpiexec -n N python train_equivalence.py OUT``: N workers under MultiWorkerMirroredStrategy.
Each worker writes ``OUT/rank<r>.npz`` (weights, logs, evaluation, predictions); worker 0 alone should
write the checkpoint files it is asked to (they are named after the worker that wrote them).
"""
import contextlib
import os
import sys

import numpy as np

import tapeflow as tf

GLOBAL_BATCH = 10
SAMPLES = 33          # 3 full global batches and a last one of 3 rows (uneven on 2 and on 4 workers)


def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(SAMPLES, 6)).astype(np.float32)
    y = rng.integers(0, 3, size=SAMPLES)
    return x, y


def mlp():
    return tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(8, activation="relu"),
                                tf.keras.layers.Dense(3)])


def run_fit(scope, out, rank, results):
    x, y = data()
    tf.keras.utils.set_random_seed(1)
    with scope():
        model = mlp()
        model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["sparse_categorical_accuracy"])
    checkpoint = tf.keras.callbacks.ModelCheckpoint(os.path.join(out, f"written-by-rank{rank}.weights.h5"),
                                                    save_weights_only=True)
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=2, shuffle=True, verbose=1,
                        validation_data=(x[:15], y[:15]), callbacks=[checkpoint])
    for key, values in history.history.items():
        results["fit_history_" + key] = np.asarray(values)
    for i, w in enumerate(model.weights):
        results[f"fit_weight_{i}"] = w.numpy()
    results["evaluate"] = np.asarray(model.evaluate(x, y, batch_size=7, verbose=0))
    results["predict"] = model.predict(x, batch_size=8, verbose=0)

    tf.keras.utils.set_random_seed(3)
    with scope():
        model = mlp()
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=True)    # a traced, compiled step: collectives and batch shares are ops
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    history = model.fit(dataset, epochs=2, verbose=0)
    results["dataset_fit_loss"] = np.asarray(history.history["loss"])
    for i, w in enumerate(model.weights):
        results[f"dataset_fit_weight_{i}"] = w.numpy()


def run_batchnorm(scope, results):
    """BatchNorm normalizes each worker's shard by its own statistics (as TensorFlow's does), so only
    the agreement of the workers is checked: its moving statistics are averaged at every epoch end."""
    x, y = data()
    tf.keras.utils.set_random_seed(4)
    with scope():
        model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(8),
                                     tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(3)])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, verbose=0)
    for i, w in enumerate(model.weights):
        results[f"bn_weight_{i}"] = w.numpy()


def check_collectives(strategy, results):
    backend = strategy.extended.backend
    rank, size = backend.rank, backend.size
    results["allgather"] = backend.allgather(np.array([10 * rank + 1, rank], np.int64))
    results["reduce_scatter"] = backend.reduce_scatter(np.arange(3 * size, dtype=np.float64) * (rank + 1))
    results["broadcast"] = backend.broadcast(np.full(3, rank, np.float32), root=size - 1)
    results["hvd_allreduce_mean"] = tf.distribute.allreduce(tf.constant([rank + 1.0, 2.0])).numpy()
    results["hvd_allgather"] = tf.distribute.allgather(np.arange(rank + 1, dtype=np.int32)).numpy()
    variable = tf.Variable([float(rank), 1.0 + rank])          # created outside any scope: differs per worker
    tf.distribute.broadcast_variables([variable], root_rank=0)
    results["broadcast_variables"] = variable.numpy()
    results["strategy_gather"] = strategy.gather(tf.constant(np.full((rank + 1, 2), rank, np.float32)), 0).numpy()
    mean_rank = strategy.run(lambda: tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.MEAN, tf.constant(float(rank))))
    results["replica_all_reduce_mean"] = mean_rank.numpy()
    values = tf.constant(np.arange(rank + 1, dtype=np.float32) + 10 * rank)
    results["reduce_mean_axis0"] = strategy.reduce(tf.distribute.ReduceOp.MEAN, values, axis=0).numpy()
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver(task_type="worker", task_id=rank)
    results["strategy_from_resolver"] = np.asarray(
        tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver).num_replicas_in_sync)
    tf.distribute.barrier()


def run_custom_loop(strategy, results, make_optimizer, tag, traced=False):
    x, y = data()
    tf.keras.utils.set_random_seed(2)
    scope = strategy.scope if strategy is not None else contextlib.nullcontext
    with scope():
        model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(5, activation="tanh"),
                                     tf.keras.layers.Dense(3)])
        optimizer = make_optimizer()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)

    def step(inputs, global_batch_size):
        bx, by = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(by, model(bx, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    if strategy is not None:
        def distributed_step(batch, rows):     # TensorFlow's tutorial shape: run and reduce in one step
            per_replica = strategy.run(step, args=(batch, rows))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
    else:
        def distributed_step(batch, rows):
            return step(batch, rows)
    if traced:
        distributed_step = tf.function(distributed_step)

    losses = []
    for epoch in range(2):
        batches = strategy.experimental_distribute_dataset(dataset) if strategy is not None else dataset
        for global_batch, batch in zip(dataset, batches):
            rows = int(global_batch[0].shape[0])   # the last global batch is short
            losses.append(float(distributed_step(batch, tf.constant(rows, tf.float32))))
    results[f"{tag}_losses"] = np.asarray(losses)
    for i, w in enumerate(model.weights):
        results[f"{tag}_weight_{i}"] = w.numpy()


def main(out, reference):
    results = {}
    if reference:
        strategy, rank = None, 0
        scope = contextlib.nullcontext
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        rank = strategy.cluster_resolver.task_id
        scope = strategy.scope
        results["num_replicas"] = np.asarray(strategy.num_replicas_in_sync)
    run_fit(scope, out, rank, results)
    run_custom_loop(strategy, results, lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9), "loop_sgd")
    run_custom_loop(strategy, results, lambda: tf.keras.optimizers.Adam(0.02), "loop_adam")
    run_custom_loop(strategy, results, lambda: tf.keras.optimizers.Adam(0.02), "traced_loop_adam", traced=True)
    if strategy is not None:
        run_batchnorm(scope, results)
        check_collectives(strategy, results)
    np.savez(os.path.join(out, f"rank{rank}.npz" if not reference else "reference.npz"), **results)


if __name__ == "__main__":
    main(sys.argv[1], "--reference" in sys.argv[2:])
