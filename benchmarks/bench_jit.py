"""tf.function(jit_compile=True) against the replayed tf.function and a hand-written numpy reference.

Workloads of the jit issue, each as one tf.function called with the same tensors:
  scalar chain   100 multiply-adds on scalars and their gradient (200 ops forward + backward), per op
  guide Hessian  Hessian of the advanced-autodiff guide's loss w.r.t. its 5x8 kernel (x [7,5], 5->8->6, relu)
  HVP            Hessian-vector product of a 784-256-10 relu MLP, batch 128, softmax cross-entropy
  batch_jacobian the jacobian benchmark's elu MLPs, [7,5] -> [7,6] and [64,32] -> [64,32]
  Conv1D CNN     benchmarks/convnet_step.py's Keras Conv1D CNN, one Adam step
  MLP step       benchmarks/mlp_train.py's Keras 784-256-256-10 MLP, one Adam step, batch 128 and 1024

The numpy references are the same computations written by hand (the Hessian and
the HVP analytically, the batch jacobian as per-example matrix products). Compile
times: the first call of the HVP function in a fresh process with an empty kernel
cache (cold) and with the cache the first process left (warm).

jax.jit column: benchmarks/jax_reference.py times the same workloads under the
Python named by $TAPEFLOW_BENCH_JAX_PYTHON (default: this machine's Keras/JAX
environment /tmp/kerasenv, else this interpreter if it has JAX), in its own
process just before; where it ran, those rows' summary ratio is against jax.jit.
Everything runs on one thread (BLAS, numba, XLA).

    python benchmarks/bench_jit.py [--quick] [workload function ...]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")     # before numpy loads its BLAS

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tapeflow as tf  # noqa: E402
from common import emit  # noqa: E402


def best_of(fns, repeat=9, number=5):
    """The best CPU seconds per call of each function (everything runs on one thread), timed in
    interleaved rounds: a shared machine's load then weighs on all of them alike, and CPU time
    leaves out the time other processes hold the core."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.process_time()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.process_time() - start) / number)
    return best


JAX_TIMES = {}     # workload -> jax.jit seconds per call, filled by jax_times()


def jax_times():
    """{workload: seconds} from jax_reference.py, or {} when no Python with JAX is at hand."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("TAPEFLOW_BENCH_JAX_PYTHON"), "/tmp/kerasenv/bin/python", sys.executable]
    for python in candidates:
        if not python or not os.path.exists(python):
            continue
        done = subprocess.run([python, os.path.join(here, "jax_reference.py")], capture_output=True, text=True,
                              cwd=tempfile.gettempdir())
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
    return {}


def emit_row(name, t_jit, t_ref, t_plain, unit="ms"):
    """The summary row: against jax.jit where it was measured, else against numpy."""
    others = {"replayed": t_plain}
    if name in JAX_TIMES:
        emit(f"{name}: jit_compile", t_jit, JAX_TIMES[name], "jax.jit", others=dict(others, numpy=t_ref), unit=unit)
    else:
        emit(f"{name}: jit_compile", t_jit, t_ref, "numpy", others=others, unit=unit)


def print_row(name, t_plain, t_jit, t_ref, unit="ms"):
    scale = 1e3 if unit == "ms" else 1e6
    line = (f"{name:44s} replayed {t_plain * scale:9.3f} | jit {t_jit * scale:9.3f} | numpy {t_ref * scale:9.3f} {unit}"
            f" | jit/numpy {t_jit / t_ref:5.2f}x | jit/replayed {t_jit / t_plain:5.2f}x")
    if name in JAX_TIMES:
        line += f" | jax.jit {JAX_TIMES[name] * scale:9.3f} {unit} | jit/jax {t_jit / JAX_TIMES[name]:5.2f}x"
    print(line)


def compare(name, fn, args, reference, unit="ms", per=1, number=5, check=None):
    """Times the replayed and compiled tf.function of ``fn`` and the numpy ``reference``; emits one row."""
    plain = tf.function(fn)
    jitted = tf.function(fn, jit_compile=True)
    a, b, r = plain(*args), jitted(*args), reference()
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-4, atol=1e-5)
    if check is not None:
        check(tf.nest.flatten(b)[0].numpy(), r)
    t_plain, t_jit, t_ref = (t / per for t in best_of([lambda: plain(*args), lambda: jitted(*args), reference],
                                                      number=number))
    print_row(name, t_plain, t_jit, t_ref, unit)
    emit_row(name, t_jit, t_ref, t_plain, unit)


# ---------------------------------------------------------------- workloads ---
def scalar_chain():
    n_muladd = 100

    def chain(x, a, b):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n_muladd):
                y = y * a + b
        return tape.gradient(y, x)

    def reference():
        a, b, y = np.float32(1.001), np.float32(0.01), np.float32(0.5)
        for _ in range(n_muladd):
            y = y * a + b
        g = np.float32(1.0)
        for _ in range(n_muladd):
            g = g * a
        return g

    args = [tf.constant(0.5), tf.constant(1.001), tf.constant(0.01)]
    compare("200 scalar ops fwd+bwd, per op", chain, args, reference, unit="us", per=2 * n_muladd, number=50,
            check=lambda got, ref: np.testing.assert_allclose(got, ref, rtol=1e-5))


def guide_hessian():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 5)).astype(np.float32)
    w1 = (rng.normal(size=(5, 8)) * 0.5).astype(np.float32)
    b1 = np.full(8, 0.1, np.float32)
    w2 = (rng.normal(size=(8, 6)) * 0.5).astype(np.float32)
    b2 = np.full(6, 0.1, np.float32)
    kernel = tf.Variable(w1)
    tx, tb1, tw2, tb2 = map(tf.constant, (x, b1, w2, b2))

    def hessian(x):
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = tf.nn.relu(tf.nn.relu(x @ kernel + tb1) @ tw2 + tb2)
                loss = tf.reduce_mean(y ** 2)
            g = t1.gradient(loss, kernel)
        return t2.jacobian(g, kernel)

    def reference():
        a1 = x @ w1 + b1
        m1 = (a1 > 0).astype(np.float32)
        z = np.maximum(a1, 0) @ w2 + b2
        m2 = (z > 0).astype(np.float32)
        jac = np.einsum("no,jo,nj,ni->noij", m2, w2, m1, x)     # d y[n, o] / d kernel[i, j]
        return np.einsum("noij,nokl->ijkl", jac, jac) * np.float32(2 / z.size)

    compare("Hessian of the guide's 5x8 kernel", hessian, [tx], reference,
            check=lambda got, ref: np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6))


def mlp_hvp():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 128)
    params = [(rng.normal(size=(784, 256)) / 28).astype(np.float32), np.zeros(256, np.float32),
              (rng.normal(size=(256, 10)) / 16).astype(np.float32), np.zeros(10, np.float32)]
    vectors = [rng.normal(size=p.shape).astype(np.float32) for p in params]
    variables = [tf.Variable(p) for p in params]
    tx, tlabels = tf.constant(x), tf.constant(labels)
    tvectors = [tf.constant(v) for v in vectors]

    def hvp(x, labels, *vs):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                w1, b1, w2, b2 = variables
                logits = tf.nn.relu(x @ w1 + b1) @ w2 + b2
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
            grads = inner.gradient(loss, variables)
            dot = tf.add_n([tf.reduce_sum(g * v) for g, v in zip(grads, vs)])
        return outer.gradient(dot, variables)

    onehot = np.eye(10, dtype=np.float32)[labels]

    def reference():  # forward over reverse by hand (R-operator), relu's second derivative is zero
        w1, b1, w2, b2 = params
        v1, c1, v2, c2 = vectors
        a1 = x @ w1 + b1
        mask = a1 > 0
        h = a1 * mask
        z = h @ w2 + b2
        e = np.exp(z - z.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        n = np.float32(x.shape[0])
        dz = (p - onehot) / n
        r_h = (x @ v1 + c1) * mask
        r_z = r_h @ w2 + h @ v2 + c2
        r_dz = (p * r_z - p * (p * r_z).sum(1, keepdims=True)) / n
        r_dh = r_dz @ w2.T + dz @ v2.T
        r_da1 = r_dh * mask
        return [x.T @ r_da1, r_da1.sum(0), r_h.T @ dz + h.T @ r_dz, r_dz.sum(0)]

    compare("HVP of a 784-256-10 MLP, batch 128", hvp, [tx, tlabels] + tvectors, reference, number=3,
            check=lambda got, ref: np.testing.assert_allclose(got, ref[0], rtol=1e-3, atol=1e-6))


def batch_jacobians():
    for name, (batch, n_in, hidden, n_out) in [("[7,5] -> [7,6]", (7, 5, 8, 6)), ("[64,32] -> [64,32]", (64, 32, 64, 32))]:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(batch, n_in)).astype(np.float32)
        w1 = (rng.normal(size=(n_in, hidden)) / np.sqrt(n_in)).astype(np.float32)
        b1 = np.zeros(hidden, np.float32)
        w2 = (rng.normal(size=(hidden, n_out)) / np.sqrt(hidden)).astype(np.float32)
        b2 = np.zeros(n_out, np.float32)
        tw1, tb1, tw2, tb2 = map(tf.constant, (w1, b1, w2, b2))

        def jacobian(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nn.elu(tf.nn.elu(x @ tw1 + tb1) @ tw2 + tb2)
            return tape.batch_jacobian(y, x)

        def reference():
            a1 = x @ w1 + b1
            h = np.where(a1 > 0, a1, np.expm1(a1))
            z = h @ w2 + b2
            d1 = np.where(a1 > 0, 1, h + 1).astype(np.float32)
            d2 = np.where(z > 0, 1, np.expm1(z) + 1).astype(np.float32)
            # J[b] = diag(d2) w2^T diag(d1) w1^T
            return np.einsum("bo,jo,bj,ij->boi", d2, w2, d1, w1, optimize=True)

        compare(f"batch_jacobian {name}", jacobian, [tf.constant(x)], reference,
                check=lambda got, ref: np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6))


def conv1d_step():
    from convnet_step import NumpyConv1DNet, TapeConv1DNet, conv1d_model, sequence_data
    weights = [w.numpy() for w in conv1d_model().weights]
    xs, ys = sequence_data(128)
    x, y = tf.constant(xs), tf.constant(ys)
    numpy_net = NumpyConv1DNet(weights)
    nets = [TapeConv1DNet(weights) for _ in range(2)]
    plain, jitted = tf.function(nets[0].step), tf.function(nets[1].step, jit_compile=True)
    np.testing.assert_allclose(float(plain(x, y)), float(jitted(x, y)), rtol=1e-5)
    t_plain, t_jit, t_ref = best_of([lambda: plain(x, y), lambda: jitted(x, y), lambda: numpy_net.step(xs, ys)],
                                    number=3)
    print_row("Conv1D CNN Adam step, batch 128", t_plain, t_jit, t_ref)
    emit_row("Conv1D CNN Adam step, batch 128", t_jit, t_ref, t_plain)


def mlp_steps():
    from mlp_train import NumpyMLP, TapeLoop, initial_weights, synthetic_data
    for batch in (128, 1024):
        xs, ys = synthetic_data(batch)
        x, y = tf.constant(xs), tf.constant(ys)
        weights = initial_weights()
        numpy_net = NumpyMLP(weights)
        plain, jitted = tf.function(TapeLoop(weights).step), tf.function(TapeLoop(weights).step, jit_compile=True)
        np.testing.assert_allclose(float(plain(x, y)), float(jitted(x, y)), rtol=1e-5)
        np.testing.assert_allclose(float(plain(x, y)), float(jitted(x, y)), rtol=1e-5)   # after one update
        t_plain, t_jit, t_ref = best_of([lambda: plain(x, y), lambda: jitted(x, y), lambda: numpy_net.step(xs, ys)],
                                        number=3 if batch > 128 else 10)
        name = f"MLP 784-256-256-10 Adam step, batch {batch}"
        print_row(name, t_plain, t_jit, t_ref)
        emit_row(name, t_jit, t_ref, t_plain)


# ------------------------------------------------------------ compile times ---
_FIRST_CALL = """
import sys, time
sys.path.insert(0, {here!r})
import bench_jit
start = time.perf_counter()
bench_jit.{workload}()
print(time.perf_counter() - start)
"""


def first_call_hvp():
    """Traces, plans and runs the HVP function once (what a fresh process pays before its first result)."""
    rng = np.random.default_rng(0)
    variables = [tf.Variable((rng.normal(size=s) * 0.05).astype(np.float32)) for s in [(784, 256), (256,), (256, 10),
                                                                                        (10,)]]
    x = tf.constant(rng.normal(size=(128, 784)).astype(np.float32))

    @tf.function(jit_compile=True)
    def hvp(x):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                w1, b1, w2, b2 = variables
                loss = tf.reduce_mean(tf.tanh(tf.nn.relu(x @ w1 + b1) @ w2 + b2) ** 2)
            grads = inner.gradient(loss, variables)
            dot = tf.add_n([tf.reduce_sum(g * g) for g in grads])
        return outer.gradient(dot, variables)
    hvp(x)


def compile_times():
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TAPEFLOW_JIT_CACHE=cache)
        runs = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", _FIRST_CALL.format(here=here, workload="first_call_hvp")],
                                  env=env, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(done.stderr)
            runs.append(float(done.stdout.split()[-1]))
    cold, warm = runs
    print(f"first call of a compiled MLP HVP (trace + passes + codegen + numba): cold cache {cold:.2f} s, "
          f"warm cache {warm:.2f} s")
    emit("jit first call of an MLP HVP: cold kernel cache", cold, warm, "warm cache", unit="ms")


def main():
    quick = "--quick" in sys.argv
    chosen = [a for a in sys.argv[1:] if not a.startswith("--")]
    if chosen:      # e.g. `bench_jit.py mlp_hvp mlp_steps`: only these workloads
        JAX_TIMES.update(jax_times())
        for name in chosen:
            globals()[name]()
        return
    print(f"jit_compile vs replayed tf.function vs numpy, float32, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    JAX_TIMES.update(jax_times())
    if not JAX_TIMES:
        print("(no Python with JAX found: the summary rows compare to numpy)")
    scalar_chain()
    guide_hessian()
    mlp_hvp()
    batch_jacobians()
    if not quick:
        conv1d_step()
        mlp_steps()
        compile_times()


if __name__ == "__main__":
    main()
