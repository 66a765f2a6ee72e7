"""keras.utils.text_dataset_from_directory: a tf.data.Dataset of the .txt files under a directory as strings,
labelled by sub-directory (see directory_index for the file order, labels and split)."""
import numpy as np

from tapeflow.data.dataset import Dataset

from . import directory_index

_WHAT = "text_dataset_from_directory"


def _read(path, max_length):
    try:
        with open(path, "rb") as f:
            content = f.read()
    except OSError as error:
        raise OSError(f"{_WHAT}: cannot read {path!r}: {error}") from error
    return content if max_length is None else content[:max_length]


def _make_dataset(paths, labels, label_mode, class_names, max_length, batch_size, shuffle, seed):
    texts = np.empty(len(paths), dtype=object)
    texts[:] = [_read(p, max_length) for p in paths]
    if label_mode is None:
        dataset = Dataset.from_tensor_slices(texts)
    else:
        encoded = directory_index.encode_labels(labels, label_mode, len(class_names), _WHAT)
        dataset = Dataset.from_tensor_slices((texts, encoded))
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 8 if batch_size else 1024, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    dataset.class_names = class_names
    dataset.file_paths = list(paths)
    return dataset


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, verbose=True):
    """Texts (bytes strings) under ``directory`` as a Dataset of (texts, labels) batches with
    ``.class_names``; ``subset="both"`` returns the (training, validation) pair."""
    labels, label_mode = directory_index.check_labels_argument(labels, label_mode, _WHAT)
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                   or batch_size <= 0):
        raise ValueError(f"{_WHAT}: `batch_size` must be a positive integer or None; received "
                         f"batch_size={batch_size!r}")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer))
                                   or max_length < 0):
        raise ValueError(f"{_WHAT}: `max_length` must be a non-negative integer or None; received "
                         f"max_length={max_length!r}")
    directory_index.check_split_arguments(validation_split, subset, shuffle, seed, _WHAT)
    seed = directory_index.random_seed(shuffle, seed)
    paths, label_array, class_names = directory_index.index_directory(
        directory, labels, (".txt",), class_names, shuffle, seed, follow_links, _WHAT)
    directory_index.report_found(paths, label_array, class_names, verbose)
    if label_mode is not None:
        directory_index.check_binary(label_mode, class_names, _WHAT)
    if not paths:
        raise ValueError(f"{_WHAT}: no text files found in directory {directory!r}. Allowed format: .txt")
    subsets = ("training", "validation") if subset == "both" else (subset,)
    datasets = []
    for part in subsets:
        part_paths, part_labels = directory_index.split(paths, label_array, validation_split, part, verbose)
        if not part_paths:
            raise ValueError(f"{_WHAT}: no files left for the {part} subset of {directory!r} "
                             f"(validation_split={validation_split}, {len(paths)} files)")
        datasets.append(_make_dataset(part_paths, part_labels, label_mode, class_names, max_length, batch_size,
                                      shuffle, seed))
    return tuple(datasets) if subset == "both" else datasets[0]
