"""The Keras image preprocessing layers against real Keras 3 (jax) fixtures: the deterministic layers'
outputs, the random layers' transforms applied with the parameters Keras sampled, their configs and a saved
model; the random layers' own draws checked for bounds, seeding and training-only activity."""
import ast
import os

import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian
from tapeflow.layers import preprocessing as P
from tapeflow.ops import image_ops

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras3_image")
F = np.load(os.path.join(HERE, "image_fixtures.npz"))
X = F["x"]
L = tf.keras.layers


def keras_config(name):
    return ast.literal_eval(str(F[f"config_{name}"]))


def same_config(layer, name):
    mine, theirs = layer.get_config(), keras_config(name)
    mine.pop("name"), theirs.pop("name")
    assert mine == theirs


DETERMINISTIC = {
    "resizing": lambda: L.Resizing(4, 5),
    "resizing_nearest": lambda: L.Resizing(9, 4, interpolation="nearest"),
    "resizing_crop": lambda: L.Resizing(4, 3, crop_to_aspect_ratio=True),
    "resizing_pad": lambda: L.Resizing(4, 3, pad_to_aspect_ratio=True, fill_value=7.0),
    "resizing_pad_wide": lambda: L.Resizing(3, 8, pad_to_aspect_ratio=True),
    "resizing_cf": lambda: L.Resizing(4, 5, data_format="channels_first"),
    "center_crop": lambda: L.CenterCrop(4, 3),
    "center_crop_up": lambda: L.CenterCrop(8, 5),
    "center_crop_cf": lambda: L.CenterCrop(2, 3, data_format="channels_first"),
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_deterministic_layers_match_keras(name):
    layer = DETERMINISTIC[name]()
    out = layer(X)
    np.testing.assert_allclose(out.numpy(), F[f"layer_{name}"], rtol=1e-6, atol=4e-5)
    assert layer.compute_output_shape(X.shape) == F[f"layer_{name}"].shape
    same_config(layer, name)
    restored = type(layer).from_config(layer.get_config())
    np.testing.assert_array_equal(restored(X).numpy(), out.numpy())
    single = layer(X[0]).numpy()                     # one image, no batch axis
    np.testing.assert_allclose(single, out.numpy()[0], rtol=1e-6, atol=1e-5)


RANDOM = {
    "random_flip": lambda: L.RandomFlip(seed=1), "random_translation": lambda: L.RandomTranslation(0.2, 0.3, seed=1),
    "random_rotation": lambda: L.RandomRotation(0.3, seed=1), "random_zoom": lambda: L.RandomZoom(0.2, seed=1),
    "random_contrast": lambda: L.RandomContrast(0.4, seed=1),
    "random_brightness": lambda: L.RandomBrightness(0.3, seed=1), "random_crop": lambda: L.RandomCrop(4, 5, seed=1),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_layers_are_the_identity_at_inference_with_keras_configs(name):
    layer = RANDOM[name]()
    np.testing.assert_array_equal(layer(X, training=False).numpy(), F[f"inference_{name}"])
    same_config(layer, name)
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


AUGMENT = {
    "flip": (lambda: L.RandomFlip(seed=5), ["flips"]),
    "translation": (lambda: L.RandomTranslation(0.3, 0.4, seed=5), ["translations"]),
    "translation_constant": (lambda: L.RandomTranslation(0.3, 0.4, fill_mode="constant", fill_value=2.0,
                                                         interpolation="nearest", seed=6), ["translations"]),
    "rotation": (lambda: L.RandomRotation(0.3, seed=5), ["angle"]),
    "rotation_nearest_fill": (lambda: L.RandomRotation(0.3, fill_mode="nearest", seed=7), ["angle"]),
    "zoom": (lambda: L.RandomZoom(0.4, (-0.2, 0.3), seed=5), ["height_zoom", "width_zoom"]),
    "zoom_constant": (lambda: L.RandomZoom((-0.4, 0.3), fill_mode="constant", seed=8),
                      ["height_zoom", "width_zoom"]),
    "contrast": (lambda: L.RandomContrast(0.5, seed=5), ["contrast_factor"]),
    "brightness": (lambda: L.RandomBrightness(0.3, seed=5), ["rgb_delta"]),
}


@pytest.mark.parametrize("name", sorted(AUGMENT))
def test_random_transforms_match_keras_for_the_parameters_keras_drew(name):
    make, keys = AUGMENT[name]
    images = np.concatenate([X, X[::-1]])
    params = {k: tf.constant(F[f"augment_{name}_{k}"]) for k in keys}
    out = make().apply(tf.constant(images), params).numpy()
    np.testing.assert_allclose(out, F[f"augment_{name}"], rtol=1e-5, atol=3e-4)


def test_draws_stay_within_the_documented_ranges():
    batch = 400
    draws = {
        "angle": (L.RandomRotation((-0.1, 0.3)), (-36.0, 108.0)),
        "translations": (L.RandomTranslation((-0.1, 0.3), 0.2), None),
        "height_zoom": (L.RandomZoom((-0.3, -0.1)), (0.7, 0.9)),
        "contrast_factor": (L.RandomContrast(0.4), (1.0, 1.4)),       # Keras 3.15: a number f means (0, f)
        "rgb_delta": (L.RandomBrightness((-0.1, 0.3), value_range=(0, 2)), (-0.2, 0.6)),
    }
    for key, (layer, bounds) in draws.items():
        values = layer.sample(batch, 10, 20)[key].numpy()
        if key == "translations":               # [dx, dy] in pixels: width 20 * (-0.2, 0.2), height 10 * (-0.1, 0.3)
            assert values[:, 0].min() >= -4 and values[:, 0].max() <= 4 and values[:, 0].std() > 1
            assert values[:, 1].min() >= -1 and values[:, 1].max() <= 3 and values[:, 1].mean() > 0.5
            continue
        low, high = bounds
        assert low <= values.min() and values.max() <= high, key
        assert values.max() - values.min() > 0.8 * (high - low), key      # spread over the range
    zoom = L.RandomZoom(0.2).sample(50, 4, 4)
    np.testing.assert_array_equal(zoom["height_zoom"].numpy(), zoom["width_zoom"].numpy())   # aspect kept


def test_augmentation_runs_only_in_training_and_is_seeded():
    images = np.random.default_rng(1).uniform(0, 255, (8, 6, 7, 3)).astype(np.float32)
    for layer in [L.RandomFlip(seed=3), L.RandomRotation(0.2, seed=3), L.RandomZoom(0.3, seed=3),
                  L.RandomTranslation(0.2, 0.2, seed=3), L.RandomContrast(0.5, seed=3),
                  L.RandomBrightness(0.2, seed=3)]:
        assert layer(images, training=False) is images or np.array_equal(layer(images, training=False), images)
        trained = layer(images).numpy()                        # called directly: training, as in Keras
        assert not np.array_equal(trained, images), type(layer).__name__
        tf.random.set_seed(11)
        a = type(layer).from_config(layer.get_config())(images).numpy()
        tf.random.set_seed(11)
        b = type(layer).from_config(layer.get_config())(images).numpy()
        np.testing.assert_array_equal(a, b)
    model = tf.keras.Sequential([tf.keras.Input((6, 7, 3)), L.RandomFlip(), L.RandomRotation(0.3)])
    np.testing.assert_array_equal(model.predict(images, verbose=0), images)


def test_random_flip_modes_and_random_crop_windows():
    images = np.arange(64 * 3 * 4, dtype=np.float32).reshape(64, 3, 4, 1)
    out = L.RandomFlip("horizontal", seed=1)(images).numpy()
    flipped = np.array([np.array_equal(out[i], images[i, :, ::-1]) for i in range(64)])
    kept = np.array([np.array_equal(out[i], images[i]) for i in range(64)])
    assert np.all(flipped ^ kept) and 16 < flipped.sum() < 48
    both = L.RandomFlip(seed=1)(images).numpy()
    assert all(np.array_equal(both[i], images[i]) or np.array_equal(both[i], images[i, ::-1, ::-1])
               for i in range(64))
    crop = L.RandomCrop(2, 3, seed=2)
    corners = set()
    for _ in range(30):
        window = crop(images).numpy()
        top, left = divmod(int(window[0, 0, 0, 0]), 4)
        np.testing.assert_array_equal(window, images[:, top:top + 2, left:left + 3])
        corners.add((top, left))
    assert corners == {(0, 0), (0, 1), (1, 0), (1, 1)}
    with pytest.raises(ValueError, match="unknown mode"):
        L.RandomFlip("diagonal")


def test_channels_first_random_layers_transform_the_spatial_axes():
    images = np.random.default_rng(2).uniform(size=(3, 5, 6, 2)).astype(np.float32)
    params = {"angle": tf.constant([30.0, -50.0, 10.0])}
    last = L.RandomRotation(0.2).apply(tf.constant(images), params).numpy()
    first = L.RandomRotation(0.2, data_format="channels_first")
    tf.random.set_seed(5)
    got = first(images.transpose(0, 3, 1, 2)).numpy()
    assert got.shape == (3, 2, 5, 6)
    tf.random.set_seed(5)
    angles = L.RandomRotation(0.2).sample(3, 5, 6)["angle"]
    np.testing.assert_allclose(got, L.RandomRotation(0.2).apply(tf.constant(images), {"angle": angles}).numpy()
                               .transpose(0, 3, 1, 2), rtol=1e-6)
    assert last.shape == images.shape


def test_projective_transform_matches_keras_affine_transform():
    for tname in ("shift", "rotate", "zoom"):
        t = tf.constant(F[f"affine_{tname}"])
        for interp in ("nearest", "bilinear"):
            for mode in ("constant", "nearest", "reflect", "mirror"):
                got = image_ops.projective_transform(tf.constant(X), t, interp, mode, 3.0).numpy()
                want = F[f"affine_{tname}_{interp}_{mode}"]
                if interp == "nearest" and mode in ("reflect", "mirror") and tname == "shift":
                    # x + 1.5 lands on ties: TensorFlow folds the coordinate into the image then rounds half
                    # away from zero, jax rounds half to even then folds; they agree away from the edge.
                    np.testing.assert_array_equal(got[:, :, :5], want[:, :, :5])
                    continue
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-4, err_msg=f"{tname} {interp} {mode}")


def test_projective_transform_wrap_of_whole_pixel_shifts_is_a_roll():
    t = tf.constant([[1, 0, 2, 0, 1, -1, 0, 0]], tf.float32)       # output (x, y) reads (x + 2, y - 1)
    got = image_ops.projective_transform(tf.constant(X), t, "bilinear", "wrap").numpy()
    np.testing.assert_allclose(got, np.roll(np.roll(X, -2, axis=2), 1, axis=1), rtol=1e-6)


def test_projective_transform_gradient_first_and_second_order():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 5, 1))
    t = tf.constant([[0.9, 0.2, 0.3, -0.1, 1.1, -0.4, 0, 0], [1, 0, -0.6, 0, 1, 0.7, 0, 0]], tf.float64)
    for interp in ("bilinear", "nearest"):
        for mode in ("constant", "reflect"):
            check_gradients(lambda v: image_ops.projective_transform(v, t, interp, mode, 0.0), x)
            check_jacobian(lambda v: image_ops.projective_transform(v, t, interp, mode, 0.0), x)
            check_gradients(lambda v: image_ops.projective_transform(
                image_ops.projective_transform(v, t, interp, mode, 0.0) ** 2, t, interp, mode), x)


def test_a_keras_model_with_preprocessing_layers_loads_and_predicts_as_keras():
    model = tf.keras.models.load_model(os.path.join(HERE, "preprocessing.keras"))
    np.testing.assert_allclose(model.predict(X, verbose=0), F["model_pred"], rtol=1e-5, atol=1e-4)


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="range \\[0, 1\\]"):
        L.RandomContrast(1.5)
    with pytest.raises(ValueError, match="range \\[-1, 1\\]"):
        L.RandomBrightness(1.5)
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomRotation(0.1, fill_mode="smear")
    with pytest.raises(ValueError, match="crop_to_aspect_ratio"):
        L.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="rank 3"):
        L.CenterCrop(2, 2)(np.zeros((4, 4)))


def test_output_dtypes_follow_keras():
    xi = np.array([[[[0], [255], [10]], [[3], [100], [7]]]]).astype("uint8")
    resized = L.Resizing(3, 4)(xi)
    np.testing.assert_array_equal(resized.numpy(), F["uint8_resized"])      # rounded half to even
    layers = {"RandomFlip": L.RandomFlip(), "RandomTranslation": L.RandomTranslation(0.1, 0.1),
              "RandomRotation": L.RandomRotation(0.1), "RandomZoom": L.RandomZoom(0.1),
              "RandomContrast": L.RandomContrast(0.1), "RandomBrightness": L.RandomBrightness(0.1),
              "RandomCrop": L.RandomCrop(1, 2), "CenterCrop": L.CenterCrop(1, 2), "Resizing": L.Resizing(2, 2)}
    for name, layer in layers.items():
        got = [layer(v, training=t).dtype.name for v in (xi, xi.astype("float64")) for t in (False, True)]
        assert got == F[f"dtypes_{name}"].tolist(), name
