"""Who this worker is: rank and size from the MPI launcher, ``TF_CONFIG`` checked against them.

TensorFlow's multi-worker programs describe the cluster in ``TF_CONFIG``
(``{"cluster": {"worker": [...]}, "task": {"type": "worker", "index": i}}``).
Here the launcher (``mpiexec``, ``srun``) starts the workers and numbers them,
so ``TF_CONFIG`` is accepted only when it agrees: the same number of workers
(``chief`` + ``worker`` tasks). The MPI rank is the task id (a ``chief`` task
is rank 0, as TensorFlow's chief is worker 0's role). A ``TF_CONFIG`` naming
more workers than were launched is an error: there is no transport of our own.
"""
import json
import os
import warnings


class ClusterSpec:
    """The workers of the job by task type: ``cluster_spec().as_dict()``, ``num_tasks('worker')``."""

    def __init__(self, cluster):
        self._cluster = {k: list(v) for k, v in cluster.items()}

    def as_dict(self):
        return {k: list(v) for k, v in self._cluster.items()}

    def num_tasks(self, job_name):
        return len(self._cluster.get(job_name, ()))

    @property
    def jobs(self):
        return list(self._cluster)

    def __repr__(self):
        return f"ClusterSpec({self._cluster})"


def _read_tf_config():
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return None
    try:
        config = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"The TF_CONFIG environment variable is not valid JSON: {e}") from None
    if not isinstance(config, dict):
        raise ValueError("The TF_CONFIG environment variable must hold a JSON object with 'cluster' and 'task'.")
    cluster = config.get("cluster") or {}
    if not isinstance(cluster, dict) or not all(isinstance(v, list) for v in cluster.values()):
        raise ValueError("TF_CONFIG['cluster'] must map task types to lists of addresses, e.g. "
                         '{"worker": ["host1:port", "host2:port"]}.')
    task = config.get("task") or {}
    if not isinstance(task, dict):
        raise ValueError("TF_CONFIG['task'] must be an object such as {\"type\": \"worker\", \"index\": 0}.")
    return cluster, task


class _ClusterResolver:
    """What every resolver answers from its ``_cluster`` (no accelerators, no master address)."""

    def cluster_spec(self):
        return ClusterSpec(self._cluster)

    def num_accelerators(self, *args, **kwargs):
        return {}

    def master(self, *args, **kwargs):
        return ""


class MPIClusterResolver(_ClusterResolver):
    """``strategy.cluster_resolver``: ``task_type`` ('worker' or 'chief'), ``task_id`` (the MPI rank)
    and ``cluster_spec()``."""

    rpc_layer = "mpi"
    environment = "mpi"

    def __init__(self, rank, size):
        self.task_id = rank
        self.num_workers = size
        config = _read_tf_config()
        if config is None:
            self.task_type = "worker"
            self._cluster = {"worker": [f"mpi-rank-{r}" for r in range(size)]}
            return
        cluster, task = config
        workers = list(cluster.get("chief", [])) + list(cluster.get("worker", []))
        if len(workers) != size:
            hint = (f"launch them with `mpiexec -n {len(workers)} python ...` (or `srun`)" if size == 1 else
                    "make TF_CONFIG list as many workers as the launcher starts")
            raise ValueError(f"TF_CONFIG describes {len(workers)} workers but this job has {size} MPI process"
                             f"{'es' if size != 1 else ''}: {hint}. tapeflow runs the workers the MPI launcher "
                             "started; it does not connect to the addresses in TF_CONFIG.")
        has_chief = bool(cluster.get("chief"))
        self.task_type = "chief" if has_chief and rank == 0 else "worker"
        claimed = task.get("index", 0) + (1 if has_chief and task.get("type") == "worker" else 0)
        if task and claimed != rank:
            warnings.warn(f"TF_CONFIG says this is task {task.get('type')}:{task.get('index')}, but the MPI launcher "
                          f"made it rank {rank}; the rank decides (task_id={rank}).", stacklevel=3)
        self._cluster = {k: list(v) for k, v in cluster.items() if k in ("chief", "worker")}

    def __repr__(self):
        return f"<MPIClusterResolver task_type={self.task_type!r} task_id={self.task_id} of {self.num_workers}>"


class TFConfigClusterResolver(_ClusterResolver):
    """``tf.distribute.cluster_resolver.TFConfigClusterResolver``: the task and cluster ``TF_CONFIG`` names.
    Passed to ``MultiWorkerMirroredStrategy``, it is checked against the MPI launcher's numbering."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        config = _read_tf_config()
        cluster, task = config if config is not None else ({}, {})
        self.task_type = task_type if task_type is not None else task.get("type", "worker")
        self.task_id = task_id if task_id is not None else task.get("index", 0)
        self.rpc_layer = rpc_layer
        self.environment = environment or ""
        self._cluster = {k: list(v) for k, v in cluster.items()}
