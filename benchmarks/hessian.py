"""Hessian-vector product cost relative to one gradient, for a 784-256-10 MLP (batch 128).

hvp never forms the Hessian (203,530 x 203,530 here); its cost should be a
small constant times one gradient.
"""
import time

import numpy as np

import tapeflow as tf
from tapeflow import autodiff
from common import emit


def best_of(fn, repeat=5, number=3):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(128, 784)).astype(np.float32))
    labels = tf.constant(rng.integers(0, 10, 128))
    w1 = tf.Variable((rng.normal(size=(784, 256)) / 28).astype(np.float32))
    b1 = tf.Variable(np.zeros(256, np.float32))
    w2 = tf.Variable((rng.normal(size=(256, 10)) / 16).astype(np.float32))
    b2 = tf.Variable(np.zeros(10, np.float32))
    variables = [w1, b1, w2, b2]
    vectors = [tf.constant(rng.normal(size=v.shape.as_list()).astype(np.float32)) for v in variables]

    def loss():
        hidden = tf.nn.relu(x @ w1 + b1)
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, hidden @ w2 + b2))

    def gradient():
        with tf.GradientTape() as tape:
            value = loss()
        return tape.gradient(value, variables)

    t_grad = best_of(gradient)
    t_rev = best_of(lambda: autodiff.hvp(loss, variables, vectors, method="reverse"))
    t_fwd = best_of(lambda: autodiff.hvp(loss, variables, vectors, method="forward"))
    print("784-256-10 MLP, batch 128, float32 (203,530 parameters)")
    print(f"{'workload':36s} {'ms':>8s} {'x gradient':>11s}")
    print(f"{'gradient':36s} {t_grad * 1e3:8.2f} {1.0:10.2f}x")
    print(f"{'hvp, reverse over reverse':36s} {t_rev * 1e3:8.2f} {t_rev / t_grad:10.2f}x")
    print(f"{'hvp, forward over reverse':36s} {t_fwd * 1e3:8.2f} {t_fwd / t_grad:10.2f}x")
    emit("hvp (reverse over reverse), 784-256-10 MLP", t_rev, t_grad, "one gradient")
    emit("hvp (forward over reverse), 784-256-10 MLP", t_fwd, t_grad, "one gradient")


if __name__ == "__main__":
    main()
