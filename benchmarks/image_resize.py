"""tf.image.resize (bilinear): forward and forward+gradient of a batch, against a hand-written numpy
reference of the same computation (gather the two taps along W, blend, then along H; the adjoint
scatters with np.add.at), measured in the same run; PyTorch's interpolate when installed.
"""
import time

import numpy as np

import tapeflow as tf
from common import emit, optional_import

CASES = [((32, 64, 64, 3), (96, 96)), ((32, 64, 64, 3), (32, 32)), ((8, 224, 224, 3), (112, 112))]


def best_of(fn, repeat=7, number=3):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def taps(n_in, n_out):
    pos = (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * np.float32(n_in / n_out) - np.float32(0.5)
    lo = np.maximum(np.floor(pos).astype(np.int64), 0)
    hi = np.minimum(np.ceil(pos).astype(np.int64), n_in - 1)
    return lo, hi, (pos - np.floor(pos)).astype(np.float32)


def numpy_forward(x, size):
    (wl, wh, wf), (hl, hh, hf) = taps(x.shape[2], size[1]), taps(x.shape[1], size[0])
    a = x[:, :, wl] + (x[:, :, wh] - x[:, :, wl]) * wf[None, None, :, None]
    return a[:, hl] + (a[:, hh] - a[:, hl]) * hf[None, :, None, None]


def numpy_backward(g, in_shape):
    n, h, w, c = in_shape
    (wl, wh, wf), (hl, hh, hf) = taps(w, g.shape[2]), taps(h, g.shape[1])
    ga = np.zeros((n, h, g.shape[2], c), g.dtype)
    np.add.at(ga, (slice(None), hl), g * (1 - hf)[None, :, None, None])
    np.add.at(ga, (slice(None), hh), g * hf[None, :, None, None])
    gx = np.zeros(in_shape, g.dtype)
    np.add.at(gx, (slice(None), slice(None), wl), ga * (1 - wf)[None, None, :, None])
    np.add.at(gx, (slice(None), slice(None), wh), ga * wf[None, None, :, None])
    return gx


def main():
    torch = optional_import("torch")
    rng = np.random.default_rng(0)
    print(f"{'case':34s} {'tapeflow fwd':>12s} {'numpy fwd':>10s} {'ratio':>6s} {'tapeflow f+b':>12s} "
          f"{'numpy f+b':>10s} {'ratio':>6s}")
    for shape, size in CASES:
        x = rng.uniform(size=shape).astype(np.float32)
        g = rng.uniform(size=(shape[0],) + size + (shape[3],)).astype(np.float32)
        xt, gt = tf.constant(x), tf.constant(g)
        np.testing.assert_allclose(tf.image.resize(xt, size).numpy(), numpy_forward(x, size), rtol=1e-5, atol=1e-6)

        def tf_fwd():
            return tf.image.resize(xt, size)

        def tf_fwd_bwd():
            with tf.GradientTape() as tape:
                tape.watch(xt)
                y = tf.image.resize(xt, size)
            return tape.gradient(y, xt, output_gradients=gt)

        np.testing.assert_allclose(tf_fwd_bwd().numpy(), numpy_backward(g, shape), rtol=1e-4, atol=1e-5)
        t_f, n_f = best_of(tf_fwd), best_of(lambda: numpy_forward(x, size))
        t_b, n_b = best_of(tf_fwd_bwd), best_of(lambda: (numpy_forward(x, size), numpy_backward(g, shape)))
        name = f"{shape} -> {size}"
        print(f"{name:34s} {t_f * 1e3:10.2f}ms {n_f * 1e3:8.2f}ms {t_f / n_f:6.2f} {t_b * 1e3:10.2f}ms "
              f"{n_b * 1e3:8.2f}ms {t_b / n_b:6.2f}")
        others = {}
        if torch is not None:
            xp = torch.tensor(x).permute(0, 3, 1, 2).requires_grad_(True)
            gp = torch.tensor(g).permute(0, 3, 1, 2)

            def torch_step():
                y = torch.nn.functional.interpolate(xp, size=size, mode="bilinear", align_corners=False)
                y.backward(gp)
            others["torch"] = best_of(torch_step)
        emit(f"resize bilinear f+b {name}", t_b, n_b, others=others)


if __name__ == "__main__":
    main()
