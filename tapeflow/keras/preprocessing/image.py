"""tf.keras.preprocessing.image: the image helpers of keras.utils."""
from tapeflow.layers.utils.image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401
