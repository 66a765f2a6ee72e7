"""What a saved graph node may hold: each op's attributes and their kinds, and its input count.

A loaded node's attributes become keyword arguments of the op's forward, so a file
must not be able to pass anything the op was not written for (numpy's ``out=``,
a list where a flag goes, a shape with 10**12 elements). Ops not listed here take
no attributes; their number of inputs comes from the forward's signature.
A checker returns None for a good value, or what is wrong with it.
"""
import inspect
import math

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.ops.bytes_ops import RAW_DTYPES

MAX_RANK = 64
MAX_DIMENSION = 2 ** 40      # one dimension of a declared shape (variables and inputs, whose data is in the file)
MAX_ELEMENTS = 2 ** 28       # the largest tensor an attribute (a shape, a depth, a count) may ask an op to make
MAX_STRING = 4096
INT64 = (-2 ** 63, 2 ** 63)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def int_in(lo, hi):
    def check(value):
        if not _is_int(value):
            return f"expected an integer, got {describe(value)}"
        if not lo <= value < hi:
            return f"{value} is outside [{lo}, {hi})"
        return None
    return check


def _int_list(item, max_len=MAX_RANK):
    def check(value):
        if not isinstance(value, list):
            return f"expected a list of integers, got {describe(value)}"
        if len(value) > max_len:
            return f"has {len(value)} entries, more than {max_len}"
        for i, v in enumerate(value):
            problem = item(v)
            if problem:
                return f"entry {i}: {problem}"
        return None
    return check


def _bounded_product(check_list, what="elements"):
    def check(value):
        problem = check_list(value)
        if problem:
            return problem
        if math.prod(v for v in value if v > 0) > MAX_ELEMENTS:
            return f"{value} asks for more than {MAX_ELEMENTS} {what}"
        return None
    return check


def describe(value):
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def boolean(value):
    return None if isinstance(value, bool) else f"expected true or false, got {describe(value)}"


def number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected a number, got {describe(value)}"
    if _is_int(value) and not INT64[0] <= value < INT64[1]:
        return f"{value} does not fit in 64 bits"
    return None


def scalar(value):
    """A value of any dtype (one_hot's on/off values): a bool or a number."""
    return None if isinstance(value, bool) else number(value)


def dtype_name(value):
    if not isinstance(value, str) or value == "string" or value not in dtypes._BY_NAME:
        return f"expected a numeric dtype name, got {describe(value)}"
    return None


def integer_dtype(value):
    return dtype_name(value) or (None if dtypes.as_dtype(value).is_integer else f"{value!r} is not an integer dtype")


def floating_dtype(value):
    return dtype_name(value) or (None if dtypes.as_dtype(value).is_floating else f"{value!r} is not a floating dtype")


def string(value):
    if not isinstance(value, str):
        return f"expected a string, got {describe(value)}"
    return None if len(value) <= MAX_STRING else f"a string of {len(value)} characters is too long"


def regex(value):
    """A string that compiles as a regular expression (on bytes, as the string ops run it)."""
    import re
    problem = string(value)
    if problem:
        return problem
    try:
        re.compile(value.encode("utf-8", "surrogateescape"))
    except (re.error, UnicodeEncodeError) as err:
        return f"{value!r} is not a valid regular expression: {err}"
    return None


def one_of(*choices):
    def check(value):
        return None if isinstance(value, str) and value in choices else \
            f"expected one of {list(choices)}, got {describe(value)}"
    return check


def seed(value):
    return None if value is None else integer(value)


def equation(value):
    problem = string(value)
    if problem:
        return problem
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.-> ")
    bad = sorted(set(value) - allowed)
    return f"einsum equation has characters {bad}" if bad else None


def permutation(value):
    problem = _int_list(int_in(0, MAX_RANK))(value)
    if problem:
        return problem
    return None if sorted(value) == list(range(len(value))) else f"{value} is not a permutation"


def paddings(value):
    if not isinstance(value, list) or len(value) > MAX_RANK:
        return f"expected at most {MAX_RANK} [before, after] pairs, got {describe(value)}"
    for i, pair in enumerate(value):
        problem = _int_list(count, max_len=2)(pair)
        if problem or len(pair) != 2:
            return f"entry {i}: expected [before, after] with non-negative integers, got {describe(pair)}"
    if math.prod(1 + a + b for a, b in value) > MAX_ELEMENTS:
        return f"{value} pads by more than {MAX_ELEMENTS} elements"
    return None


def _index_code(code):
    if not isinstance(code, list) or not code or not isinstance(code[0], str):
        return f"expected an index code such as [\"int\", 0], got {describe(code)}"
    kind, args = code[0], code[1:]
    if kind in ("newaxis", "ellipsis"):
        return None if not args else f"{kind} takes no values"
    if kind == "int":
        return None if len(args) == 1 and _is_int(args[0]) and INT64[0] <= args[0] < INT64[1] else \
            f"expected [\"int\", integer], got {describe(code)}"
    if kind == "slice":
        if len(args) != 3 or any(a is not None and integer(a) for a in args):
            return f"expected [\"slice\", start, stop, step] with integers or null, got {describe(code)}"
        return "a slice step of 0" if args[2] == 0 else None
    return f"unknown index kind {kind!r}"


def slice_key(value):
    if not isinstance(value, list) or len(value) > MAX_RANK:
        return f"expected a list of at most {MAX_RANK} index codes, got {describe(value)}"
    for i, code in enumerate(value):
        problem = _index_code(code)
        if problem:
            return f"entry {i}: {problem}"
    if sum(1 for code in value if code[0] == "ellipsis") > 1:
        return "more than one ellipsis"
    return None


def subgraph(value):
    """A control-flow node's branch or loop body; graph_validation checks the graph inside."""
    if not isinstance(value, dict) or set(value) != {"subgraph"} or not isinstance(value["subgraph"], dict):
        return f"expected {{\"subgraph\": {{...}}}}, got {describe(value)}"
    return None


integer = int_in(*INT64)
axis = int_in(-MAX_RANK, MAX_RANK)
count = int_in(0, MAX_ELEMENTS + 1)
axes = _int_list(axis)
shape = _bounded_product(_int_list(count))
reshape = _bounded_product(_int_list(int_in(-1, MAX_ELEMENTS + 1)))
split_sizes = _int_list(count, max_len=MAX_ELEMENTS)
multiples = _bounded_product(_int_list(count), what="copies")


class OpSchema:
    """``inputs``: an exact count (None: from the forward's signature); ``attrs``: name -> checker;
    ``optional``: the names among them that may be left out."""

    def __init__(self, inputs=None, optional=(), **attrs):
        self.inputs = inputs
        self.attrs = attrs
        self.optional = frozenset(optional)


_REDUCTION = OpSchema(axes=axes, keepdims=boolean)
_ARG_REDUCTION = OpSchema(axis=axis, output_type=integer_dtype)
_RANDOM_FLOAT = OpSchema(shape=shape, dtype=floating_dtype, seed=seed, mean=number, stddev=number,
                         optional=("mean", "stddev"))
_ACTIVATION, _ACTIVATION_GRAD = OpSchema(inputs=1), OpSchema(inputs=2)
_LEAKY = OpSchema(inputs=1, alpha=number)
_LEAKY_GRAD = OpSchema(inputs=2, alpha=number)

window = _int_list(int_in(1, MAX_ELEMENTS + 1), max_len=3)     # spatial sizes, strides, dilations
_CONV_ATTRS = dict(strides=window, dilations=window, padding=paddings, groups=int_in(1, MAX_ELEMENTS + 1))
_CONV = OpSchema(**_CONV_ATTRS)
_CONV_INPUT = OpSchema(input_spatial=window, **_CONV_ATTRS)
_CONV_FILTER = OpSchema(filter_spatial=window, **_CONV_ATTRS)
_POOL = OpSchema(ksize=window, strides=window, padding=paddings)
_STATELESS = OpSchema(shape=shape, dtype=dtype_name)
_image_size = _bounded_product(_int_list(int_in(1, MAX_ELEMENTS + 1), max_len=2), what="pixels")


def image_size(value):
    """A resize's [height, width]: two positive integers."""
    return _image_size(value) or (None if len(value) == 2 else f"expected [height, width], got {describe(value)}")


_RESIZE = OpSchema(inputs=1, size=image_size, align_corners=boolean, half_pixel_centers=boolean)

def print_template(value):
    """tf.print's pieces: strings, and None where a tensor input goes."""
    if not isinstance(value, list) or len(value) > MAX_ELEMENTS:
        return f"expected a list of strings and nulls, got {describe(value)}"
    for i, piece in enumerate(value):
        problem = None if piece is None else string(piece)
        if problem:
            return f"entry {i}: {problem}"
    return None


SCHEMAS = {
    **{op: _REDUCTION for op in ("Sum", "Mean", "Max", "Min", "Prod", "Any", "All")},
    "ArgMax": _ARG_REDUCTION, "ArgMin": _ARG_REDUCTION,
    "ArgSort": OpSchema(axis=axis, descending=boolean),
    "BroadcastTo": OpSchema(shape=shape),
    "Cast": OpSchema(DstT=dtype_name),
    "ConcatV2": OpSchema(axis=axis),
    "Pack": OpSchema(axis=axis),
    "Unpack": OpSchema(axis=axis),
    "SplitV": OpSchema(sizes=split_sizes, axis=axis),
    "Cumsum": OpSchema(axis=axis, exclusive=boolean, reverse=boolean),
    "DropoutMask": OpSchema(shape=shape, rate=number, dtype=floating_dtype, seed=seed),
    "Einsum": OpSchema(equation=equation),
    "Fill": OpSchema(dims=shape),
    "GatherV2": OpSchema(axis=axis),
    "Gelu": OpSchema(approximate=boolean),
    "GeluGrad": OpSchema(approximate=boolean),
    "Softmax": OpSchema(axis=axis),
    "LogSoftmax": OpSchema(axis=axis),
    "MatMul": OpSchema(transpose_a=boolean, transpose_b=boolean, optional=("transpose_a", "transpose_b")),
    "MatrixInverse": OpSchema(adjoint=boolean),
    "MatrixSolve": OpSchema(adjoint=boolean),
    "Multinomial": OpSchema(num_samples=count, dtype=integer_dtype, seed=seed),
    "OneHot": OpSchema(depth=count, on_value=scalar, off_value=scalar, axis=axis, dtype=dtype_name),
    "PadV2": OpSchema(paddings=paddings, mode=one_of("constant", "reflect", "symmetric")),
    "RandomStandardNormal": _RANDOM_FLOAT,
    "TruncatedNormal": _RANDOM_FLOAT,
    "RandomUniform": OpSchema(shape=shape, dtype=floating_dtype, seed=seed, minval=number, maxval=number,
                              optional=("minval", "maxval")),
    "RandomUniformInt": OpSchema(shape=shape, dtype=integer_dtype, seed=seed, minval=integer, maxval=integer),
    "RandomShuffle": OpSchema(seed=seed),
    "Reshape": OpSchema(shape=reshape),
    "StridedSlice": OpSchema(key=slice_key),
    "StridedSliceGrad": OpSchema(shape=shape, key=slice_key),
    "Tile": OpSchema(multiples=multiples),
    "Transpose": OpSchema(perm=permutation),
    "UnsortedSegmentSum": OpSchema(num_segments=count, axis=axis),
    "IdentityN": OpSchema(_gradient_op_type=string, optional=("_gradient_op_type",)),
    "If": OpSchema(then_branch=subgraph, else_branch=subgraph),
    "While": OpSchema(cond=subgraph, body=subgraph),
    "Shape": OpSchema(inputs=1, out_type=integer_dtype),
    "Range": OpSchema(inputs=3, dtype=dtype_name),
    "TensorListReserve": OpSchema(inputs=1, dtype=dtype_name, element_shape=shape),
    "TensorListWrite": OpSchema(inputs=3, dynamic_size=boolean, optional=("dynamic_size",)),
    "ZerosLike": OpSchema(inputs=1, dtype=dtype_name, optional=("dtype",)),
    "OnesLike": OpSchema(inputs=1, dtype=dtype_name, optional=("dtype",)),
    "Conv": _CONV, "ConvBackpropInput": _CONV_INPUT, "ConvBackpropFilter": _CONV_FILTER,
    "ConvWindows": OpSchema(inputs=1, kernel=window, strides=window, dilations=window, padding=paddings),
    "ConvOfWindows": OpSchema(inputs=3, strides=window, dilations=window, padding=paddings),
    "ConvWindowsBackprop": OpSchema(inputs=1, kernel=window, strides=window, dilations=window, padding=paddings,
                                    input_spatial=window),
    **{op: _POOL for op in ("MaxPool", "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool")},
    "AvgPoolGrad": OpSchema(ksize=window, strides=window, padding=paddings, input_spatial=window),
    "Cumprod": OpSchema(axis=axis),
    "DynamicSlice": OpSchema(sizes=shape),
    "ScatterUpdateWinners": OpSchema(shape=shape),
    "TensorScatterUpdate": OpSchema(core_rank=int_in(0, MAX_RANK + 1)),
    **{op: OpSchema(core_rank=int_in(0, MAX_RANK + 1)) for op in ("TensorScatterAdd", "TensorScatterSub",
                                                                  "TensorScatterMin", "TensorScatterMax")},
    "GatherNd": OpSchema(batch_dims=int_in(0, MAX_RANK + 1), core_rank=int_in(0, MAX_RANK + 1)),
    "ScatterNd": OpSchema(shape=shape),
    **{op: _STATELESS for op in ("StatelessUniformUnit", "StatelessStandardNormal",
                                 "StatelessTruncatedStandardNormal", "StatelessGamma", "StatelessBinomial",
                                 "StatelessBeta")},
    "StatelessUniformInt": OpSchema(shape=shape, dtype=integer_dtype, minval=integer, maxval=integer),
    "StatelessUniformFullInt": OpSchema(shape=shape, dtype=integer_dtype),
    "StatelessPermutation": OpSchema(n=count),
    "StatelessMultinomial": OpSchema(num_samples=count, dtype=integer_dtype),
    "StatelessDropoutMask": OpSchema(shape=shape, rate=number, dtype=floating_dtype),
    "PrintV2": OpSchema(template=print_template, sep=string, end=string, stream=one_of("stderr", "stdout"),
                        summarize=int_in(-1, MAX_ELEMENTS + 1)),
    "CheckNumerics": OpSchema(message=string),
    "StringJoin": OpSchema(separator=string),
    "ReduceJoin": OpSchema(inputs=1, axes=axes, keepdims=boolean, separator=string),
    "StringLength": OpSchema(inputs=1, unit=one_of("BYTE", "UTF8_CHAR")),
    "StringLower": OpSchema(inputs=1, encoding=one_of("", "utf-8")),
    "StringUpper": OpSchema(inputs=1, encoding=one_of("", "utf-8")),
    "StaticRegexReplace": OpSchema(inputs=1, pattern=regex, rewrite=string, replace_global=boolean),
    "StaticRegexFullMatch": OpSchema(inputs=1, pattern=regex),
    "StringToNumber": OpSchema(inputs=1, out_type=one_of("float32", "float64", "int32", "int64")),
    "StringToHashBucketFast": OpSchema(inputs=1, num_buckets=int_in(1, 2 ** 63)),
    "Substr": OpSchema(inputs=3, unit=one_of("BYTE", "UTF8_CHAR")),
    "AsString": OpSchema(inputs=1, precision=int_in(-1, 1000), scientific=boolean, shortest=boolean,
                         width=int_in(-1, 1000), fill=string),
    "StringFormat": OpSchema(template=string, placeholder=string, summarize=int_in(-1, MAX_ELEMENTS + 1)),
    "StringSplitFlat": OpSchema(inputs=1, sep=string, maxsplit=int_in(-1, 2 ** 31)),
    "UnicodeSplitFlat": OpSchema(inputs=1, unit=one_of("BYTE", "CHAR", "CODEPOINT")),
    "DecodeRaw": OpSchema(inputs=1, out_type=one_of(*RAW_DTYPES), little_endian=boolean,
                          fixed_length=int_in(-1, 2 ** 31)),
    "EncodeBase64": OpSchema(inputs=1, pad=boolean), "DecodeBase64": OpSchema(inputs=1),
    "SerializeTensor": OpSchema(inputs=1), "ParseTensor": OpSchema(inputs=1, out_type=dtype_name),
    "CollectiveAllReduce": OpSchema(group_key=int_in(0, 2 ** 31), reduction=one_of("SUM", "MEAN")),
    "Assert": OpSchema(message=string, summarize=count),
    **{op: _RESIZE for op in ("ResizeBilinear", "ResizeBilinearGrad", "ResizeNearestNeighbor",
                              "ResizeNearestNeighborGrad", "ResizeBicubic", "ResizeBicubicGrad", "ResizeArea")},
    "AdjustContrastv2": OpSchema(inputs=2), "AdjustHue": OpSchema(inputs=2), "AdjustSaturation": OpSchema(inputs=2),
    "ImageProjectiveTransformV3": OpSchema(inputs=3, interpolation=one_of("nearest", "bilinear"),
                                           fill_mode=one_of("constant", "nearest", "wrap", "mirror", "reflect")),
    "ImageProjectiveTransformV3Grad": OpSchema(inputs=2, interpolation=one_of("nearest", "bilinear"),
                                               fill_mode=one_of("constant", "nearest", "wrap", "mirror",
                                                                "reflect")),
    "FusedBatchNormTraining": OpSchema(epsilon=number),
    "FusedBatchNormGrad": OpSchema(epsilon=number),
    "RNNSequence": OpSchema(cell=one_of("lstm", "gru", "gru_v1", "simple"), go_backwards=boolean),
    "RNNSequenceGrad": OpSchema(cell=one_of("lstm", "gru", "gru_v1", "simple"), go_backwards=boolean),
    "LeakyRelu": _LEAKY, "LeakyReluGrad": _LEAKY_GRAD,
    **{op: _ACTIVATION for op in ("Relu", "Relu6", "Elu", "Selu", "Sigmoid", "Softplus", "Softsign")},
    **{op: _ACTIVATION_GRAD for op in ("ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SigmoidGrad",
                                       "SoftplusGrad", "SoftsignGrad")},
}
_NO_ATTRIBUTES = OpSchema()


def _update(inputs, **hyper):
    """An optimizer update (tapeflow/ops/training_ops.py): its hyper-parameters and the weight decay."""
    return OpSchema(inputs=inputs, decay=boolean, weight_decay=number, **hyper)


SCHEMAS.update({
    "ApplySGD": _update(2, momentum=number, nesterov=boolean),
    "ApplyAdam": _update(3, beta_1=number, beta_2=number, epsilon=number),
    "ApplyRMSProp": _update(2, rho=number, epsilon=number, momentum=number, centered=boolean),
    "ApplyAdagrad": _update(2, epsilon=number),
    "ApplyAdadelta": _update(2, rho=number, epsilon=number),
    "ApplyAdamax": _update(3, beta_1=number, beta_2=number, epsilon=number),
    "ApplyNadam": _update(4, beta_1=number, beta_2=number, epsilon=number),
    "ApplyLion": _update(2, beta_1=number, beta_2=number),
    "UpdateNadamProduct": OpSchema(inputs=1, beta_1=number),
    "ApplyMovingAverage": OpSchema(inputs=2, momentum=number),
    "AccumulateGradient": OpSchema(inputs=1),
    "AssignVariable": OpSchema(inputs=1),
})


def _nullable(check):
    return lambda value: None if value is None else check(value)


def _numbers(value):
    if not isinstance(value, list) or len(value) > MAX_ELEMENTS:
        return f"expected a list of numbers, got {describe(value)}"
    problems = [number(v) for v in value]
    return next((p for p in problems if p), None)


_DECAY = dict(inputs=1, initial_learning_rate=number, decay_steps=number, dtype=floating_dtype)
SCHEMAS.update({   # learning-rate schedules (tapeflow/ops/schedule_ops.py)
    "ExponentialDecaySchedule": OpSchema(decay_rate=number, staircase=boolean, **_DECAY),
    "InverseTimeDecaySchedule": OpSchema(decay_rate=number, staircase=boolean, **_DECAY),
    "PolynomialDecaySchedule": OpSchema(end_learning_rate=number, power=number, cycle=boolean, **_DECAY),
    "CosineDecaySchedule": OpSchema(alpha=number, warmup_target=_nullable(number), warmup_steps=number, **_DECAY),
    "CosineDecayRestartsSchedule": OpSchema(inputs=1, initial_learning_rate=number, first_decay_steps=number,
                                            t_mul=number, m_mul=number, alpha=number, dtype=floating_dtype),
    "PiecewiseConstantSchedule": OpSchema(inputs=1, boundaries=_numbers, values=_numbers, dtype=floating_dtype),
})


def schema_of(op_type):
    return SCHEMAS.get(op_type, _NO_ATTRIBUTES)


def input_arity(forward, schema):
    """(minimum, maximum or None) number of tensor inputs of an op, from its schema or its forward's
    positional parameters without defaults (attributes excluded); None when it cannot be known."""
    if schema.inputs is not None:
        return schema.inputs, schema.inputs
    try:
        parameters = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty and p.name not in schema.attrs]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    return len(positional), None if variadic else len(positional)


def numpy_dtype(name):
    return np.dtype(dtypes.as_dtype(name)._np)
