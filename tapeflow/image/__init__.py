"""tf.image: resizing, crops and pads, flips and rotations, colour adjustments and conversions,
quality measures and patches."""
from .color import (adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation,  # noqa: F401
                    convert_image_dtype, grayscale_to_rgb, hsv_to_rgb, per_image_standardization, rgb_to_grayscale,
                    rgb_to_hsv)
from .cropping import (central_crop, crop_to_bounding_box, flip_left_right, flip_up_down,  # noqa: F401
                       pad_to_bounding_box, random_crop, random_flip_left_right, random_flip_up_down,
                       resize_with_crop_or_pad, rot90, stateless_random_crop, stateless_random_flip_left_right,
                       stateless_random_flip_up_down, transpose)
from .patches import extract_patches  # noqa: F401
from .quality import image_gradients, psnr, ssim, total_variation  # noqa: F401
from .random_adjust import (random_brightness, random_contrast, random_hue, random_saturation,  # noqa: F401
                            stateless_random_brightness, stateless_random_contrast)
from .resizing import ResizeMethod, resize, resize_with_pad  # noqa: F401
