"""tf.distribute in one process: the API's contract, the sharding arithmetic, TF_CONFIG checks, the
one-process backend, and that nothing of it (nor mpi4py) loads with ``import tapeflow``.
The multi-process behaviour is in test_distribute_mpi.py."""
import json
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.distribute import distribute_lib
from tapeflow.distribute.cluster_resolver import MPIClusterResolver
from tapeflow.distribute.collective_backend import LocalBackend
from tapeflow.distribute.input_lib import batch_rows, local_shard, shard_bounds
from tapeflow.distribute.strategy import allgather_concat


def test_import_tapeflow_loads_neither_mpi4py_nor_tf_distribute():
    code = ("import sys, numpy as np, tapeflow as tf\n"
            "assert 'mpi4py' not in sys.modules and 'tapeflow.distribute' not in sys.modules\n"
            "m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])\n"
            "m.compile('sgd', 'mse'); m.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)\n"
            "assert 'mpi4py' not in sys.modules\n"
            "assert tf.distribute.get_strategy().num_replicas_in_sync == 1\n"
            "assert 'mpi4py' not in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_shards_tile_the_global_batch_in_rank_order(size):
    for n in range(0, 23):
        bounds = [shard_bounds(n, r, size) for r in range(size)]
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(bounds[r][1] == bounds[r + 1][0] for r in range(size - 1))
        sizes = [b - a for a, b in bounds]
        assert sizes == [n // size + (1 if r < n % size else 0) for r in range(size)]


def test_local_shard_slices_every_component_alike():
    batch = (tf.constant(np.arange(10.0).reshape(5, 2)), {"y": np.arange(5)})
    first = local_shard(batch, 0, 2)
    second = local_shard(batch, 1, 2)
    np.testing.assert_array_equal(first[0].numpy(), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(second[1]["y"], [3, 4])
    with pytest.raises(ValueError, match="different numbers of rows"):
        batch_rows((np.ones((3, 1)), np.ones((4, 1))))


def test_default_strategy_and_scopes():
    assert not tf.distribute.has_strategy()
    default = tf.distribute.get_strategy()
    assert default.num_replicas_in_sync == 1 and tf.distribute.get_replica_context() is not None
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope() as entered:
        assert entered is strategy and tf.distribute.get_strategy() is strategy
        assert tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None
        variable = tf.Variable([1.0, 2.0])

        def replica_fn():
            context = tf.distribute.get_replica_context()
            return context.replica_id_in_sync_group, context.num_replicas_in_sync

        assert strategy.run(replica_fn) == (0, 1)
        with pytest.raises(ValueError, match="Mixing different"):
            with tf.distribute.MirroredStrategy().scope():
                pass
    assert distribute_lib.variable_strategy(variable) is strategy
    assert distribute_lib.variable_strategy(tf.Variable(1.0)) is None
    assert not tf.distribute.has_strategy() and tf.distribute.get_strategy() is default


def test_reduce_with_and_without_axis():
    strategy = tf.distribute.MirroredStrategy()
    values = tf.constant([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(strategy.reduce(tf.distribute.ReduceOp.SUM, values, axis=None).numpy(),
                               [[1, 2], [3, 6]])
    np.testing.assert_allclose(strategy.reduce("MEAN", values, axis=0).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(strategy.reduce(tf.distribute.ReduceOp.SUM, values, axis=1).numpy(), [3.0, 9.0])
    with pytest.raises(ValueError, match="reduce_op"):
        strategy.reduce("MAX", values, axis=None)


def test_compute_average_loss_divides_by_the_global_batch():
    per_example = tf.constant([1.0, 2.0, 3.0, 6.0])
    assert float(tf.nn.compute_average_loss(per_example, global_batch_size=8)) == pytest.approx(12 / 8)
    weighted = tf.nn.compute_average_loss(per_example, sample_weight=[1.0, 0.0, 2.0, 0.5], global_batch_size=4)
    assert float(weighted) == pytest.approx((1 + 6 + 3) / 4)
    assert float(tf.nn.compute_average_loss(per_example)) == pytest.approx(3.0)  # 4 rows x 1 replica
    assert float(tf.nn.scale_regularization_loss(tf.constant(5.0))) == 5.0
    with pytest.raises(ValueError, match="global_batch_size"):
        tf.nn.compute_average_loss(per_example, global_batch_size=0)
    with pytest.raises(TypeError, match="floating-point"):
        tf.nn.compute_average_loss(tf.constant([1, 2]))


def test_tf_config_is_checked_against_the_launched_workers(monkeypatch):
    cluster = {"worker": ["host1:2222", "host2:2222"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    resolver = MPIClusterResolver(rank=1, size=2)
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.cluster_spec().as_dict() == cluster and resolver.cluster_spec().num_tasks("worker") == 2
    with pytest.raises(ValueError, match=r"2 workers but this job has 1 MPI process: launch them with `mpiexec -n 2"):
        MPIClusterResolver(rank=0, size=1)
    with pytest.warns(UserWarning, match="the rank decides"):
        assert MPIClusterResolver(rank=0, size=2).task_id == 0
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:1"]},
                                                "task": {"type": "chief", "index": 0}}))
    assert MPIClusterResolver(rank=0, size=2).task_type == "chief"
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG environment variable is not valid JSON"):
        MPIClusterResolver(rank=0, size=1)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": "host1:2222"}}))
    with pytest.raises(ValueError, match="TF_CONFIG\\['cluster'\\]"):
        MPIClusterResolver(rank=0, size=1)


def test_local_backend_collectives():
    backend = LocalBackend()
    buffer = np.arange(6.0)
    assert backend.allreduce(buffer) is buffer and backend.broadcast(buffer) is buffer
    np.testing.assert_array_equal(backend.allgather(np.array([3, 4])), [[3, 4]])
    np.testing.assert_array_equal(backend.reduce_scatter(buffer), buffer)
    np.testing.assert_array_equal(allgather_concat(backend, np.ones((2, 3)), axis=1), np.ones((2, 3)))
    with pytest.raises(ValueError, match="single worker"):
        backend.broadcast(buffer, root=1)
    with pytest.raises(TypeError, match="not contiguous"):
        backend.allreduce(np.arange(6.0)[::2])
    with pytest.raises(ValueError, match="read-only"):
        read_only = np.ones(2)
        read_only.flags.writeable = False
        backend.allreduce(read_only)


def test_packed_allreduce_keeps_shapes_dtypes_and_none():
    class Doubling(LocalBackend):   # a stand-in for two workers holding the same values
        calls = 0

        def allreduce(self, buffer, op="sum"):
            Doubling.calls += 1
            buffer *= 2
            return buffer

    arrays = [np.ones((2, 3), np.float32), None, np.arange(4.0, dtype=np.float32), np.array([1.0, 2.0])]
    out = distribute_lib.allreduce_arrays(Doubling(), arrays)
    assert out[1] is None and Doubling.calls == 2      # one collective per dtype (float32, float64)
    for a, b in zip(out, arrays):
        if b is not None:
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a, 2 * b)
    np.testing.assert_array_equal(arrays[0], np.ones((2, 3)))   # the inputs are not written


def test_missing_mpi4py_says_what_to_install(monkeypatch):
    from tapeflow.distribute import mpi_backend
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"pip install tapeflow\[distributed\]"):
        mpi_backend.import_mpi()


def test_fit_under_a_one_replica_strategy_is_plain_fit():
    x = np.random.default_rng(0).normal(size=(20, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    weights = []
    for strategy in (None, tf.distribute.MirroredStrategy()):
        tf.keras.utils.set_random_seed(0)
        with strategy.scope() if strategy else tf.distribute.get_strategy().scope():
            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
            model.compile(tf.keras.optimizers.Adam(0.1), "mse", metrics=["mae"])
        history = model.fit(x, y, batch_size=6, epochs=2, verbose=0, shuffle=False)
        weights.append([w.numpy() for w in model.weights] + [np.asarray(history.history["loss"])])
    for a, b in zip(*weights):
        np.testing.assert_array_equal(a, b)


def test_distributed_dataset_on_one_replica_yields_whole_batches():
    strategy = tf.distribute.MirroredStrategy()
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(7.0)).batch(3)
    batches = [b.numpy() for b in strategy.experimental_distribute_dataset(dataset)]
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6]]

    def dataset_fn(context):
        assert (context.num_input_pipelines, context.input_pipeline_id) == (1, 0)
        return tf.data.Dataset.from_tensor_slices(np.arange(4.0)).batch(context.get_per_replica_batch_size(2))
    assert [b.numpy().tolist() for b in strategy.distribute_datasets_from_function(dataset_fn)] == [[0, 1], [2, 3]]


class _TwoWorkersInOne(LocalBackend):
    """Collectives of two workers that hold the same values (sums double), run in this one process."""
    size = 2

    def allreduce(self, buffer, op="sum"):
        buffer *= 2
        return buffer


def test_updating_a_variable_created_outside_the_scope_is_refused():
    strategy = tf.distribute.Strategy(_TwoWorkersInOne())
    outside = tf.Variable([1.0, 2.0], name="outside")
    with strategy.scope():
        inside = tf.Variable([1.0, 2.0])
        optimizer = tf.keras.optimizers.SGD(0.5)
        optimizer.apply_gradients([(tf.constant([1.0, 1.0]), inside)])
        np.testing.assert_allclose(inside.numpy(), [0.0, 1.0])       # the summed gradient, 2.0 each
        with pytest.raises(ValueError, match="Variable 'outside.*' was not created inside the scope"):
            tf.keras.optimizers.SGD(0.5).apply_gradients([(tf.constant([1.0, 1.0]), outside)])
    np.testing.assert_array_equal(outside.numpy(), [1.0, 2.0])


def test_reduce_inside_tf_function_runs_at_every_call_not_at_tracing():
    calls = []

    class Counting(_TwoWorkersInOne):
        def allreduce(self, buffer, op="sum"):
            calls.append(buffer.shape)
            return super().allreduce(buffer, op)

    strategy = tf.distribute.Strategy(Counting())

    @tf.function
    def step(x):
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, strategy.run(lambda: x * 2.0), axis=0)

    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(step(x).numpy(), [4.0, 6.0])   # (sum over "both workers") / (their 4 rows)
    assert len(calls) == 2                                     # values and row counts, at the call only
    np.testing.assert_allclose(step(x + 1.0).numpy(), [6.0, 8.0])
    assert len(calls) == 4
    with pytest.raises(NotImplementedError, match="gather inside a tf.function"):
        tf.function(lambda v: strategy.gather(v))(x)


def test_tf_config_cluster_resolver_reads_the_task(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "b:1", "c:1"]},
                                                "task": {"type": "worker", "index": 2}}))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert (resolver.task_type, resolver.task_id) == ("worker", 2)
    assert resolver.cluster_spec().num_tasks("worker") == 3


def test_all_reduce_is_an_op_with_tensorflows_gradient():
    strategy = tf.distribute.Strategy(_TwoWorkersInOne())
    x = tf.Variable([1.0, -2.0, 3.0])

    def replica_fn():
        with tf.GradientTape() as tape:
            y = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, x * x)
            loss = tf.reduce_sum(y * tf.constant([1.0, 2.0, 3.0]))
        return y, tape.gradient(loss, x)
    y, grad = strategy.run(replica_fn)
    np.testing.assert_allclose(y.numpy(), [2.0, 8.0, 18.0])            # both "workers" hold x * x
    # d loss_total / d x on this worker: the all-reduce of the workers' upstream gradients [1, 2, 3],
    # times d(x * x)/dx = 2x.
    np.testing.assert_allclose(grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) * 2 * x.numpy())


def test_a_collective_of_a_group_this_process_does_not_have_is_refused():
    from tapeflow.ops import collective_ops
    with pytest.raises(ValueError, match="no collective group 12345"):
        collective_ops.all_reduce([tf.constant([1.0])], 12345, "SUM")
    with pytest.raises(ValueError, match="reduction"):
        collective_ops.all_reduce([tf.constant([1.0])], 0, "MAX")


def test_compiled_fit_step_uses_each_batchs_share_of_the_global_batch():
    # 7 rows in global batches of 4: this worker's shard is 2 rows of both, standing for 2/4 and then
    # 2/3 of the global batch; a traced step must read the share at every call, not keep the first.
    x = np.random.default_rng(1).normal(size=(7, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    results = []
    for jit_compile in (False, True):
        strategy = tf.distribute.Strategy(_TwoWorkersInOne())
        tf.keras.utils.set_random_seed(0)
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
            model.compile(tf.keras.optimizers.SGD(0.1), "mse", jit_compile=jit_compile)
        history = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
        results.append([w.numpy() for w in model.weights] + [np.asarray(history.history["loss"])])
    for eager, compiled in zip(*results):
        np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-7)


def test_a_saved_graph_keeps_its_world_all_reduce(tmp_path):
    import tapeflow.distribute as dist

    class Summed(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return dist.allreduce(x * 2.0, op=dist.ReduceOp.SUM)

    tf.saved_model.save(Summed(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded(tf.constant([1.0, 2.5])).numpy(), [2.0, 5.0])   # a world of one
