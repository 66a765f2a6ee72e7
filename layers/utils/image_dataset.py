"""keras.utils.image_dataset_from_directory: a tf.data.Dataset of the images under a directory, labelled by
sub-directory (see directory_index for the file order, labels and split).

Images are decoded with Pillow (the optional dependency ``pillow``) when the dataset is iterated; the first
frame of an animated GIF is used. An image that cannot be decoded raises a ValueError naming the file. Every
interpolation but "nearest" yields float32 images; "nearest" keeps the decoded uint8, as tf.image.resize does.
"""
import numpy as np

from tapeflow.data.dataset import Dataset
from tapeflow.framework.tensor import Tensor
from tapeflow.image.resizing import resize

from . import directory_index

ALLOWED_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
_PIL_MODE = {1: "L", 3: "RGB", 4: "RGBA"}
_WHAT = "image_dataset_from_directory"


def _pillow():
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(f"{_WHAT} decodes images with Pillow, which is not installed; install it with "
                          f"`pip install pillow` (or `pip install tapeflow[images]`)") from error
    return Image


def decode_image(path, channels):
    """The image file as a uint8 (height, width, channels) array; ValueError naming the file if unreadable."""
    image_module = _pillow()
    try:
        with image_module.open(path) as image:
            image.seek(0)
            pixels = np.asarray(image.convert(_PIL_MODE[channels]), dtype=np.uint8)
    except (OSError, ValueError, SyntaxError) as error:
        raise ValueError(f"{_WHAT}: cannot decode the image file {path!r}: {error}") from error
    return pixels.reshape(pixels.shape[0], pixels.shape[1], channels)


def _image_size(image_size):
    if not isinstance(image_size, (list, tuple)) or len(image_size) != 2 or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in image_size):
        raise ValueError(f"{_WHAT}: `image_size` must be a tuple of two positive integers (height, width); "
                         f"received image_size={image_size!r}")
    return int(image_size[0]), int(image_size[1])


def _loader(image_size, channels, interpolation):
    def load(path):
        name = path.numpy() if isinstance(path, Tensor) else path
        name = name.decode("utf-8") if isinstance(name, bytes) else str(name)
        return resize(decode_image(name, channels), image_size, method=interpolation)
    return load


def _make_dataset(paths, labels, label_mode, class_names, image_size, channels, interpolation, batch_size,
                  shuffle, seed):
    load = _loader(image_size, channels, interpolation)
    names = np.asarray(paths, dtype=object)
    if label_mode is None:
        dataset = Dataset.from_tensor_slices(names).map(load)
    else:
        encoded = directory_index.encode_labels(labels, label_mode, len(class_names), _WHAT)
        dataset = Dataset.from_tensor_slices((names, encoded)).map(lambda path, label: (load(path), label))
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 8 if batch_size else 1024, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    dataset.class_names = class_names
    dataset.file_paths = list(paths)
    return dataset


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 verbose=True):
    """Images under ``directory`` as a Dataset of (images, labels) batches with ``.class_names``;
    ``subset="both"`` returns the (training, validation) pair."""
    labels, label_mode = directory_index.check_labels_argument(labels, label_mode, _WHAT)
    if color_mode not in _CHANNELS:
        raise ValueError(f"{_WHAT}: `color_mode` must be one of {list(_CHANNELS)}; received "
                         f"color_mode={color_mode!r}")
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError(f"{_WHAT}: crop_to_aspect_ratio and pad_to_aspect_ratio are not implemented "
                                  f"in tapeflow")
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"{_WHAT}: only data_format='channels_last' is implemented; received "
                                  f"data_format={data_format!r}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                   or batch_size <= 0):
        raise ValueError(f"{_WHAT}: `batch_size` must be a positive integer or None; received "
                         f"batch_size={batch_size!r}")
    image_size = _image_size(image_size)
    _pillow()
    directory_index.check_split_arguments(validation_split, subset, shuffle, seed, _WHAT)
    seed = directory_index.random_seed(shuffle, seed)
    paths, label_array, class_names = directory_index.index_directory(
        directory, labels, ALLOWED_FORMATS, class_names, shuffle, seed, follow_links, _WHAT)
    directory_index.report_found(paths, label_array, class_names, verbose)
    if label_mode is not None:
        directory_index.check_binary(label_mode, class_names, _WHAT)
    if not paths:
        raise ValueError(f"{_WHAT}: no images found in directory {directory!r}. Allowed formats: "
                         f"{ALLOWED_FORMATS}")
    settings = dict(label_mode=label_mode, class_names=class_names, image_size=image_size,
                    channels=_CHANNELS[color_mode], interpolation=interpolation, batch_size=batch_size,
                    shuffle=shuffle, seed=seed)
    subsets = ("training", "validation") if subset == "both" else (subset,)
    datasets = []
    for part in subsets:
        part_paths, part_labels = directory_index.split(paths, label_array, validation_split, part, verbose)
        if not part_paths:
            raise ValueError(f"{_WHAT}: no images left for the {part} subset of {directory!r} "
                             f"(validation_split={validation_split}, {len(paths)} files)")
        datasets.append(_make_dataset(part_paths, part_labels, **settings))
    return tuple(datasets) if subset == "both" else datasets[0]
