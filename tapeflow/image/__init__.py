"""tf.image: resizing, crops and pads, flips and rotations, colour adjustments and conversions."""
from .color import (adjust_brightness, adjust_contrast, adjust_gamma, convert_image_dtype,  # noqa: F401
                    grayscale_to_rgb, per_image_standardization, rgb_to_grayscale)
from .cropping import (central_crop, crop_to_bounding_box, flip_left_right, flip_up_down,  # noqa: F401
                       pad_to_bounding_box, random_crop, random_flip_left_right, random_flip_up_down,
                       resize_with_crop_or_pad, rot90, stateless_random_crop, stateless_random_flip_left_right,
                       stateless_random_flip_up_down, transpose)
from .resizing import ResizeMethod, resize, resize_with_pad  # noqa: F401
