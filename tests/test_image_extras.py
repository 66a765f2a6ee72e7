"""tf.image's HSV conversions and hue/saturation (against Python's colorsys), psnr and ssim (against a
direct numpy evaluation), extract_patches (against a loop), image_gradients (TensorFlow's documented
example), total_variation, and the random colour adjustments."""
import colorsys

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients

rng = np.random.default_rng(0)


def per_pixel(fn, arr):
    flat = arr.reshape(-1, 3).astype(np.float64)
    return np.array([fn(*p) for p in flat]).reshape(arr.shape)


def test_hsv_conversions_match_colorsys():
    x = rng.uniform(size=(2, 5, 6, 3)).astype(np.float32)
    x[0, 0, 0] = [0.3, 0.3, 0.3]                       # grey: hue and saturation 0
    x[0, 0, 1] = 0.0                                   # black
    hsv = tf.image.rgb_to_hsv(x).numpy()
    np.testing.assert_allclose(hsv, per_pixel(colorsys.rgb_to_hsv, x), atol=2e-6)
    np.testing.assert_allclose(tf.image.hsv_to_rgb(hsv).numpy(), x, atol=2e-6)
    np.testing.assert_allclose(tf.image.hsv_to_rgb(hsv).numpy(), per_pixel(colorsys.hsv_to_rgb, hsv), atol=2e-6)


def test_hue_and_saturation_adjustments():
    x = rng.uniform(size=(3, 4, 3)).astype(np.float32)
    hsv = per_pixel(colorsys.rgb_to_hsv, x)
    shifted = hsv.copy()
    shifted[..., 0] = np.mod(shifted[..., 0] - 0.3, 1.0)
    np.testing.assert_allclose(tf.image.adjust_hue(x, -0.3).numpy(), per_pixel(colorsys.hsv_to_rgb, shifted),
                               atol=5e-6)
    saturated = hsv.copy()
    saturated[..., 1] = np.clip(saturated[..., 1] * 1.7, 0, 1)
    np.testing.assert_allclose(tf.image.adjust_saturation(x, 1.7).numpy(),
                               per_pixel(colorsys.hsv_to_rgb, saturated), atol=5e-6)
    u8 = (x * 255).astype(np.uint8)
    assert tf.image.adjust_hue(u8, 0.1).dtype == tf.uint8
    with pytest.raises(ValueError, match="\\[-1, 1\\]"):
        tf.image.adjust_hue(x, 1.5)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = tf.image.adjust_saturation(v, 0.5)
    with pytest.raises(LookupError, match="AdjustSaturation"):
        tape.gradient(y, v)


def gaussian(size, sigma):
    d = np.arange(size) - (size - 1) / 2
    g = np.exp(-(d[:, None] ** 2 + d[None, :] ** 2) / (2 * sigma ** 2))
    return g / g.sum()


def ssim_reference(a, b, max_val, size=11, sigma=1.5, k1=0.01, k2=0.03):
    """Wang et al.'s SSIM with a Gaussian window over valid positions, per image, averaged over channels."""
    w = gaussian(size, sigma)
    windows = np.lib.stride_tricks.sliding_window_view

    def filt(t):
        return np.einsum("nhwcij,ij->nhwc", windows(t, (size, size), axis=(1, 2)), w)

    a, b = a.astype(np.float64), b.astype(np.float64)
    mu_a, mu_b = filt(a), filt(b)
    var_a, var_b = filt(a * a) - mu_a ** 2, filt(b * b) - mu_b ** 2
    cov = filt(a * b) - mu_a * mu_b
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    s = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return s.mean(axis=(1, 2, 3))


def test_psnr_and_ssim_match_their_definitions():
    a = rng.uniform(size=(2, 16, 13, 3)).astype(np.float32)
    b = np.clip(a + rng.normal(scale=0.1, size=a.shape), 0, 1).astype(np.float32)
    mse = ((a.astype(np.float64) - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.psnr(a, b, 1.0).numpy(), 10 * np.log10(1 / mse), rtol=1e-5)
    np.testing.assert_allclose(tf.image.ssim(a, b, 1.0).numpy(), ssim_reference(a, b, 1.0), rtol=1e-4)
    np.testing.assert_allclose(tf.image.ssim(a, a, 1.0).numpy(), 1.0, rtol=1e-6)
    u8a, u8b = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)   # integer images scale to [0, 1]
    np.testing.assert_allclose(tf.image.ssim(u8a, u8b, 255).numpy(),
                               ssim_reference(u8a / 255.0, u8b / 255.0, 1.0), rtol=1e-4)
    np.testing.assert_allclose(tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=0.8).numpy(),
                               ssim_reference(a, b, 1.0, 5, 0.8), rtol=1e-4)


def test_ssim_and_psnr_gradients():
    a = rng.uniform(size=(1, 5, 5, 1))
    b = rng.uniform(size=(1, 5, 5, 1))
    # float32 inside (TensorFlow's dtype): large steps for the differences
    check_gradients(lambda x: tf.image.ssim(x, tf.constant(b), 1.0, filter_size=3), a, eps=1e-2, atol=3e-3,
                    rtol=3e-3)
    check_gradients(lambda x: tf.image.psnr(x, tf.constant(b), 1.0), a, eps=1e-3, atol=3e-2, rtol=3e-3)


def patches_reference(x, k, s, r, padding):
    n, h, w, c = x.shape
    span = [(k[i] - 1) * r[i] + 1 for i in range(2)]
    if padding == "VALID":
        out = [(h - span[0]) // s[0] + 1, (w - span[1]) // s[1] + 1]
        pad = [0, 0]
    else:
        out = [-(-h // s[0]), -(-w // s[1])]
        pad = [max(0, (out[0] - 1) * s[0] + span[0] - h) // 2, max(0, (out[1] - 1) * s[1] + span[1] - w) // 2]
    result = np.zeros((n, out[0], out[1], k[0] * k[1] * c), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            values = []
            for di in range(k[0]):
                for dj in range(k[1]):
                    y, z = i * s[0] + di * r[0] - pad[0], j * s[1] + dj * r[1] - pad[1]
                    values.append(x[:, y, z] if 0 <= y < h and 0 <= z < w else np.zeros((n, c), x.dtype))
            result[:, i, j] = np.concatenate(values, axis=1)
    return result


@pytest.mark.parametrize("k,s,r,padding", [((3, 3), (1, 1), (1, 1), "VALID"), ((2, 3), (2, 3), (1, 1), "SAME"),
                                           ((3, 2), (2, 1), (2, 2), "SAME"), ((2, 2), (3, 2), (2, 1), "VALID")])
def test_extract_patches_matches_a_loop(k, s, r, padding):
    x = rng.normal(size=(2, 7, 8, 2)).astype(np.float32)
    got = tf.image.extract_patches(x, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding).numpy()
    np.testing.assert_array_equal(got, patches_reference(x, k, s, r, padding))


def test_extract_patches_gradient():
    x = rng.normal(size=(1, 4, 5, 2))
    check_gradients(lambda t: tf.image.extract_patches(t, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 1, 1], "SAME"), x)


def test_image_gradients_documented_example_and_total_variation():
    image = tf.reshape(tf.range(25, delta=1, dtype=tf.float32), shape=(1, 5, 5, 1))
    dy, dx = tf.image.image_gradients(image)
    np.testing.assert_array_equal(dy.numpy()[0, ..., 0], [[5] * 5] * 4 + [[0] * 5])
    np.testing.assert_array_equal(dx.numpy()[0, ..., 0], [[1, 1, 1, 1, 0]] * 5)
    x = rng.normal(size=(2, 4, 5, 3)).astype(np.float32)
    tv = np.abs(np.diff(x, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(x, axis=2)).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.total_variation(x).numpy(), tv, rtol=1e-5)


def test_random_colour_adjustments_are_seeded_and_bounded():
    x = rng.uniform(size=(4, 5, 3)).astype(np.float32)
    tf.random.set_seed(4)
    a = tf.image.random_brightness(x, 0.2, seed=1).numpy()
    tf.random.set_seed(4)
    np.testing.assert_array_equal(a, tf.image.random_brightness(x, 0.2, seed=1).numpy())
    delta = (a - x).ravel()
    assert np.ptp(delta) < 1e-6 and abs(delta[0]) <= 0.2
    contrast = tf.image.random_contrast(x, 0.5, 1.5).numpy()
    mean = x.mean(axis=(0, 1))
    factor = (contrast - mean) / (x - mean)
    assert 0.5 <= factor.mean() <= 1.5 and np.ptp(factor) < 1e-3
    np.testing.assert_array_equal(tf.image.stateless_random_contrast(x, 0.5, 1.5, seed=[1, 2]).numpy(),
                                  tf.image.stateless_random_contrast(x, 0.5, 1.5, seed=[1, 2]).numpy())
    assert tf.image.random_hue(x, 0.1).shape == x.shape and tf.image.random_saturation(x, 0.5, 2).shape == x.shape
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(x, 1.0, 0.5)
