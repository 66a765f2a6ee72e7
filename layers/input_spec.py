"""InputSpec: what a layer accepts (rank, axis sizes, dtype), checked on every call."""


class InputSpec:
    """Constraints on one input of a layer, as ``keras.InputSpec``."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.axes = {int(k): v for k, v in (axes or {}).items()}
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim is not None else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed value: {max_dim}")

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim),
                                         ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim),
                                         ("axes", self.axes or None)) if v is not None]
        return f"InputSpec({', '.join(parts)})"


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises a ValueError naming the layer, the input and the broken constraint."""
    if input_spec is None:
        return
    specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
    if isinstance(inputs, (list, tuple)) and (len(specs) > 1 or len(inputs) == 1 and isinstance(input_spec, list)):
        flat = list(inputs)
    else:
        flat = [inputs]
    if len(flat) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(flat)} input '
                         f"tensors. Inputs received: {flat}")
    for index, (x, spec) in enumerate(zip(flat, specs)):
        if spec is None or x is None:
            continue
        shape = tuple(getattr(x, "shape", ()))
        shape = tuple(None if d is None else int(d) for d in shape)
        where = f'Input {index} of layer "{layer_name}" is incompatible with the layer'
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and len(shape) != spec.ndim:
            raise ValueError(f"{where}: expected ndim={spec.ndim}, found ndim={len(shape)}. "
                             f"Full shape received: {shape}")
        if spec.max_ndim is not None and len(shape) > spec.max_ndim:
            raise ValueError(f"{where}: expected max_ndim={spec.max_ndim}, found ndim={len(shape)}. "
                             f"Full shape received: {shape}")
        if spec.min_ndim is not None and len(shape) < spec.min_ndim:
            raise ValueError(f"{where}: expected min_ndim={spec.min_ndim}, found ndim={len(shape)}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None:
            dtype = getattr(getattr(x, "dtype", None), "name", getattr(x, "dtype", None))
            if dtype != spec.dtype:
                raise ValueError(f"{where}: expected dtype={spec.dtype}, found dtype={dtype}")
        for axis, value in spec.axes.items():
            if value is None:
                continue
            try:
                actual = shape[axis]
            except IndexError:
                actual = None
            if actual is not None and actual != value:
                raise ValueError(f"{where}: expected axis {axis} of input shape to have value {value}, but "
                                 f"received input with shape {shape}")
        if spec.shape is not None:
            for expected, actual in zip(spec.shape, shape):
                if expected is not None and actual is not None and expected != actual:
                    raise ValueError(f"{where}: expected shape={spec.shape}, found shape={shape}")
