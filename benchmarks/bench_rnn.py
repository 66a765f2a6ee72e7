"""Training-step time of an LSTM (forward + backward through time + Adam), float32.

    LSTM(units) over `steps` steps of `features` inputs, the last state into Dense(1), mean squared error

Implementations of the same step, timed in the same process:
  numpy   hand-written: the input projection of all steps as one matmul, a loop of steps with one
          matmul and vectorised gate arithmetic each, the backward loop likewise, the weight
          gradients as one matmul each, Adam by hand (the limit a numpy-based engine can reach)
  fused   tapeflow's keras.layers.LSTM under tf.GradientTape: one RNNSequence op forward, one
          RNNSequenceGrad op backward, Adam's apply_gradients
  cell    the same LSTMCell run step by step through keras.layers.RNN (the path user cells take)
  torch   torch.nn.LSTM, when PyTorch is installed (comparison only)

Two shapes: batch 32, 50 steps, 64 units, 32 features; and the issue's batch 64, 50 steps, 128 units.
Then GRU(128) and SimpleRNN(128) at the issue's shape: fused against the cell path and torch (no numpy
reference for those).

    python benchmarks/bench_rnn.py [--repeats R] [--steps-per-repeat N] [--clock wall|cpu]

``--clock cpu`` times with the process's CPU time instead of the wall clock: on a shared machine whose
cores other jobs keep busy, the wall clock mostly measures waiting. Compare like with like: with more than
one BLAS thread (OMP_NUM_THREADS, 2 by default) CPU time adds up the threads' times, so use it with
``OMP_NUM_THREADS=1``.
"""
import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tapeflow as tf  # noqa: E402
from common import emit, optional_import  # noqa: E402

LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7


def initial_weights(features, units, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.uniform(-0.1, 0.1, (features, 4 * units)).astype(np.float32)
    R = rng.uniform(-0.1, 0.1, (units, 4 * units)).astype(np.float32)
    b = np.zeros(4 * units, np.float32)
    b[units:2 * units] = 1.0
    Wd = rng.uniform(-0.1, 0.1, (units, 1)).astype(np.float32)
    return [W, R, b, Wd, np.zeros(1, np.float32)]


class NumpyAdam:
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


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class NumpyLSTM:
    def __init__(self, weights):
        self.params = [w.copy() for w in weights]
        self.adam = NumpyAdam(self.params)

    def step(self, x, y):
        W, R, b, Wd, bd = self.params
        batch, steps, features = x.shape
        units = R.shape[0]
        z = (x.reshape(-1, features) @ W + b).reshape(batch, steps, 4 * units)
        h = np.zeros((batch, units), np.float32)
        c = np.zeros((batch, units), np.float32)
        hs, cs, gates = [h], [c], []
        for t in range(steps):
            pre = z[:, t] + h @ R
            i, f, o = _sigmoid(pre[:, :units]), _sigmoid(pre[:, units:2 * units]), _sigmoid(pre[:, 3 * units:])
            g = np.tanh(pre[:, 2 * units:3 * units])
            c = f * c + i * g
            h = o * np.tanh(c)
            hs.append(h)
            cs.append(c)
            gates.append((i, f, g, o))
        pred = h @ Wd + bd
        diff = pred - y
        loss = float(np.mean(diff * diff))
        d_pred = (2.0 / diff.size) * diff
        gWd, gbd = h.T @ d_pred, d_pred.sum(0)
        dh = d_pred @ Wd.T
        dc = np.zeros_like(c)
        dZ = np.empty((steps, batch, 4 * units), np.float32)
        for t in range(steps - 1, -1, -1):
            i, f, g, o = gates[t]
            tc = np.tanh(cs[t + 1])
            dc = dc + dh * o * (1 - tc * tc)
            dZ[t, :, :units] = dc * g * i * (1 - i)
            dZ[t, :, units:2 * units] = dc * cs[t] * f * (1 - f)
            dZ[t, :, 2 * units:3 * units] = dc * i * (1 - g * g)
            dZ[t, :, 3 * units:] = dh * tc * o * (1 - o)
            dc = dc * f
            dh = dZ[t] @ R.T
        flat_dZ = dZ.transpose(1, 0, 2).reshape(-1, 4 * units)
        gW = x.reshape(-1, features).T @ flat_dZ
        gR = np.stack(hs[:-1], 1).reshape(-1, units).T @ flat_dZ
        gb = flat_dZ.sum(0)
        self.adam.update(self.params, (gW, gR, gb, gWd, gbd))
        return loss


def step_cell(cell_class):
    """A subclass of ``cell_class`` that never takes the fused path: it runs step by step, as a user cell
    would."""
    return type("Step" + cell_class.__name__, (cell_class,), {"fused_cell": lambda self, training: None})


LAYERS = {"lstm": ("LSTM", "LSTMCell", 4), "gru": ("GRU", "GRUCell", 3), "simple": ("SimpleRNN", "SimpleRNNCell", 1)}


class TapeLSTM:
    """The layer (LSTM unless ``cell`` says otherwise) into Dense(1), trained with Adam under a tape."""

    def __init__(self, weights, fused, cell="lstm"):
        W, R, b, Wd, bd = weights
        units = R.shape[0]
        L = tf.keras.layers
        layer, cell_name, _ = LAYERS[cell]
        self.rnn = getattr(L, layer)(units) if fused else L.RNN(step_cell(getattr(L, cell_name))(units))
        self.rnn.build((None, None, W.shape[0]))
        self.rnn.set_weights([W, R, b])
        self.Wd, self.bd = tf.Variable(Wd), tf.Variable(bd)
        self.variables = self.rnn.trainable_weights + [self.Wd, self.bd]
        self.optimizer = tf.keras.optimizers.Adam(LR)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            pred = tf.matmul(self.rnn(x, training=True), self.Wd) + self.bd
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, self.variables)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return loss


def torch_lstm(torch, weights, module="LSTM"):
    """torch.nn.LSTM (or GRU, RNN) into Linear(1) with Adam; timing only, its weights are its own."""
    W, R, b, Wd, bd = weights
    units = R.shape[0]
    lstm = getattr(torch.nn, module)(W.shape[0], units, batch_first=True)
    head = torch.nn.Linear(units, 1)
    params = list(lstm.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=LR, eps=EPSILON)

    def step(x, y):
        out, _ = lstm(x)
        loss = torch.mean((head(out[:, -1]) - y) ** 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss.detach())
    return step


CLOCK = [time.perf_counter]


def best_time(step, x, y, repeats, per_repeat):
    step(x, y)  # compile, allocate, create optimizer slots
    clock = CLOCK[0]
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        for _ in range(per_repeat):
            step(x, y)
        best = min(best, (clock() - start) / per_repeat)
    return best


def check_same_first_loss(weights, x, y):
    """The three implementations compute the same step (first losses agree to float32 rounding)."""
    losses = [float(NumpyLSTM(weights).step(x, y)), float(TapeLSTM(weights, True).step(x, y)),
              float(TapeLSTM(weights, False).step(x, y))]
    assert np.allclose(losses, losses[0], rtol=1e-4), losses


def run(batch, steps, units, features, repeats, per_repeat):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(batch, steps, features)).astype(np.float32)
    y = rng.normal(size=(batch, 1)).astype(np.float32)
    weights = initial_weights(features, units)
    check_same_first_loss(weights, x, y)
    times = {
        "numpy": best_time(NumpyLSTM(weights).step, x, y, repeats, per_repeat),
        "fused": best_time(TapeLSTM(weights, True).step, tf.constant(x), tf.constant(y), repeats, per_repeat),
        "cell": best_time(TapeLSTM(weights, False).step, tf.constant(x), tf.constant(y), repeats,
                          max(1, per_repeat // 4)),
    }
    torch = optional_import("torch")
    if torch is not None:
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
        times["torch"] = best_time(torch_lstm(torch, weights), torch.tensor(x), torch.tensor(y), repeats, per_repeat)
    label = f"LSTM({units}) train step, batch {batch}, {steps} steps x {features}"
    print(f"\n{label}")
    for name, seconds in times.items():
        print(f"  {name:6s} {seconds * 1e3:9.2f} ms   {seconds / times['numpy']:5.2f}x numpy")
    print(f"  fused is {times['cell'] / times['fused']:.1f}x faster than the cell path")
    emit(f"{label} (fused)", times["fused"], times["numpy"],
         others={k: v for k, v in times.items() if k in ("cell", "torch")})


def gru_weights(features, units, cell, seed=0):
    """Keras's GRU (reset_after=True) and SimpleRNN weight shapes, and the Dense head."""
    rng = np.random.default_rng(seed)
    gates = LAYERS[cell][2]
    W = rng.uniform(-0.1, 0.1, (features, gates * units)).astype(np.float32)
    R = rng.uniform(-0.1, 0.1, (units, gates * units)).astype(np.float32)
    b = np.zeros((2, gates * units) if cell == "gru" else gates * units, np.float32)
    Wd = rng.uniform(-0.1, 0.1, (units, 1)).astype(np.float32)
    return [W, R, b, Wd, np.zeros(1, np.float32)]


def run_other_cells(batch, steps, units, features, repeats, per_repeat):
    """GRU and SimpleRNN train steps: the fused path against the cell path and torch."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(batch, steps, features)).astype(np.float32)
    y = rng.normal(size=(batch, 1)).astype(np.float32)
    torch = optional_import("torch")
    for cell, module in (("gru", "GRU"), ("simple", "RNN")):
        weights = gru_weights(features, units, cell)
        fused, stepped = TapeLSTM(weights, True, cell), TapeLSTM(weights, False, cell)
        first = [float(fused.step(tf.constant(x), tf.constant(y))),
                 float(stepped.step(tf.constant(x), tf.constant(y)))]
        assert np.allclose(first, first[0], rtol=1e-4), first
        times = {"fused": best_time(TapeLSTM(weights, True, cell).step, tf.constant(x), tf.constant(y), repeats,
                                    per_repeat),
                 "cell": best_time(TapeLSTM(weights, False, cell).step, tf.constant(x), tf.constant(y), repeats,
                                   max(1, per_repeat // 4))}
        if torch is not None:
            times["torch"] = best_time(torch_lstm(torch, weights, module), torch.tensor(x), torch.tensor(y),
                                       repeats, per_repeat)
        print(f"\n{LAYERS[cell][0]}({units}) train step, batch {batch}, {steps} steps x {features}")
        for name, seconds in times.items():
            print(f"  {name:6s} {seconds * 1e3:9.2f} ms   {seconds / times['fused']:5.2f}x fused")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps-per-repeat", type=int, default=8)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    if args.clock == "cpu":
        CLOCK[0] = time.process_time
    print(f"clock: {args.clock}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    run(32, 50, 64, 32, args.repeats, args.steps_per_repeat)
    run(64, 50, 128, 32, args.repeats, args.steps_per_repeat)
    run_other_cells(64, 50, 128, 32, args.repeats, args.steps_per_repeat)


if __name__ == "__main__":
    main()
