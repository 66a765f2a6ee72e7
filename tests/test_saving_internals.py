"""The pieces under the formats: CRC-32 from pieces, the zip writer (fast path and zip64 path),
chunked HDF5 name lists."""
import json
import os
import zipfile
import zlib

import h5py
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.saving import crc32, h5_attrs, zip_io

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras")
keras = tf.keras


def test_crc32_combine_matches_zlib_on_the_concatenation():
    rng = np.random.default_rng(0)
    for length_a, length_b in [(0, 5), (7, 0), (1, 1), (1000, 3), (65536, 131071), (12345, 999999)]:
        a = rng.integers(0, 256, length_a, dtype=np.uint8).tobytes()
        b = rng.integers(0, 256, length_b, dtype=np.uint8).tobytes()
        assert crc32.combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def test_checksums_of_arrays_on_threads():
    sums = crc32.Checksums()
    big = np.arange(100_000, dtype=np.float32)
    assert sums.add("big", big)
    assert not sums.add("small", np.ones(3, np.float32))          # read back instead
    assert not sums.add("strided", np.arange(200_000.0)[::2])     # not contiguous
    assert sums.result("big") == (big.nbytes, zlib.crc32(big.tobytes()))
    sums.close()


def model_with_big_weights():
    model = keras.Sequential([keras.Input((300,)), keras.layers.Dense(200), keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


def test_archive_member_is_the_hdf5_file_at_the_user_block(tmp_path):
    model = model_with_big_weights()
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        assert z.testzip() is None   # every CRC-32, including the one assembled from pieces
        info = z.getinfo("model.weights.h5")
        member = z.read("model.weights.h5")
    assert info.header_offset == 0 and member[:8] == b"\x89HDF\r\n\x1a\n"
    raw = (tmp_path / "m.keras").read_bytes()
    assert raw[zip_io.USER_BLOCK:zip_io.USER_BLOCK + len(member)] == member


def test_zip64_path_writes_the_same_archive(tmp_path, monkeypatch):
    model = model_with_big_weights()
    monkeypatch.setattr(zip_io, "_LIMIT", 1000)   # as if the weights were larger than 4 GiB
    model.save(tmp_path / "big.keras")
    with zipfile.ZipFile(tmp_path / "big.keras") as z:
        assert z.testzip() is None
        assert z.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        assert z.getinfo("model.weights.h5").compress_type == zipfile.ZIP_STORED
    loaded = keras.models.load_model(tmp_path / "big.keras")
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert os.listdir(tmp_path) == ["big.keras"]


def test_corruption_of_our_own_archive_is_detected(tmp_path):
    model = model_with_big_weights()
    model.save(tmp_path / "m.keras")
    data = bytearray((tmp_path / "m.keras").read_bytes())
    kernel = np.asarray(model.layers[0].kernel).tobytes()
    where = bytes(data).find(kernel[:64])
    assert where > 0
    data[where + 1000] ^= 0x01
    (tmp_path / "m.keras").write_bytes(bytes(data))
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(zip_io.ArchiveError, match="CRC"):
        model.load_weights(tmp_path / "m.keras")
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_name_lists_are_chunked_like_keras(tmp_path):
    names = [f"layer_with_a_long_name_{i:05d}/kernel" for i in range(3000)]   # about 111 kB
    with h5py.File(tmp_path / "a.h5", "w") as f:
        h5_attrs.set_string_list(f, "weight_names", names)
        h5_attrs.set_string_list(f, "empty", [])
        assert "weight_names" not in f.attrs and "weight_names0" in f.attrs and "weight_names1" in f.attrs
        assert all(sum(len(n) for n in f.attrs[k]) <= h5_attrs.HEADER_LIMIT for k in f.attrs if k != "empty")
        assert h5_attrs.get_string_list(f, "weight_names") == names
        assert f.attrs["empty"].dtype == np.float64 and h5_attrs.get_string_list(f, "empty") == []


def test_legacy_file_with_chunked_layer_names_loads(tmp_path):
    path = tmp_path / "m.h5"
    path.write_bytes(open(os.path.join(HERE, "m.h5"), "rb").read())
    with h5py.File(path, "r+") as f:
        group = f["model_weights"]
        names = list(group.attrs["layer_names"])
        del group.attrs["layer_names"]
        group.attrs["layer_names0"] = np.array(names[:2], dtype=object).astype("S")
        group.attrs["layer_names1"] = np.array(names[2:], dtype=object).astype("S")
    model = keras.models.load_model(path)
    x = np.load(os.path.join(HERE, "m_x.npy"))
    np.testing.assert_allclose(model.predict(x, verbose=0), np.load(os.path.join(HERE, "m_pred.npy")),
                               rtol=1e-5, atol=1e-6)


def test_metadata_and_config_members_are_json(tmp_path):
    model_with_big_weights().save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        assert json.loads(z.read("config.json"))["compile_config"]["optimizer"]["module"] == "keras.optimizers"
        assert z.read("metadata.json").startswith(b'{"keras_version": "3.15.1", "date_saved": "')
