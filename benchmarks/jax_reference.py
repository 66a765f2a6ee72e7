"""jax.jit times of bench_jit.py's workloads, for its comparison column (run by the Python that has JAX).

Prints one JSON object {workload: seconds per call}; each workload is the same
computation as bench_jit.py's, on the same shapes and float32, on one thread,
timed as bench_jit times (best of interleaved rounds, after a warm-up call).

    python benchmarks/jax_reference.py
"""
import json
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def best_of(fns, repeat=9, number=5):
    for fn in fns:
        jax.block_until_ready(fn())
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.process_time()
            for _ in range(number):
                jax.block_until_ready(fn())
            best[i] = min(best[i], (time.process_time() - start) / number)
    return best


def scalar_chain():
    def chain(x, a, b):
        def f(x):
            y = x
            for _ in range(100):
                y = y * a + b
            return y
        return jax.grad(f)(x)
    fn = jax.jit(chain)
    args = [jnp.float32(0.5), jnp.float32(1.001), jnp.float32(0.01)]
    return lambda: fn(*args), 200


def guide_hessian():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 5)).astype(np.float32)
    w1 = (rng.normal(size=(5, 8)) * 0.5).astype(np.float32)
    b1 = np.full(8, 0.1, np.float32)
    w2 = (rng.normal(size=(8, 6)) * 0.5).astype(np.float32)
    b2 = np.full(6, 0.1, np.float32)

    def loss(kernel, x):
        y = jax.nn.relu(jax.nn.relu(x @ kernel + b1) @ w2 + b2)
        return jnp.mean(y ** 2)
    fn = jax.jit(jax.jacrev(jax.grad(loss)))
    return lambda: fn(w1, x), 1


def mlp_hvp():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 128)
    params = [(rng.normal(size=(784, 256)) / 28).astype(np.float32), np.zeros(256, np.float32),
              (rng.normal(size=(256, 10)) / 16).astype(np.float32), np.zeros(10, np.float32)]
    vectors = [rng.normal(size=p.shape).astype(np.float32) for p in params]

    def loss(params, x, labels):
        w1, b1, w2, b2 = params
        logits = jax.nn.relu(x @ w1 + b1) @ w2 + b2
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))

    def hvp(params, x, labels, vs):   # reverse over reverse, as bench_jit's tf.function
        def dot(params):
            grads = jax.grad(loss)(params, x, labels)
            return sum(jnp.sum(g * v) for g, v in zip(grads, vs))
        return jax.grad(dot)(params)
    fn = jax.jit(hvp)
    return lambda: fn(params, x, labels, vectors), 1


def batch_jacobian(batch, n_in, hidden, n_out):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, n_in)).astype(np.float32)
    w1 = (rng.normal(size=(n_in, hidden)) / np.sqrt(n_in)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = (rng.normal(size=(hidden, n_out)) / np.sqrt(hidden)).astype(np.float32)
    b2 = np.zeros(n_out, np.float32)

    def example(xi):
        return jax.nn.elu(jax.nn.elu(xi @ w1 + b1) @ w2 + b2)
    fn = jax.jit(jax.vmap(jax.jacrev(example)))
    return lambda: fn(x), 1


WORKLOADS = {
    "200 scalar ops fwd+bwd, per op": scalar_chain,
    "Hessian of the guide's 5x8 kernel": guide_hessian,
    "HVP of a 784-256-10 MLP, batch 128": mlp_hvp,
    "batch_jacobian [7,5] -> [7,6]": lambda: batch_jacobian(7, 5, 8, 6),
    "batch_jacobian [64,32] -> [64,32]": lambda: batch_jacobian(64, 32, 64, 32),
}


def main():
    names = list(WORKLOADS)
    built = [WORKLOADS[name]() for name in names]
    times = best_of([fn for fn, _ in built])
    print(json.dumps({name: t / per for name, (_, per), t in zip(names, built, times)}))


if __name__ == "__main__":
    sys.exit(main())
