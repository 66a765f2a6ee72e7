"""Image ops: resizing, projective transforms, contrast and HSV colour (channels-last images).

    ResizeBilinear(x), ResizeBicubic(x),      resample (..., H, W, C) to (..., h, w, C), one spatial
    ResizeNearestNeighbor(x), ResizeArea(x)   axis after the other (tapeflow.kernels.image: the taps)
    Resize*Grad(g)                            the adjoint: linear in g, its gradient is the forward
    ImageProjectiveTransformV3(x, t, fill)    each output pixel reads x where the map t sends it
    ImageProjectiveTransformV3Grad(g, t)      its adjoint in x
    AdjustContrastv2, RGBToHSV, HSVToRGB, AdjustHue, AdjustSaturation

Resizes and transforms are linear in the image, so each op and its adjoint are each other's
gradient and every derivative order stays in the family. ResizeArea and the colour ops have no
gradient, as in TensorFlow (asking for one raises LookupError).
"""
import numpy as np

from ..framework.batching import declare, elementwise
from ..framework.errors import InvalidArgumentError
from ..framework.tensor import Tensor
from .common import RegisterGradient, execute, register_op


def _kernels():
    from ..kernels import image
    return image


_H, _W = -3, -2     # spatial axes of a channels-last image (any leading axes: batch, stacked cotangents)


def _axis_order(method):
    """The order TensorFlow's kernels interpolate in (which decides the float rounding): bicubic
    along H first, the others along W first."""
    return (_H, _W) if method == "bicubic" else (_W, _H)


def _resample(x, size, method, align_corners, half_pixel_centers):
    K = _kernels()
    out = x
    for axis in _axis_order(method):
        n_out = size[0] if axis == _H else size[1]
        n_in = out.shape[axis]
        if method == "bilinear":
            out = K.lerp_axis(out, *K.linear_taps(n_in, n_out, align_corners, half_pixel_centers), axis)
        elif method == "nearest":
            out = out.take(K.nearest_taps(n_in, n_out, align_corners, half_pixel_centers), axis)
        elif method == "bicubic":
            out = K.taps_axis(out, *K.cubic_taps(n_in, n_out, align_corners, half_pixel_centers), axis)
        else:
            idx, weights, valid, _ = K.area_taps(n_in, n_out)
            out = K.taps_axis(out, idx, weights, axis, valid)
    if method == "area":
        sh = K.area_taps(x.shape[_H], size[0])[3]
        sw = K.area_taps(x.shape[_W], size[1])[3]
        out = out * out.dtype.type(np.float32(1.0 / np.float64(sh * sw)))
    return out


def _resample_adjoint(g, size, method, align_corners, half_pixel_centers):
    """The adjoint of _resample onto an image of spatial ``size``: along H, then along W."""
    K = _kernels()
    out = g
    for axis in reversed(_axis_order(method)):
        n_in = size[0] if axis == _H else size[1]
        n_out = out.shape[axis]
        if method == "bilinear":
            out = K.lerp_axis_adjoint(out, *K.linear_taps(n_in, n_out, align_corners, half_pixel_centers),
                                      n_in, axis)
        elif method == "nearest":
            out = K.nearest_axis_adjoint(out, K.nearest_taps(n_in, n_out, align_corners, half_pixel_centers), n_in,
                                         axis)
        else:
            out = K.taps_axis_adjoint(out, *K.cubic_taps(n_in, n_out, align_corners, half_pixel_centers),
                                      n_in, axis)
    return out


_RESIZE_OPS = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor", "bicubic": "ResizeBicubic",
               "area": "ResizeArea"}


def _register_resize(method, op_type):
    @register_op(op_type)
    def _forward(x, size, align_corners, half_pixel_centers):
        return _resample(x, size, method, align_corners, half_pixel_centers)

    if method == "area":
        return

    @register_op(op_type + "Grad")
    def _adjoint(g, size, align_corners, half_pixel_centers):
        return _resample_adjoint(g, size, method, align_corners, half_pixel_centers)

    @RegisterGradient(op_type)
    def _grad(op, grad):
        x = op.inputs[0]._value
        return execute(op_type + "Grad", (grad,), dict(op.attrs, size=(x.shape[_H], x.shape[_W])))

    @RegisterGradient(op_type + "Grad")
    def _grad_of_adjoint(op, grad):
        g = op.inputs[0]._value
        return execute(op_type, (grad,), dict(op.attrs, size=(g.shape[_H], g.shape[_W])))


for _method, _op_type in _RESIZE_OPS.items():
    _register_resize(_method, _op_type)

def _per_image(op, batched):
    """Ops that work on each image of a batch on its own keep rows independent when axis 0 is the batch
    (rank 4 or more), not when it is the height of a single image."""
    return op.outputs[0]._value.ndim >= 4 and elementwise(op, batched)


declare(_per_image, *_RESIZE_OPS.values(), *(t + "Grad" for m, t in _RESIZE_OPS.items() if m != "area"),
        "AdjustContrastv2", "ImageProjectiveTransformV3", "ImageProjectiveTransformV3Grad")


def resize_image(images, size, method, align_corners=False, half_pixel_centers=True):
    """Resamples a (N, H, W, C) tensor; a float tensor for every method but nearest, which keeps
    any dtype. The caller converts dtypes."""
    x = images
    if method != "nearest" and x._value.dtype.kind != "f":
        raise InvalidArgumentError(f"resize: the {method} method needs a float image, got {x.dtype.name}")
    size = (int(size[0]), int(size[1]))
    if x._value.shape[_H] == 0 or x._value.shape[_W] == 0:
        raise InvalidArgumentError(f"resize: the input image has an empty spatial dimension: shape {x.shape}")
    return execute(_RESIZE_OPS[method], (x,), {"size": size, "align_corners": bool(align_corners),
                                              "half_pixel_centers": bool(half_pixel_centers)})


# -------------------------------------------------------------- contrast ---
@register_op("AdjustContrastv2")
def _adjust_contrast_fwd(images, contrast_factor):
    """Per image and channel: (x - mean) * factor + mean, the mean over the spatial axes."""
    x = images.astype(np.float32) if images.dtype != np.float32 else images
    mean = x.mean(axis=(_H, _W), keepdims=True, dtype=np.float32)
    return ((x - mean) * np.float32(contrast_factor) + mean).astype(np.float32)


def adjust_contrast(images, contrast_factor):
    return execute("AdjustContrastv2", (images, contrast_factor))


# ------------------------------------------------------- projective transform ---
def _over_stacks(a, transforms, fn):
    """``fn(batch, transforms)`` with any leading axes of ``a`` (stacked cotangents) folded into the batch."""
    if a.ndim == 4:
        return fn(a, transforms)
    lead = a.shape[:-4]
    per_image = np.broadcast_to(transforms, (a.shape[-4], 8))
    out = fn(a.reshape((-1,) + a.shape[-3:]), np.tile(per_image, (int(np.prod(lead)), 1)))
    return out.reshape(a.shape)


@register_op("ImageProjectiveTransformV3")
def _projective_fwd(images, transforms, fill_value, interpolation, fill_mode):
    return _over_stacks(images, transforms,
                        lambda a, t: _kernels().project(a, t, fill_value, fill_mode, interpolation))


@register_op("ImageProjectiveTransformV3Grad")
def _projective_adjoint_fwd(grads, transforms, interpolation, fill_mode):
    return _over_stacks(grads, transforms,
                        lambda a, t: _kernels().project_adjoint(a, t, fill_mode, interpolation))


@RegisterGradient("ImageProjectiveTransformV3")
def _projective_grad(op, grad):
    images, transforms, _ = op.inputs
    attrs = {"interpolation": op.attrs["interpolation"], "fill_mode": op.attrs["fill_mode"]}
    return execute("ImageProjectiveTransformV3Grad", (grad, transforms), attrs), None, None


@RegisterGradient("ImageProjectiveTransformV3Grad")
def _projective_adjoint_grad(op, grad):
    _, transforms = op.inputs
    zero = Tensor(np.zeros((), grad._value.dtype))
    return execute("ImageProjectiveTransformV3", (grad, transforms, zero), dict(op.attrs)), None


_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def projective_transform(images, transforms, interpolation="bilinear", fill_mode="constant", fill_value=0.0):
    """Transforms a float (N, H, W, C) batch by (N, 8) or (1, 8) output-to-input maps (tf.raw_ops'
    ImageProjectiveTransformV3, Keras's affine_transform)."""
    interpolation, fill_mode = interpolation.lower(), fill_mode.lower()
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Invalid value for argument `interpolation`. Expected one of ['nearest', 'bilinear']. "
                         f"Received: interpolation={interpolation}")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected one of {list(_FILL_MODES)}. "
                         f"Received: fill_mode={fill_mode}")
    x = images
    if x._value.ndim != 4 or x._value.dtype.kind != "f":
        raise InvalidArgumentError(f"projective transform: images must be a float (N, H, W, C) tensor, got "
                                   f"{x.dtype.name} of shape {x.shape}")
    t = transforms
    if t._value.ndim != 2 or t._value.shape[1] != 8 or t._value.shape[0] not in (1, x._value.shape[0]):
        raise InvalidArgumentError(f"projective transform: transforms must have shape (N, 8) or (1, 8) for "
                                   f"{x._value.shape[0]} images, got {t.shape}")
    fill = Tensor(np.asarray(fill_value, x._value.dtype))
    return execute("ImageProjectiveTransformV3", (x, t, fill),
                   {"interpolation": interpolation, "fill_mode": fill_mode})


# ------------------------------------------------------------ HSV colour ---
# None of these has a gradient in TensorFlow either (asking for one raises LookupError).
@register_op("RGBToHSV")
def _rgb_to_hsv_fwd(images):
    return _kernels().rgb_to_hsv(images)


@register_op("HSVToRGB")
def _hsv_to_rgb_fwd(images):
    return _kernels().hsv_to_rgb(images)


@register_op("AdjustHue")
def _adjust_hue_fwd(images, delta):
    return _kernels().adjust_hue(images, delta)


@register_op("AdjustSaturation")
def _adjust_saturation_fwd(images, scale):
    return _kernels().adjust_saturation(images, scale)


declare(elementwise, "RGBToHSV", "HSVToRGB", "AdjustHue", "AdjustSaturation")     # pixel by pixel


def colour_op(op_type, images, *scalars):
    if images._value.ndim < 1 or images._value.shape[-1] != 3:
        raise InvalidArgumentError(f"{op_type}: the last dimension must be 3 (RGB or HSV), got shape {images.shape}")
    return execute(op_type, (images,) + scalars)
