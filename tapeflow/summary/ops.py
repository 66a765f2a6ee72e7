"""The summary ops: ``scalar``, ``histogram``, ``image``, ``text`` and ``write``.

Each builds a ``Summary`` protobuf with the tensorboard package's own helpers (the same plugin
metadata and tensor layouts TensorFlow writes) and hands it to the default writer. Each returns True
when it wrote, False when there is no default writer or ``record_if`` is off.
"""
import contextlib
import io

import numpy as np

from .state import should_record_summaries, state
from .writer import tensorboard_modules


def _array(data):
    if hasattr(data, "numpy"):
        data = data.numpy()
    return np.asarray(data)


@contextlib.contextmanager
def summary_scope(name, default_name=None, values=None):
    """Yields ``(tag, scope)``: ``name`` (or ``default_name``) under the enclosing ``tf.name_scope``s."""
    from tapeflow.module import _name_scope_stack
    name = name or default_name
    prefix = "/".join(_name_scope_stack)
    tag = f"{prefix}/{name}" if prefix else name
    yield tag, tag + "/"


def _tag(name):
    with summary_scope(name) as (tag, _):
        return tag


def _emit(build, step):
    """Builds the Summary only when it will be recorded (a missing step raises even then, as in TF)."""
    if not should_record_summaries():
        return False
    return state.writer.write_summary(build(), step)


def scalar(name, data, step=None, description=None):
    """Writes a scalar (stored as float32, like TensorFlow)."""
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb
    tensorboard_modules()
    array = _array(data)
    if array.shape != ():
        raise ValueError(f"tf.summary.scalar expects a scalar, got data of shape {array.shape} for '{name}'.")
    return _emit(lambda: scalar_pb(_tag(name), array, description), step)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of ``data`` in ``buckets`` equal-width buckets (30 by default) spanning its range."""
    from tensorboard.plugins.histogram.summary_v2 import histogram_pb
    tensorboard_modules()
    array = _array(data)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"tf.summary.histogram needs real numbers, got {array.dtype} data for '{name}'.")
    if buckets is not None and (int(buckets) != buckets or buckets < 0):
        raise ValueError(f"`buckets` must be a non-negative integer, got {buckets!r}.")
    return _emit(lambda: histogram_pb(_tag(name), array, None if buckets is None else int(buckets), description),
                 step)


def text(name, data, step=None, description=None):
    """Writes a string (or an array of strings) shown by TensorBoard's text dashboard."""
    from tensorboard.plugins.text.summary_v2 import text_pb
    tensorboard_modules()
    array = _array(data)
    if array.dtype.kind not in "USO":
        raise ValueError(f"tf.summary.text needs strings, got {array.dtype} data for '{name}'.")
    return _emit(lambda: text_pb(_tag(name), array.astype(object), description), step)


def _as_uint8(images):
    """``tf.image.convert_image_dtype(images, tf.uint8, saturate=True)``."""
    if images.dtype == np.uint8:
        return images
    if images.dtype.kind == "f":
        return np.clip(images.astype(np.float64) * 255.5, 0, 255).astype(np.uint8)
    if images.dtype.kind == "b":
        return images.astype(np.uint8) * 255
    if images.dtype.kind in "iu":
        top = int(np.iinfo(images.dtype).max) + 1
        wide = images.astype(np.int64)
        scaled = wide // (top // 256) if top >= 256 else wide * (256 // top)
        return np.clip(scaled, 0, 255).astype(np.uint8)
    raise ValueError(f"tf.summary.image cannot show {images.dtype} data.")


def _png(image):
    from PIL import Image
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[image.shape[-1]]
    picture = Image.fromarray(image[..., 0] if mode == "L" else image, mode=mode)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to ``max_outputs`` images from ``data`` of shape ``[k, h, w, c]`` (c = 1, 2, 3 or 4) as PNGs.

    Floats are taken in [0, 1] and integers by their range, as ``tf.image.convert_image_dtype``."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.image import metadata
    from tensorboard.util import tensor_util
    tensorboard_modules()
    array = _array(data)
    if array.ndim != 4 or array.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"tf.summary.image expects data of shape [k, h, w, c] with c in 1..4, got {array.shape} "
                         f"for '{name}'.")
    if int(max_outputs) < 0:
        raise ValueError(f"`max_outputs` must be non-negative, got {max_outputs!r}.")

    def build():
        pixels = _as_uint8(array[:int(max_outputs)])
        encoded = [str(array.shape[2]).encode(), str(array.shape[1]).encode()] + [_png(p) for p in pixels]
        summary = summary_pb2.Summary()
        summary.value.add(tag=_tag(name), metadata=metadata.create_summary_metadata(None, description),
                          tensor=tensor_util.make_tensor_proto(np.array(encoded, dtype=object)))
        return summary
    return _emit(build, step)


def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes ``tensor`` under ``tag`` with ``metadata`` (a SummaryMetadata protobuf or its bytes)."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.util import tensor_util
    tensorboard_modules()

    def build():
        value = tensor() if callable(tensor) else tensor
        array = _array(value)
        if array.dtype.kind == "U":
            array = array.astype(object)
        meta = metadata
        if isinstance(meta, bytes):
            meta = summary_pb2.SummaryMetadata.FromString(meta)
        summary = summary_pb2.Summary()
        entry = summary.value.add(tag=tag, tensor=tensor_util.make_tensor_proto(array))
        if meta is not None:
            entry.metadata.CopyFrom(meta)
        return summary
    return _emit(build, step)
