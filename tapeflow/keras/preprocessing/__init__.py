"""tf.keras.preprocessing as Keras 3 keeps it: the image and sequence helpers and the dataset builders
(``keras.preprocessing.text`` and ``skipgrams`` are gone from Keras 3 and are not provided)."""
from tapeflow.layers.utils.image_dataset import image_dataset_from_directory  # noqa: F401
from tapeflow.layers.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from tapeflow.layers.utils.timeseries import timeseries_dataset_from_array  # noqa: F401

from . import image, sequence  # noqa: F401
