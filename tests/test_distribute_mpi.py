"""Real multi-process jobs: ``mpiexec -n 2`` and ``-n 4`` (oversubscribed on a 2-core machine) run the
scripts of tests/distribute_scripts under MultiWorkerMirroredStrategy, with the MPI of the ``mpich``
wheel that the test extra installs next to the interpreter.

What they show: after several steps, the weights of data-parallel training equal (to float32 rounding) a
single process training on the whole global batches, for ``fit`` (Adam, arrays with a short last batch
that leaves a worker idle on 4 workers; SGD with momentum, a tf.data dataset) and for a GradientTape loop
under ``strategy.run`` (SGD with momentum, Adam; eager, and traced with tf.function); every worker
holds identical weights and logs the global loss and metrics; only worker 0 prints progress bars and writes checkpoints; the collectives give
the right values; a failed or killed worker ends the job at once; BackupAndRestore resumes a relaunched job.
"""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "distribute_scripts")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
TIMEOUT = 180


def mpiexec(n, script, *args):
    assert os.path.exists(MPIEXEC), (f"{MPIEXEC} is missing: the test extra installs the `mpich` wheel, which puts "
                                     "mpiexec next to the interpreter (pip install -e '.[test]').")
    command = [MPIEXEC, "-n", str(n), "-prepend-rank", sys.executable, os.path.join(SCRIPTS, script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)


def _load_script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The same training in this process, with no strategy, over the whole global batches."""
    out = tmp_path_factory.mktemp("reference")
    _load_script("train_equivalence").main(str(out), reference=True)
    return dict(np.load(out / "reference.npz"))


def _run_workers(n, out):
    result = mpiexec(n, "train_equivalence.py", str(out))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result, [dict(np.load(out / f"rank{r}.npz")) for r in range(n)]


@pytest.fixture(scope="module", params=[2, 4])
def workers(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"workers{request.param}")
    result, ranks = _run_workers(request.param, out)
    return request.param, out, result, ranks


TRAINED = ("fit_weight_", "fit_history_", "evaluate", "predict", "dataset_fit_", "loop_sgd_", "loop_adam_",
           "traced_loop_adam_")


def test_workers_train_like_one_process_on_the_global_batch(workers, reference):
    n, _, _, ranks = workers
    compared = [k for k in reference if k.startswith(TRAINED)]
    assert len([k for k in compared if "weight" in k]) == 20
    for key in compared:
        np.testing.assert_allclose(ranks[0][key], reference[key], rtol=2e-5, atol=2e-6, err_msg=key)
    # the run moved away from its start: the reference's first and last losses differ
    assert reference["loop_sgd_losses"][-1] != reference["loop_sgd_losses"][0]


def test_every_worker_holds_the_same_weights_and_logs(workers):
    n, _, _, ranks = workers
    assert all(int(r["num_replicas"]) == n for r in ranks)
    for key in (k for k in ranks[0] if k != "reduce_scatter"):   # each worker receives its own block of that
        for r in range(1, n):
            np.testing.assert_array_equal(ranks[r][key], ranks[0][key], err_msg=f"{key} on worker {r}")
    assert any(k.startswith("bn_weight_") for k in ranks[0])  # BatchNorm's moving statistics agree too


def test_only_worker_0_prints_progress_and_writes_checkpoints(workers):
    n, out, result, _ = workers
    lines = result.stdout.splitlines()
    assert any(line.startswith("[0]") and "Epoch 2/2" in line for line in lines)
    assert any(line.startswith("[0]") and "val_loss:" in line for line in lines)
    assert not any(line.startswith(f"[{r}]") for r in range(1, n) for line in lines), result.stdout[-2000:]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("written-by")) == ["written-by-rank0.weights.h5"]


def test_collectives_give_every_worker_the_combined_values(workers):
    n, _, _, ranks = workers
    for rank, r in enumerate(ranks):
        np.testing.assert_array_equal(r["allgather"], [[10 * k + 1, k] for k in range(n)])
        total = n * (n + 1) // 2
        np.testing.assert_array_equal(r["reduce_scatter"], np.arange(3 * rank, 3 * rank + 3) * total)
        np.testing.assert_array_equal(r["broadcast"], [n - 1] * 3)
        np.testing.assert_array_equal(r["hvd_allreduce_mean"], [(n + 1) / 2, 2.0])
        np.testing.assert_array_equal(r["hvd_allgather"], np.concatenate([np.arange(k + 1) for k in range(n)]))
        np.testing.assert_array_equal(r["broadcast_variables"], [0.0, 1.0])
        np.testing.assert_array_equal(r["strategy_gather"],
                                      np.concatenate([np.full((k + 1, 2), k) for k in range(n)]))
        assert float(r["replica_all_reduce_mean"]) == (n - 1) / 2
        assert int(r["strategy_from_resolver"]) == n
        values = np.concatenate([np.arange(k + 1) + 10 * k for k in range(n)])
        assert float(r["reduce_mean_axis0"]) == pytest.approx(values.mean(), rel=1e-6)


@pytest.fixture(scope="module")
def reference_resume(tmp_path_factory):
    out = tmp_path_factory.mktemp("resume_reference")
    _load_script("resume_after_failure").main(str(out), "reference")
    return dict(np.load(out / "reference-rank0.npz"))


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_failed_worker_ends_the_job_and_backup_and_restore_resumes_it(how, tmp_path, reference_resume):
    failed = mpiexec(2, "resume_after_failure.py", str(tmp_path), how)   # the timeout catches a hang
    # mpiexec -prepend-rank marks every chunk a worker writes, even inside a line: drop the marks.
    output = re.sub(r"\[\d+\] ?", "", failed.stdout + failed.stderr)
    assert failed.returncode != 0, output[-3000:]
    if how == "raise":
        assert "RuntimeError: worker 1 fails on purpose" in output, output[-3000:]
        assert "aborting the whole MPI job" in output, output[-3000:]
    else:
        assert "signal 9" in output or "Killed" in output, output[-3000:]
    assert not any(tmp_path.glob(f"{how}-rank*.npz"))        # nobody finished
    assert (tmp_path / "backup" / "training_metadata.json").exists()

    resumed = mpiexec(2, "resume_after_failure.py", str(tmp_path), "resume")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    ranks = [dict(np.load(tmp_path / f"resume-rank{r}.npz")) for r in range(2)]
    for r in ranks:
        np.testing.assert_array_equal(r["epochs"], [2, 3], err_msg=output[-3000:])   # 0 and 1 came from the backup
        for key in (k for k in reference_resume if k.startswith("weight_")):
            np.testing.assert_allclose(r[key], reference_resume[key], rtol=2e-5, atol=2e-6, err_msg=key)
            np.testing.assert_array_equal(r[key], ranks[0][key])
    assert not (tmp_path / "backup").exists()                 # worker 0 removed the finished backup


def test_the_distributed_example_trains_on_two_workers(tmp_path):
    example = os.path.join(os.path.dirname(HERE), "examples", "distributed_fit.py")
    result = subprocess.run([MPIEXEC, "-n", "2", "-prepend-rank", sys.executable, example, "--epochs", "3",
                             "--save-dir", str(tmp_path)], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summaries = [line for line in result.stdout.splitlines() if "worker(s): test loss" in line]
    assert len(summaries) == 1 and summaries[0].startswith("[0] 2 worker(s)"), result.stdout[-2000:]
    assert float(re.search(r"test accuracy ([0-9.]+)", summaries[0]).group(1)) > 0.8
    assert [p.name for p in tmp_path.iterdir()] == ["distributed_digits.weights.h5"]
