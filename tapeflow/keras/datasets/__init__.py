"""tf.keras.datasets: loaders for the datasets stored as plain arrays (MNIST, Fashion-MNIST).

tapeflow does not download: ``load_data`` reads the file Keras caches under ``~/.keras/datasets`` (put there
by Keras or by hand, from the URL the error message gives). Files are read as data (never unpickled).
"""
from . import fashion_mnist, mnist  # noqa: F401
