"""keras.utils: pad_sequences as Keras, get_file on local files (downloads are off), safe extraction."""
import hashlib
import io
import os
import tarfile
import zipfile

import numpy as np
import pytest

import tapeflow as tf

utils = tf.keras.utils


def test_pad_sequences_follows_keras():
    seqs = [[1, 2, 3], [4], [5, 6], []]
    np.testing.assert_array_equal(utils.pad_sequences(seqs), [[1, 2, 3], [0, 0, 4], [0, 5, 6], [0, 0, 0]])
    np.testing.assert_array_equal(utils.pad_sequences(seqs, maxlen=2, padding="post", truncating="post", value=-1),
                                  [[1, 2], [4, -1], [5, 6], [-1, -1]])
    out = utils.pad_sequences([[1.5, 2.5]], maxlen=3, dtype="float32")
    assert out.dtype == np.float32 and out.tolist() == [[0.0, 1.5, 2.5]]
    frames = utils.pad_sequences([np.ones((2, 3)), np.ones((1, 3))])
    assert frames.shape == (2, 2, 3) and frames[1, 0].tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match='`padding` must be "pre" or "post"'):
        utils.pad_sequences(seqs, padding="middle")


def test_get_file_copies_local_files_checks_hashes_and_refuses_downloads(tmp_path):
    source = tmp_path / "data.csv"
    source.write_text("a,b\n1,2\n")
    cache = tmp_path / "cache"
    path = utils.get_file("data.csv", origin=source.as_uri(), cache_dir=str(cache))
    assert path == str(cache / "datasets" / "data.csv") and open(path).read() == "a,b\n1,2\n"
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    assert utils.get_file("data.csv", origin="https://example.com/data.csv", cache_dir=str(cache),
                          file_hash=sha) == path            # cached: nothing to download
    with pytest.raises(ValueError, match="is damaged or not the one asked for"):
        utils.get_file("data.csv", origin=str(source), cache_dir=str(cache), file_hash="0" * 64)
    with pytest.raises(OSError, match="tapeflow does not download files.*put it at that path"):
        utils.get_file("other.csv", origin="https://example.com/other.csv", cache_dir=str(cache))


def _tar_with(tmp_path, name, member):
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as archive:
        data = b"hello"
        info = tarfile.TarInfo(member)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


def test_archives_extract_inside_the_cache_only(tmp_path):
    cache = tmp_path / "cache"
    good = _tar_with(tmp_path, "good.tar.gz", "folder/a.txt")
    utils.get_file("good.tar.gz", origin=str(good), cache_dir=str(cache), extract=True)
    assert (cache / "datasets" / "folder" / "a.txt").read_bytes() == b"hello"
    evil = _tar_with(tmp_path, "evil.tar.gz", "../../escaped.txt")
    with pytest.raises(Exception, match="outside|escaped"):
        utils.get_file("evil.tar.gz", origin=str(evil), cache_dir=str(cache), extract=True)
    assert not (tmp_path / "escaped.txt").exists()
    zpath = tmp_path / "evil.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("../escaped.txt", "x")
    with pytest.raises(ValueError, match="would land outside"):
        utils.get_file("evil.zip", origin=str(zpath), cache_dir=str(cache), extract=True)
    assert not os.path.exists(tmp_path / "cache" / "escaped.txt")
