"""Training-step time of the Keras MNIST convnet, built from tf.nn ops (float32, Adam).

    Conv2D 32 3x3 relu - MaxPool 2 - Conv2D 64 3x3 relu - MaxPool 2 - Flatten - Dense 10,
    softmax cross-entropy, on 28x28x1 inputs

Implementations of the same step, timed in the same process:
  numpy   hand-written forward, backward and Adam: im2col as one copy of a
          strided view + matmul, col2im as one strided add per filter tap,
          pooling by reshape and max (the limit a numpy-based engine can reach)
  tape    tapeflow: tf.nn.conv2d / max_pool2d / matmul under tf.GradientTape,
          tape.gradient, a Keras Adam's apply_gradients
  traced  the tape step inside tf.function
  torch   the same step in PyTorch, when it is installed (comparison only)

Also the Conv1D CNN of the Keras layers (Conv1D 32x5 relu - Conv1D 32x5 relu -
Flatten - Dense 1, mean squared error, Adam) trained by a tape loop, against a
hand-written numpy step of the same model and against its five large matrix
products timed alone (the floor for a step on numpy's BLAS).

Target: tape within 1.5x of numpy.

    python benchmarks/convnet_step.py [--steps N] [--repeats R] [--batch B] [--profile]
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tapeflow as tf  # noqa: E402
from common import emit, optional_import  # noqa: E402

LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7


def synthetic_images(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (n, 28, 28, 1)).astype(np.float32), rng.integers(0, 10, n).astype(np.int64)


def glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(np.float32)


def convnet_weights(seed=1):
    rng = np.random.default_rng(seed)
    return [glorot(rng, (3, 3, 1, 32), 9, 288), np.zeros(32, np.float32),
            glorot(rng, (3, 3, 32, 64), 288, 576), np.zeros(64, np.float32),
            glorot(rng, (1600, 10), 1600, 10), np.zeros(10, np.float32)]


class NumpyAdam:
    """Keras's Adam update, by hand."""

    def __init__(self, params):
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def update(self, params, grads):
        self.t += 1
        alpha = np.float32(LR * np.sqrt(1 - BETA_2 ** self.t) / (1 - BETA_1 ** self.t))
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m += (g - m) * np.float32(1 - BETA_1)
            v += (g * g - v) * np.float32(1 - BETA_2)
            p -= (m * alpha) / (np.sqrt(v) + np.float32(EPSILON))


def softmax_xent(logits, y):
    """Mean sparse softmax cross-entropy and its gradient with respect to the logits."""
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    probs = exp / exp.sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(probs[np.arange(n), y]))
    probs[np.arange(n), y] -= 1
    return loss, probs / np.float32(n)


# ------------------------------------------------------------- numpy (2-D) ---
def im2col(x, k):
    """(n, h, w, c) -> (n * oh * ow, k * k * c) windows of a valid k x k convolution."""
    n, h, w, c = x.shape
    oh, ow = h - k + 1, w - k + 1
    s = x.strides
    view = np.lib.stride_tricks.as_strided(x, (n, oh, ow, k, k, c), (s[0], s[1], s[2], s[1], s[2], s[3]))
    return np.ascontiguousarray(view).reshape(n * oh * ow, k * k * c)


def col2im(cols, shape, k):
    """The adjoint of im2col: one strided add per filter tap."""
    n, h, w, c = shape
    oh, ow = h - k + 1, w - k + 1
    cols = cols.reshape(n, oh, ow, k, k, c)
    x = np.zeros(shape, cols.dtype)
    for i in range(k):
        for j in range(k):
            x[:, i:i + oh, j:j + ow, :] += cols[:, :, :, i, j, :]
    return x


def _quadrants(a):
    """The four cells of every 2x2 window as strided views (an odd last row/column is dropped)."""
    h, w = a.shape[1] // 2 * 2, a.shape[2] // 2 * 2
    return [a[:, i:h:2, j:w:2] for i in (0, 1) for j in (0, 1)]


def pool2(a):
    """2x2 max pooling: the maximum of the four quadrant views."""
    q = _quadrants(a)
    return np.maximum(np.maximum(q[0], q[1]), np.maximum(q[2], q[3]))


def pool2_backward(dp, a, p):
    """Routes dp to the cells equal to their window's maximum."""
    da = np.zeros(a.shape, dp.dtype)
    for cells, out in zip(_quadrants(a), _quadrants(da)):
        np.multiply(dp, cells == p, out=out)
    return da


class NumpyConvNet:
    def __init__(self, weights):
        self.params = [w.copy() for w in weights]
        self.adam = NumpyAdam(self.params)

    def step(self, x, y):
        W1, b1, W2, b2, W3, b3 = self.params
        n = x.shape[0]
        c1 = im2col(x, 3)
        z1 = (c1 @ W1.reshape(9, 32) + b1).reshape(n, 26, 26, 32)
        a1 = np.maximum(z1, 0)
        p1 = pool2(a1)
        c2 = im2col(p1, 3)
        z2 = (c2 @ W2.reshape(288, 64) + b2).reshape(n, 11, 11, 64)
        a2 = np.maximum(z2, 0)
        p2 = pool2(a2)
        flat = p2.reshape(n, 1600)
        loss, d_logits = softmax_xent(flat @ W3 + b3, y)
        gW3, gb3 = flat.T @ d_logits, d_logits.sum(0)
        d_z2 = pool2_backward((d_logits @ W3.T).reshape(p2.shape), a2, p2)
        d_z2 *= z2 > 0
        d_z2 = d_z2.reshape(-1, 64)
        gW2, gb2 = (c2.T @ d_z2).reshape(W2.shape), d_z2.sum(0)
        d_p1 = col2im(d_z2 @ W2.reshape(288, 64).T, p1.shape, 3)
        d_z1 = pool2_backward(d_p1, a1, p1)
        d_z1 *= z1 > 0
        d_z1 = d_z1.reshape(-1, 32)
        gW1, gb1 = (c1.T @ d_z1).reshape(W1.shape), d_z1.sum(0)
        self.adam.update(self.params, (gW1, gb1, gW2, gb2, gW3, gb3))
        return loss


# --------------------------------------------------------------- tapeflow ---
class TapeConvNet:
    def __init__(self, weights):
        self.variables = [tf.Variable(w) for w in weights]
        self.optimizer = tf.keras.optimizers.Adam(LR)

    def step(self, x, y):
        W1, b1, W2, b2, W3, b3 = self.variables
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, W1, 1, "VALID"), b1))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, W2, 1, "VALID"), b2))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            logits = tf.matmul(tf.reshape(h, (-1, 1600)), W3) + b3
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, self.variables)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return loss


def torch_convnet(torch, weights):
    """The same step in PyTorch (NCHW), or None."""
    params = [torch.tensor(np.ascontiguousarray(w.transpose(3, 2, 0, 1)) if w.ndim == 4 else
                           (w.T.copy() if w.ndim == 2 else w), requires_grad=True) for w in weights]
    optimizer = torch.optim.Adam(params, lr=LR, eps=EPSILON)
    F = torch.nn.functional

    def step(x, y):
        W1, b1, W2, b2, W3, b3 = params
        h = F.max_pool2d(F.relu(F.conv2d(x, W1, b1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, W2, b2)), 2)
        h = h.permute(0, 2, 3, 1).reshape(-1, 1600)  # NHWC flattening, as the others
        loss = F.cross_entropy(F.linear(h, W3, b3), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss)
    return step


# ------------------------------------------------------------ Conv1D CNN ---
SEQ_LEN, SEQ_CHANNELS, FILTERS, WIDTH = 64, 8, 32, 5


def sequence_data(n, seed=2):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, SEQ_LEN, SEQ_CHANNELS)).astype(np.float32),
            rng.standard_normal((n, 1)).astype(np.float32))


def conv1d_model():
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(3)
    return tf.keras.Sequential([tf.keras.Input((SEQ_LEN, SEQ_CHANNELS)),
                                tf.keras.layers.Conv1D(FILTERS, WIDTH, activation="relu"),
                                tf.keras.layers.Conv1D(FILTERS, WIDTH, activation="relu"),
                                tf.keras.layers.Flatten(), tf.keras.layers.Dense(1)])


def im2col_1d(x, k):
    n, length, c = x.shape
    s = x.strides
    view = np.lib.stride_tricks.as_strided(x, (n, length - k + 1, k, c), (s[0], s[1], s[1], s[2]))
    return np.ascontiguousarray(view).reshape(-1, k * c)


def col2im_1d(cols, shape, k):
    n, length, c = shape
    steps = length - k + 1
    cols = cols.reshape(n, steps, k, c)
    x = np.zeros(shape, cols.dtype)
    for i in range(k):
        x[:, i:i + steps] += cols[:, :, i]
    return x


class NumpyConv1DNet:
    def __init__(self, weights):
        self.params = [w.copy() for w in weights]
        self.adam = NumpyAdam(self.params)

    def step(self, x, y):
        K1, b1, K2, b2, W, b = self.params
        n = x.shape[0]
        c1 = im2col_1d(x, WIDTH)
        z1 = (c1 @ K1.reshape(-1, FILTERS) + b1).reshape(n, -1, FILTERS)
        a1 = np.maximum(z1, 0)
        c2 = im2col_1d(a1, WIDTH)
        z2 = (c2 @ K2.reshape(-1, FILTERS) + b2).reshape(n, -1, FILTERS)
        a2 = np.maximum(z2, 0)
        flat = a2.reshape(n, -1)
        err = flat @ W + b - y
        loss = np.mean(err ** 2)
        d_out = err * np.float32(2 / err.size)
        gW, gb = flat.T @ d_out, d_out.sum(0)
        d_z2 = (d_out @ W.T).reshape(z2.shape) * (z2 > 0)
        d_z2 = d_z2.reshape(-1, FILTERS)
        gK2, gb2 = (c2.T @ d_z2).reshape(K2.shape), d_z2.sum(0)
        d_a1 = col2im_1d(d_z2 @ K2.reshape(-1, FILTERS).T, a1.shape, WIDTH)
        d_z1 = (d_a1 * (z1 > 0)).reshape(-1, FILTERS)
        gK1, gb1 = (c1.T @ d_z1).reshape(K1.shape), d_z1.sum(0)
        self.adam.update(self.params, (gK1, gb1, gK2, gb2, gW, gb))
        return loss


def conv1d_gemms(batch_size, seed=4):
    """The Conv1D CNN step's five large matrix products alone, on operands of their shapes: the floor a
    step built on numpy's BLAS cannot go below (conv1 forward and filter gradient, conv2 forward, filter
    and input gradients; the first layer's input gradient is not needed, its input is data)."""
    rng = np.random.default_rng(seed)
    rows1, rows2 = batch_size * (SEQ_LEN - WIDTH + 1), batch_size * (SEQ_LEN - 2 * WIDTH + 2)
    cols1 = rng.standard_normal((rows1, WIDTH * SEQ_CHANNELS)).astype(np.float32)
    cols2 = rng.standard_normal((rows2, WIDTH * FILTERS)).astype(np.float32)
    k1 = rng.standard_normal((WIDTH * SEQ_CHANNELS, FILTERS)).astype(np.float32)
    k2 = rng.standard_normal((WIDTH * FILTERS, FILTERS)).astype(np.float32)
    g1 = rng.standard_normal((rows1, FILTERS)).astype(np.float32)
    g2 = rng.standard_normal((rows2, FILTERS)).astype(np.float32)

    def step(_x, _y):
        return cols1 @ k1, cols2 @ k2, cols2.T @ g2, g2 @ k2.T, cols1.T @ g1
    return step


class TapeConv1DNet:
    def __init__(self, weights):
        self.model = conv1d_model()
        self.model.set_weights(weights)
        self.loss_fn = tf.keras.losses.MeanSquaredError()
        self.optimizer = tf.keras.optimizers.Adam(LR)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True))
        variables = self.model.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss


# ---------------------------------------------------------------- timing ---
def one_pass(step, batches):
    start = time.perf_counter()
    for x, y in batches:
        step(x, y)
    return (time.perf_counter() - start) / len(batches)


def interleaved(steps, batches, repeats):
    """Best seconds per step of each (step, batches) pair over ``repeats`` interleaved passes."""
    for step, data in zip(steps, batches):
        one_pass(step, data)
    best = [float("inf")] * len(steps)
    for _ in range(repeats):
        best = [min(b, one_pass(step, data)) for b, step, data in zip(best, steps, batches)]
    return best


def agree(name, a, b, tolerance):
    if abs(float(a) - float(b)) > tolerance:
        raise AssertionError(f"{name}: the first losses disagree: {float(a)} vs {float(b)}")


def convnet(batch_size, steps, repeats):
    x, y = synthetic_images(batch_size * steps)
    weights = convnet_weights()
    numpy_batches = [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, len(x), batch_size)]
    tensor_batches = [(tf.constant(bx), tf.constant(by)) for bx, by in numpy_batches]
    ref, tape = NumpyConvNet(weights), TapeConvNet(weights)
    agree("numpy vs tape", ref.step(*numpy_batches[0]), tape.step(*tensor_batches[0]), 1e-4)
    traced = tf.function(TapeConvNet(weights).step)
    agree("traced vs tape", traced(*tensor_batches[0]), TapeConvNet(weights).step(*tensor_batches[0]), 1e-5)
    steps_, data = [ref.step, tape.step, traced], [numpy_batches, tensor_batches, tensor_batches]
    torch = optional_import("torch")
    if torch is not None:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        steps_.append(torch_convnet(torch, weights))
        data.append([(torch.tensor(np.ascontiguousarray(bx.transpose(0, 3, 1, 2))), torch.tensor(by))
                     for bx, by in numpy_batches])
    return interleaved(steps_, data, repeats)


def conv1d_cnn(batch_size, steps, repeats):
    x, y = sequence_data(batch_size * steps)
    weights = [w.numpy() for w in conv1d_model().weights]
    numpy_batches = [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, len(x), batch_size)]
    tensor_batches = [(tf.constant(bx), tf.constant(by)) for bx, by in numpy_batches]
    ref, tape = NumpyConv1DNet(weights), TapeConv1DNet(weights)
    agree("Conv1D numpy vs tape", ref.step(*numpy_batches[0]), tape.step(*tensor_batches[0]), 1e-4)
    return interleaved([ref.step, tape.step, conv1d_gemms(batch_size)], [numpy_batches, tensor_batches,
                                                                          numpy_batches], repeats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="training steps per timed pass")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes (the best is kept)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--profile", action="store_true", help="cProfile the tape step")
    args = parser.parse_args(argv)
    print(f"MNIST convnet (conv 32 - pool - conv 64 - pool - dense 10), Adam, float32, batch {args.batch}; "
          f"{args.steps} steps per pass, best of {args.repeats}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    times = convnet(args.batch, args.steps, args.repeats)
    t_numpy, t_tape, t_traced = times[:3]
    line = (f"numpy {t_numpy * 1e3:8.2f} ms | tape {t_tape * 1e3:8.2f} ms | traced {t_traced * 1e3:8.2f} ms | "
            f"tape/numpy {t_tape / t_numpy:5.2f} | traced/numpy {t_traced / t_numpy:5.2f}")
    others = {}
    if len(times) > 3:
        others["torch"] = times[3]
        line += f" | torch {times[3] * 1e3:8.2f} ms"
    print(line)
    emit(f"MNIST convnet Adam step, batch {args.batch}: tape loop", t_tape, t_numpy, others=others)
    emit(f"MNIST convnet Adam step, batch {args.batch}: tf.function", t_traced, t_numpy)
    t_numpy1, t_tape1, t_gemms = conv1d_cnn(args.batch, args.steps, args.repeats)
    print(f"Conv1D CNN ({SEQ_LEN}x{SEQ_CHANNELS}, Conv1D {FILTERS}x{WIDTH} twice, Dense 1), Adam, batch {args.batch}: "
          f"numpy {t_numpy1 * 1e3:8.2f} ms | Keras tape loop {t_tape1 * 1e3:8.2f} ms | "
          f"tape/numpy {t_tape1 / t_numpy1:5.2f} | its five GEMMs alone {t_gemms * 1e3:8.2f} ms, "
          f"tape/GEMMs {t_tape1 / t_gemms:5.2f}")
    emit(f"Conv1D CNN Adam step, batch {args.batch}: Keras tape loop", t_tape1, t_numpy1)
    print("target: tape/numpy <= 1.5")
    if args.profile:
        x, y = synthetic_images(args.batch * args.steps)
        net = TapeConvNet(convnet_weights())
        batches = [(tf.constant(x[i:i + args.batch]), tf.constant(y[i:i + args.batch]))
                   for i in range(0, len(x), args.batch)]
        one_pass(net.step, batches)
        profiler = cProfile.Profile()
        profiler.enable()
        one_pass(net.step, batches)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
