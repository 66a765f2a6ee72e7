"""image_dataset_from_directory / text_dataset_from_directory: file order, labels, splits, pixels, errors."""
import os
import sys

import numpy as np
import pytest
from PIL import Image

import tapeflow as tf


@pytest.fixture
def image_dir(tmp_path):
    rng = np.random.default_rng(0)
    pixels = {}
    for cls, count in (("dogs", 4), ("cats", 3)):
        (tmp_path / cls).mkdir()
        for i in range(count):
            array = rng.integers(0, 256, (5 + i, 6, 3), dtype=np.uint8)
            path = str(tmp_path / cls / f"im{i}.png")
            Image.fromarray(array).save(path)
            pixels[path] = array
    (tmp_path / "cats" / "notes.txt").write_text("not an image")
    (tmp_path / "stray.png").write_bytes(b"")  # outside the class folders: ignored with inferred labels
    return tmp_path, pixels


def _all(dataset):
    xs, ys = [], []
    for x, y in dataset:
        xs.append(x.numpy())
        ys.append(y.numpy())
    return np.concatenate(xs), np.concatenate(ys)


def test_unshuffled_order_labels_and_pixels(image_dir):
    root, pixels = image_dir
    ds = tf.keras.utils.image_dataset_from_directory(str(root), image_size=(5, 6), shuffle=False, batch_size=3,
                                                     verbose=False)
    assert ds.class_names == ["cats", "dogs"]
    expected_paths = [str(root / c / f"im{i}.png") for c, n in (("cats", 3), ("dogs", 4)) for i in range(n)]
    assert ds.file_paths == expected_paths
    assert int(ds.cardinality()) == 3
    images, labels = _all(ds)
    assert labels.dtype == np.int32 and labels.tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert images.dtype == np.float32 and images.shape == (7, 5, 6, 3)
    # images already 5x6 come through unchanged; a 6x6 or 7x6 image is resized bilinearly (half-pixel centres)
    np.testing.assert_array_equal(images[0], pixels[expected_paths[0]].astype(np.float32))
    tall = pixels[expected_paths[2]].astype(np.float64)  # 7 rows -> 5 rows, width unchanged
    source_rows = (np.arange(5) + 0.5) * 7 / 5 - 0.5
    lo = np.clip(np.floor(source_rows).astype(int), 0, 6)
    hi = np.clip(lo + 1, 0, 6)
    frac = (source_rows - np.floor(source_rows))[:, None, None]
    np.testing.assert_allclose(images[2], tall[lo] * (1 - frac) + tall[hi] * frac, rtol=0, atol=1e-4)


def test_seeded_split_is_a_partition_matching_keras_permutation(image_dir):
    root, _ = image_dir
    kwargs = dict(image_size=(4, 4), seed=7, validation_split=0.3, verbose=False)
    train, val = tf.keras.utils.image_dataset_from_directory(str(root), subset="both", **kwargs)
    again = tf.keras.utils.image_dataset_from_directory(str(root), subset="validation", **kwargs)
    assert again.file_paths == val.file_paths and len(val.file_paths) == 2 and len(train.file_paths) == 5
    assert sorted(train.file_paths + val.file_paths) == sorted(
        tf.keras.utils.image_dataset_from_directory(str(root), shuffle=False, verbose=False).file_paths)
    # Keras permutes the class-ordered file list with RandomState(seed).shuffle, then cuts the tail off
    ordered = tf.keras.utils.image_dataset_from_directory(str(root), shuffle=False, verbose=False).file_paths
    permuted = list(ordered)
    np.random.RandomState(7).shuffle(permuted)
    assert train.file_paths == permuted[:5] and val.file_paths == permuted[5:]
    _, labels = _all(train)
    assert sorted(labels.tolist()) == sorted(int("dogs" in p) for p in train.file_paths)


def test_label_modes_and_color_modes(image_dir):
    root, _ = image_dir
    common = dict(image_size=(3, 3), shuffle=False, verbose=False)
    _, onehot = _all(tf.keras.utils.image_dataset_from_directory(str(root), label_mode="categorical", **common))
    assert onehot.dtype == np.float32 and onehot.tolist() == [[1, 0]] * 3 + [[0, 1]] * 4
    _, binary = _all(tf.keras.utils.image_dataset_from_directory(str(root), label_mode="binary", **common))
    assert binary.shape == (7, 1) and binary.dtype == np.float32 and binary[:, 0].tolist() == [0] * 3 + [1] * 4
    # without labels the whole tree is walked (as Keras does), so the stray empty .png is now a file to decode
    (root / "stray.png").unlink()
    only_images = tf.keras.utils.image_dataset_from_directory(str(root), label_mode=None, color_mode="grayscale",
                                                              **common)
    batch = next(iter(only_images))
    assert batch.shape == (7, 3, 3, 1)
    nearest = tf.keras.utils.image_dataset_from_directory(str(root), interpolation="nearest", **common)
    assert next(iter(nearest))[0].dtype == tf.uint8


def test_class_names_order_and_explicit_labels(image_dir):
    root, _ = image_dir
    (root / "stray.png").unlink()
    ds = tf.keras.utils.image_dataset_from_directory(str(root), class_names=["dogs", "cats"], image_size=(2, 2),
                                                     shuffle=False, verbose=False)
    assert ds.class_names == ["dogs", "cats"] and _all(ds)[1].tolist() == [0] * 4 + [1] * 3
    ds = tf.keras.utils.image_dataset_from_directory(str(root), labels=[5, 6, 5, 6, 5, 6, 5], image_size=(2, 2),
                                                     shuffle=False, verbose=False)
    assert _all(ds)[1].tolist() == [5, 6, 5, 6, 5, 6, 5]


def test_argument_errors(image_dir):
    root, _ = image_dir
    f = tf.keras.utils.image_dataset_from_directory
    with pytest.raises(ValueError, match="class_names"):
        f(str(root), class_names=["cats", "birds"], verbose=False)
    with pytest.raises(ValueError, match="seed"):
        f(str(root), validation_split=0.2, subset="training", verbose=False)
    with pytest.raises(ValueError, match="subset"):
        f(str(root), validation_split=0.2, subset="test", seed=1, verbose=False)
    with pytest.raises(ValueError, match="label_mode"):
        f(str(root), label_mode="sparse", verbose=False)
    with pytest.raises(ValueError, match="color_mode"):
        f(str(root), color_mode="cmyk", verbose=False)
    with pytest.raises(ValueError, match="one label per file"):
        f(str(root), labels=[0, 1], verbose=False)
    (root / "birds").mkdir()
    (root / "birds" / "b.png").write_bytes((root / "cats" / "im0.png").read_bytes())
    with pytest.raises(ValueError, match="exactly 2 classes"):
        f(str(root), label_mode="binary", verbose=False)
    empty = root / "empty"
    (empty / "a").mkdir(parents=True)
    with pytest.raises(ValueError, match="no images found"):
        f(str(empty), verbose=False)


def test_unreadable_image_names_the_file(tmp_path):
    (tmp_path / "a").mkdir()
    bad = tmp_path / "a" / "broken.jpg"
    bad.write_bytes(b"\xff\xd8 definitely not a jpeg")
    ds = tf.keras.utils.image_dataset_from_directory(str(tmp_path), image_size=(2, 2), verbose=False)
    with pytest.raises(ValueError, match="broken.jpg"):
        list(ds)


def test_missing_pillow_is_named(image_dir, monkeypatch):
    root, _ = image_dir
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pillow"):
        tf.keras.utils.image_dataset_from_directory(str(root), verbose=False)


def test_text_dataset(tmp_path, capsys):
    for cls, texts in (("pos", ["great film", "loved it"]), ("neg", ["dull", "bad plot", "meh"])):
        os.makedirs(tmp_path / cls)
        for i, text in enumerate(texts):
            (tmp_path / cls / f"{i}.txt").write_text(text)
    (tmp_path / "neg" / "skip.md").write_text("ignored")
    ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path), shuffle=False, max_length=4, batch_size=2)
    assert "Found 5 files belonging to 2 classes." in capsys.readouterr().out
    assert ds.class_names == ["neg", "pos"]
    texts, labels = [], []
    for x, y in ds:
        assert x.dtype == tf.string
        texts += x.numpy().tolist()
        labels += y.numpy().tolist()
    assert texts == [b"dull", b"bad ", b"meh", b"grea", b"love"] and labels == [0, 0, 0, 1, 1]
    train, val = tf.keras.utils.text_dataset_from_directory(str(tmp_path), validation_split=0.4, subset="both",
                                                            seed=3, verbose=False)
    assert len(val.file_paths) == 2 and set(train.file_paths).isdisjoint(val.file_paths)
