"""tf.image: resize against TensorFlow's documented numbers, real Keras (jax) and independent numpy
formulas; gradients of every order against finite differences; crops, flips and colour ops against numpy."""
import os

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, vjp_fn
from tapeflow.ops import image_ops, math_ops

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras3_image", "image_fixtures.npz"))
rng = np.random.default_rng(0)


# ------------------------------------------------------------ independent references ---
def bilinear_matrix(n_in, n_out):
    """Rows of weights: output i samples input position (i + 0.5) * n_in / n_out - 0.5, clamped to the edges."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        pos = min(max((i + 0.5) * n_in / n_out - 0.5, 0.0), n_in - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, n_in - 1)
        m[i, lo] += 1 - (pos - lo)
        m[i, hi] += pos - lo
    return m


def keys_cubic(t, a=-0.5):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a if t < 2 else 0.0


def bicubic_matrix(n_in, n_out, quantize):
    """Keys' cubic (A = -0.5) around (i + 0.5) * scale - 0.5; taps outside the image dropped and the rest
    renormalised. ``quantize``: the fractional position rounded to 1/1024, as TensorFlow's weight table does."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        pos = (i + 0.5) * n_in / n_out - 0.5
        base = int(np.floor(pos))
        frac = pos - base
        if quantize:
            frac = np.rint(frac * 1024) / 1024
        taps = {j: keys_cubic(frac - (j - base)) for j in range(base - 1, base + 3) if 0 <= j < n_in}
        total = sum(taps.values())
        for j, w in taps.items():
            m[i, j] = w / total
    return m


def area_reference(x, h, w):
    """Area resize as a block mean: repeat every pixel (h, w) times, then average (H, W) blocks."""
    n, H, W, c = x.shape
    up = np.repeat(np.repeat(x.astype(np.float64), h, axis=1), w, axis=2)
    return up.reshape(n, h, H, w, W, c).mean(axis=(2, 4))


def separable(x, mh, mw):
    return np.einsum("ip,npqc,jq->nijc", mh, x.astype(np.float64), mw)


# ------------------------------------------------------------------------- resize ---
def test_resize_matches_the_documented_example():
    image = np.eye(5, dtype=np.int32)[None, ..., None]
    out = tf.image.resize(image, [3, 5])
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out[0, ..., 0].numpy(), np.array(
        [[0.6666667, 0.3333333, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0.3333335, 0.6666665]], np.float32))


@pytest.mark.parametrize("size", [(4, 5), (9, 11), (3, 10), (6, 7)])
def test_resize_matches_keras_and_the_formulas(size):
    x = FIXTURES["x"]
    h, w = size
    bilinear = tf.image.resize(x, size).numpy()
    np.testing.assert_allclose(bilinear, FIXTURES[f"ops_resize_bilinear_{h}x{w}"], rtol=0, atol=4e-5)
    np.testing.assert_allclose(bilinear, separable(x, bilinear_matrix(6, h), bilinear_matrix(7, w)),
                               rtol=2e-6, atol=1e-5)
    nearest = tf.image.resize(x, size, method="nearest").numpy()
    np.testing.assert_array_equal(nearest, FIXTURES[f"ops_resize_nearest_{h}x{w}"])
    bicubic = tf.image.resize(x, size, method=tf.image.ResizeMethod.BICUBIC).numpy()
    exact = separable(x, bicubic_matrix(6, h, False), bicubic_matrix(7, w, False))
    np.testing.assert_allclose(FIXTURES[f"ops_resize_bicubic_{h}x{w}"], exact, atol=2e-4)   # jax: no table
    np.testing.assert_allclose(bicubic, separable(x, bicubic_matrix(6, h, True), bicubic_matrix(7, w, True)), rtol=2e-6,
                               atol=2e-4)
    np.testing.assert_allclose(bicubic, exact, atol=255 * 1e-3)   # the table moves values by < 0.1% of the range
    area = tf.image.resize(x, size, method="area").numpy()
    np.testing.assert_allclose(area, area_reference(x, h, w), rtol=1e-5, atol=1e-4)


def test_nearest_matches_the_half_pixel_rule():
    x = np.arange(7, dtype=np.int64).reshape(1, 1, 7, 1)
    out = tf.image.resize(x, [1, 3], method="nearest")
    assert out.dtype == tf.int64                      # nearest keeps the dtype
    np.testing.assert_array_equal(out.numpy().ravel(), [int(np.floor((i + 0.5) * 7 / 3)) for i in range(3)])


def test_resize_dtypes_ranks_and_errors():
    img = rng.uniform(0, 255, (5, 6, 3))
    assert tf.image.resize(img, [2, 3]).dtype == tf.float32                       # float64 in, float32 out
    assert tf.image.resize(img.astype(np.uint8), [2, 3]).shape == (2, 3, 3)      # a single image stays 3-D
    np.testing.assert_allclose(tf.image.resize(img.astype(np.float32), [5, 6]).numpy(), img.astype(np.float32))
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize(np.zeros((4, 4)), [2, 2])
    with pytest.raises(ValueError, match="2 elements"):
        tf.image.resize(img, [2, 2, 2])
    with pytest.raises(NotImplementedError, match="antialias"):
        tf.image.resize(img, [2, 2], antialias=True)
    with pytest.raises(ValueError, match="not implemented"):
        tf.image.resize(img, [2, 2], method="sideways")


def test_preserve_aspect_ratio_and_resize_with_pad():
    img = rng.uniform(size=(1, 50, 100, 1)).astype(np.float32)
    assert tf.image.resize(img, [10, 10], preserve_aspect_ratio=True).shape == (1, 5, 10, 1)
    assert tf.image.resize(img, [40, 300], preserve_aspect_ratio=True).shape == (1, 40, 80, 1)
    padded = tf.image.resize_with_pad(img, 40, 40).numpy()
    assert padded.shape == (1, 40, 40, 1)
    # 50x100 fits 40x40 as 20x40, padded by 10 rows above and below.
    np.testing.assert_array_equal(padded[:, :10], 0)
    np.testing.assert_array_equal(padded[:, 30:], 0)
    np.testing.assert_allclose(padded[:, 10:30], tf.image.resize(img, [20, 40]).numpy())


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("size", [(3, 7), (6, 2)])
def test_resize_gradients_first_and_second_order(method, size):
    x = rng.normal(size=(2, 4, 5, 2))

    def f(t):
        return image_ops.resize_image(t, size, method)

    def nonlinear(t):
        return math_ops.sin(image_ops.resize_image(t, size, method))

    check_gradients(f, x)
    check_jacobian(f, x)
    check_gradients(vjp_fn(nonlinear), x)             # goes through Resize*Grad's own gradient
    check_gradients(vjp_fn(vjp_fn(nonlinear, seed=1), seed=2), x, atol=1e-5)   # third order


def test_resize_gradient_through_the_public_function_in_float32():
    x = tf.constant(rng.normal(size=(1, 3, 4, 1)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.image.resize(x, [5, 2]) * np.arange(10, dtype=np.float32).reshape(1, 5, 2, 1))
    g = tape.gradient(y, x).numpy()
    weights = np.einsum("ip,jq,ij->pq", bilinear_matrix(3, 5), bilinear_matrix(4, 2), np.arange(10).reshape(5, 2))
    np.testing.assert_allclose(g[0, ..., 0], weights, rtol=1e-5)


def test_ops_without_a_gradient_in_tensorflow_raise_lookup_error():
    image = tf.Variable([[[0.5, 0.0, 0.0]]])
    delta = tf.Variable(0.1)
    with tf.GradientTape() as tape:
        new_image = tf.image.adjust_contrast(image, delta)
    with pytest.raises(LookupError, match="AdjustContrastv2"):
        tape.gradient(new_image, [image, delta])
    x = tf.Variable(np.ones((1, 4, 4, 1), np.float32))
    with tf.GradientTape() as tape:
        y = tf.image.resize(x, [2, 2], method="area")
    with pytest.raises(LookupError, match="ResizeArea"):
        tape.gradient(y, x)


def test_resize_traces_in_a_function():
    @tf.function
    def f(x):
        return tf.image.resize(x, [3, 4], method="bicubic")

    x = rng.normal(size=(2, 5, 5, 1)).astype(np.float32)
    np.testing.assert_array_equal(f(x).numpy(), tf.image.resize(x, [3, 4], method="bicubic").numpy())
    x2 = rng.normal(size=(2, 5, 5, 1)).astype(np.float32)
    np.testing.assert_array_equal(f(x2).numpy(), tf.image.resize(x2, [3, 4], method="bicubic").numpy())


# ------------------------------------------------------------ crops, pads, flips ---
def test_crops_pads_flips_and_rotations_match_numpy():
    x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
    one = x[0]
    np.testing.assert_array_equal(tf.image.crop_to_bounding_box(x, 1, 2, 3, 4).numpy(), x[:, 1:4, 2:6])
    np.testing.assert_array_equal(tf.image.pad_to_bounding_box(one, 1, 2, 7, 9).numpy(),
                                  np.pad(one, [(1, 1), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(tf.image.flip_left_right(x).numpy(), x[:, :, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(one).numpy(), one[::-1])
    np.testing.assert_array_equal(tf.image.transpose(x).numpy(), x.transpose(0, 2, 1, 3))
    for k in range(-1, 6):
        np.testing.assert_array_equal(tf.image.rot90(one, k).numpy(), np.rot90(one, k, axes=(0, 1)))
        np.testing.assert_array_equal(tf.image.rot90(x, k).numpy(), np.rot90(x, k, axes=(1, 2)))
    np.testing.assert_array_equal(tf.image.central_crop(x, 0.5).numpy(), x[:, 1:4, 1:5])
    assert tf.image.central_crop(one, 1.0).shape == one.shape
    # crop or pad: rows cropped from 5 to 3 (offset 1), columns padded from 6 to 9 (1 before, 2 after).
    np.testing.assert_array_equal(tf.image.resize_with_crop_or_pad(x, 3, 9).numpy(),
                                  np.pad(x[:, 1:4], [(0, 0), (0, 0), (1, 2), (0, 0)]))


def test_crop_and_pad_errors_name_the_problem():
    x = np.zeros((4, 4, 1))
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(x, 0, 2, 2, 3)
    with pytest.raises(ValueError, match="offset_height must be >= 0"):
        tf.image.pad_to_bounding_box(x, -1, 0, 6, 6)
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(x, 0.0)
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tf.image.flip_left_right(np.zeros((3, 3)))


def test_crop_pad_flip_gradients():
    x = rng.normal(size=(2, 4, 5, 1))
    check_gradients(lambda t: tf.image.rot90(tf.image.pad_to_bounding_box(t, 1, 0, 6, 6), 1), x)
    check_gradients(lambda t: tf.image.resize_with_crop_or_pad(tf.image.flip_up_down(t), 3, 7), x)


def test_random_flips_are_seeded_per_image_and_fair():
    x = np.arange(64 * 2 * 3, dtype=np.float32).reshape(64, 2, 3, 1)
    tf.random.set_seed(3)
    a = tf.image.random_flip_left_right(x, seed=7).numpy()
    tf.random.set_seed(3)
    b = tf.image.random_flip_left_right(x, seed=7).numpy()
    np.testing.assert_array_equal(a, b)
    flipped = np.array([np.array_equal(a[i], x[i, :, ::-1]) for i in range(64)])
    kept = np.array([np.array_equal(a[i], x[i]) for i in range(64)])
    assert np.all(flipped ^ kept) and 16 < flipped.sum() < 48
    c = tf.image.stateless_random_flip_up_down(x, seed=[1, 2]).numpy()
    np.testing.assert_array_equal(c, tf.image.stateless_random_flip_up_down(x, seed=[1, 2]).numpy())
    assert all(np.array_equal(c[i], x[i]) or np.array_equal(c[i], x[i, ::-1]) for i in range(64))


def test_random_crop_is_a_window_and_moves_under_a_function():
    x = np.arange(6 * 7, dtype=np.float32).reshape(6, 7, 1)

    @tf.function
    def crop(v):
        return tf.image.random_crop(v, [3, 4, 1])

    seen = set()
    for _ in range(40):
        y = crop(x).numpy()
        top, left = divmod(int(y[0, 0, 0]), 7)
        np.testing.assert_array_equal(y, x[top:top + 3, left:left + 4])
        seen.add((top, left))
    assert len(seen) > 4 and all(t <= 3 and l <= 3 for t, l in seen)
    with pytest.raises(ValueError, match="value.shape >= size"):
        tf.image.random_crop(x, [7, 4, 1])


# ------------------------------------------------------------------ colour ---
def test_convert_image_dtype_follows_tensorflow_scaling():
    u8 = np.array([0, 1, 127, 255], np.uint8)
    np.testing.assert_array_equal(tf.image.convert_image_dtype(u8, tf.float32).numpy(),
                                  u8.astype(np.float32) * np.float32(1.0 / 255))
    f = np.array([0.0, 0.5, 0.999, 1.0], np.float32)
    np.testing.assert_array_equal(tf.image.convert_image_dtype(f, tf.uint8).numpy(),
                                  (f * np.float32(255.5)).astype(np.uint8))
    np.testing.assert_array_equal(tf.image.convert_image_dtype(f * 2, tf.uint8, saturate=True).numpy(),
                                  np.minimum(f * 2 * np.float32(255.5), 255).astype(np.uint8))
    np.testing.assert_array_equal(tf.image.convert_image_dtype(u8, tf.int16).numpy(),
                                  u8.astype(np.int16) * (32768 // 256))
    i32 = np.array([0, 2 ** 24, 2 ** 31 - 1], np.int32)
    np.testing.assert_array_equal(tf.image.convert_image_dtype(i32, tf.uint8).numpy(), i32 // 2 ** 23)


def test_colour_adjustments_match_numpy():
    x = rng.uniform(size=(2, 3, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(tf.image.adjust_brightness(x, 0.2).numpy(), x + np.float32(0.2))
    mean = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(tf.image.adjust_contrast(x, 1.7).numpy(), (x - mean) * 1.7 + mean, rtol=1e-6)
    np.testing.assert_allclose(tf.image.adjust_gamma(x, 2.2, 1.5).numpy(), 1.5 * x ** 2.2, rtol=1e-5)
    u8 = (x * 255).astype(np.uint8)
    brighter = tf.image.adjust_brightness(u8, 0.5)
    assert brighter.dtype == tf.uint8
    np.testing.assert_array_equal(brighter.numpy(), np.minimum(
        (u8 * np.float32(1 / 255) + np.float32(0.5)) * np.float32(255.5), 255).astype(np.uint8))
    gray = tf.image.rgb_to_grayscale(x).numpy()
    np.testing.assert_allclose(gray[..., 0], x @ np.array([0.2989, 0.5870, 0.1140], np.float32), rtol=1e-6)
    np.testing.assert_array_equal(tf.image.grayscale_to_rgb(gray).numpy(), np.repeat(gray, 3, axis=-1))
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.adjust_gamma(x, -1.0)


def test_per_image_standardization_matches_the_documented_example():
    image = tf.constant(np.arange(1, 13, dtype=np.int32), shape=[2, 2, 3])
    out = tf.image.per_image_standardization(image)
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy().ravel(), [-1.593255, -1.3035723, -1.0138896, -0.7242068, -0.4345241,
                                                     -0.14484136, 0.14484136, 0.4345241, 0.7242068, 1.0138896,
                                                     1.3035723, 1.593255], rtol=1e-6)
    flat = np.full((2, 2, 1), 5.0, np.float32)          # a uniform image divides by 1/sqrt(N), not by 0
    np.testing.assert_array_equal(tf.image.per_image_standardization(flat).numpy(), 0)
    # It computes in float32 (TensorFlow's output dtype), so the differences use a large step.
    check_gradients(lambda t: tf.image.per_image_standardization(t), rng.normal(size=(2, 2, 3, 1)),
                    eps=1e-2, atol=2e-3, rtol=2e-3)


def test_batch_jacobian_of_a_resize_matches_per_image_jacobians():
    x = tf.constant(rng.normal(size=(3, 4, 5, 1)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reshape(math_ops.sin(image_ops.resize_image(x, (2, 3), "bilinear")), [3, 6])
    batched = tape.batch_jacobian(y, x).numpy()
    full = tape.jacobian(y, x).numpy()
    for i in range(3):
        np.testing.assert_allclose(batched[i], full[i, :, i], rtol=1e-12)
        others = np.delete(full[i], i, axis=1)
        np.testing.assert_array_equal(others, 0)      # no image depends on another
