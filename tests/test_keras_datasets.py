"""keras.datasets.mnist / fashion_mnist read the files Keras caches (~/.keras/datasets) as data: here synthetic
files in Keras's layouts (an .npz of four arrays; gzipped IDX files with 8/16-byte headers), and damaged ones."""
import gzip

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import FileFormatError


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".keras" / "datasets" / "fashion-mnist").mkdir(parents=True)
    return tmp_path / ".keras" / "datasets"


def test_mnist_import_form_and_load(home):
    from tapeflow.keras.datasets import mnist
    assert mnist is tf.keras.datasets.mnist
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (5, 28, 28), dtype=np.uint8), "y_train": np.arange(5, dtype=np.uint8),
              "x_test": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8), "y_test": np.array([7, 1], np.uint8)}
    np.savez(home / "mnist.npz", **arrays)
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    for got, name in ((x_train, "x_train"), (y_train, "y_train"), (x_test, "x_test"), (y_test, "y_test")):
        np.testing.assert_array_equal(got, arrays[name])
        assert got.dtype == np.uint8


def test_mnist_refuses_damaged_or_pickled_files(home):
    from tapeflow.keras.datasets import mnist
    with pytest.raises(OSError, match="does not download"):
        mnist.load_data()
    (home / "mnist.npz").write_bytes(b"garbage, not a zip")
    with pytest.raises(FileFormatError, match="mnist.npz"):
        mnist.load_data()
    np.savez(home / "mnist.npz", x_train=np.zeros((2, 28, 28)))
    with pytest.raises(FileFormatError, match=r"lacks the arrays \['y_train', 'x_test', 'y_test'\]"):
        mnist.load_data()
    np.savez(home / "mnist.npz", x_train=np.array([{}], dtype=object), y_train=np.zeros(1),
             x_test=np.zeros((1, 2, 2)), y_test=np.zeros(1))
    with pytest.raises(FileFormatError, match="unreadable"):       # object arrays would need unpickling
        mnist.load_data()
    np.savez(home / "mnist.npz", x_train=np.zeros((3, 2, 2)), y_train=np.zeros(2), x_test=np.zeros((1, 2, 2)),
             y_test=np.zeros(1))
    with pytest.raises(FileFormatError, match="one label each"):
        mnist.load_data()


def _idx(path, header, body):
    with gzip.open(path, "wb") as f:
        f.write(header + body.tobytes())


def test_fashion_mnist_reads_idx_files(home):
    from tapeflow.keras.datasets import fashion_mnist
    rng = np.random.default_rng(1)
    d = home / "fashion-mnist"
    images = {"train": rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
              "t10k": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8)}
    labels = {"train": np.array([9, 0, 3], np.uint8), "t10k": np.array([4, 4], np.uint8)}
    for split in ("train", "t10k"):
        _idx(d / f"{split}-labels-idx1-ubyte.gz", b"\0" * 8, labels[split])
        _idx(d / f"{split}-images-idx3-ubyte.gz", b"\0" * 16, images[split])
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, images["train"])
    np.testing.assert_array_equal(y_train, labels["train"])
    np.testing.assert_array_equal(x_test, images["t10k"])
    np.testing.assert_array_equal(y_test, labels["t10k"])
    _idx(d / "t10k-images-idx3-ubyte.gz", b"\0" * 16, images["t10k"][:, :27])
    with pytest.raises(FileFormatError, match="t10k-images-idx3-ubyte.gz.*2 images of 28x28"):
        fashion_mnist.load_data()
    (d / "t10k-images-idx3-ubyte.gz").write_bytes(b"not gzip")
    with pytest.raises(FileFormatError, match="not a readable gzip file"):
        fashion_mnist.load_data()
