"""The files of a directory as (paths, labels, class names): the indexing shared by
image_dataset_from_directory and text_dataset_from_directory (Keras 3 semantics).

With ``labels="inferred"`` every sub-directory of ``directory`` is a class (alphanumeric order unless
``class_names`` fixes it) and its files, found recursively, are labelled with the class index. Otherwise the
whole tree is walked and ``labels`` is None or one integer label per file. Files come in class order, then in
the order of the sorted walk; with ``shuffle`` the paths and the labels are permuted by two numpy
``RandomState(seed)`` generators, which is Keras's permutation, so the same seed selects the same split.
"""
import os

import numpy as np


def _walk(top, formats, follow_links):
    found = []
    for root, _, files in sorted(os.walk(top, followlinks=follow_links)):
        for name in sorted(files):
            if name.lower().endswith(formats):
                found.append(os.path.join(root, name))
    return found


def check_labels_argument(labels, label_mode, what):
    """(labels, label_mode) checked; labels=None drops the label mode, as Keras does."""
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(f"{what}: `labels` must be 'inferred', None, or a list/tuple of integer labels, one per "
                         f"file found in the directory; received labels={labels!r}")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f"{what}: `label_mode` must be one of 'int', 'categorical', 'binary', or None; received "
                         f"label_mode={label_mode!r}")
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


def index_directory(directory, labels, formats, class_names, shuffle, seed, follow_links, what):
    """(file paths, int32 labels or None, class names) of the matching files under ``directory``."""
    if not os.path.isdir(directory):
        raise ValueError(f"{what}: directory {directory!r} does not exist or is not a directory")
    if labels == "inferred":
        subdirs = sorted(name for name in os.listdir(directory) if os.path.isdir(os.path.join(directory, name)))
        if class_names is not None:
            if sorted(class_names) != subdirs:
                raise ValueError(f"{what}: the `class_names` passed do not match the names of the subdirectories "
                                 f"of {directory!r}. Expected: {subdirs} (in any order), received: "
                                 f"class_names={list(class_names)}")
            subdirs = list(class_names)
        paths, indices = [], []
        for index, subdir in enumerate(subdirs):
            found = _walk(os.path.join(directory, subdir), formats, follow_links)
            paths += found
            indices += [index] * len(found)
        label_array = np.asarray(indices, dtype=np.int32)
        class_names = list(subdirs)
    else:
        if class_names is not None:
            raise ValueError(f"{what}: `class_names` is only valid with labels='inferred'; received "
                             f"labels={labels!r}")
        paths = _walk(directory, formats, follow_links)
        label_array = None
        if labels is not None:
            if len(labels) != len(paths):
                raise ValueError(f"{what}: `labels` must have one label per file: {len(labels)} labels were "
                                 f"passed but {len(paths)} files were found in {directory!r}")
            label_array = np.asarray(labels)
            if label_array.dtype.kind not in "iu":
                raise ValueError(f"{what}: `labels` must be integers; received dtype {label_array.dtype}")
            label_array = label_array.astype(np.int32)
            class_names = [str(c) for c in sorted(set(label_array.tolist()))]
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        if label_array is not None:
            np.random.RandomState(seed).shuffle(label_array)
    return paths, label_array, class_names


def check_split_arguments(validation_split, subset, shuffle, seed, what):
    if validation_split is None:
        if subset is not None:
            raise ValueError(f"{what}: `subset` is set ({subset!r}) but `validation_split` is not; set both or "
                             f"neither")
        return
    if isinstance(validation_split, bool) or not isinstance(validation_split, (int, float)) \
            or not 0 < validation_split < 1:
        raise ValueError(f"{what}: `validation_split` must be a float strictly between 0 and 1; received "
                         f"validation_split={validation_split!r}")
    if subset not in ("training", "validation", "both"):
        raise ValueError(f"{what}: with `validation_split`, `subset` must be 'training', 'validation' or 'both'; "
                         f"received subset={subset!r}")
    if shuffle and seed is None:
        raise ValueError(f"{what}: when using `validation_split` and shuffling the data, you must provide a "
                         f"`seed` so that the training and validation subsets do not overlap")


def split(paths, labels, validation_split, subset, verbose):
    """The training (first) or validation (last ``int(validation_split * n)``) part of the files."""
    if validation_split is None:
        return paths, labels
    n = len(paths)
    n_validation = int(validation_split * n)
    if subset == "training":
        part = slice(0, n - n_validation)
    else:
        part = slice(n - n_validation, n)
    count = part.stop - part.start
    if verbose:
        print(f"Using {count} files for {subset}.")
    return paths[part], (None if labels is None else labels[part])


def encode_labels(labels, label_mode, num_classes, what):
    """The label column as Keras yields it: int32, float32 one-hot, or float32 of shape (n, 1)."""
    if label_mode == "int":
        return labels
    if label_mode == "binary":
        return labels.astype(np.float32).reshape(-1, 1)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(f"{what}: with label_mode='categorical' the labels must lie in [0, {num_classes}); "
                         f"found {labels.min()}..{labels.max()}")
    return np.eye(num_classes, dtype=np.float32)[labels]


def check_binary(label_mode, class_names, what):
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f"{what}: with label_mode='binary' there must be exactly 2 classes; found "
                         f"{len(class_names)}: {class_names}")


def random_seed(shuffle, seed):
    if shuffle and seed is None:
        return int(np.random.randint(1_000_000))
    return seed


def report_found(paths, labels, class_names, verbose):
    if not verbose:
        return
    if labels is None:
        print(f"Found {len(paths)} files.")
    else:
        print(f"Found {len(paths)} files belonging to {len(class_names)} classes.")
