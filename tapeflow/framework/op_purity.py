"""Which ops are pure: the property graph passes and the jit compiler rely on.

An op is pure when its outputs are a function of its input values and attributes
only, and computing them is all it does: no variable read or write, no printing,
no check whose failure is the point (Assert, CheckNumerics), no random draw from
hidden state. Only pure nodes may be removed when unused, merged with an equal
node, or replaced by the constant they compute. (A pure op that would raise on
some input, such as a singular MatrixInverse, may still be pruned when nothing
reads it, as TensorFlow prunes it.)

Purity is declared, never guessed: an op is impure unless it is listed below or
registered with ``register_op(..., pure=True)``. A new stateful op (ApplyAdam,
a summary write) is therefore impure by default and no pass can drop it. An op
with an ``at_trace`` side effect is impure even if listed. Variable reads and
assigns and deferred Python calls are graph node kinds, not ops: never pure.

The list, rather than a ``pure=True`` on each of the ~160 registrations, keeps
the declaration for the existing library in one reviewable place; ops added
later declare themselves at registration.
"""
from .recording import _FORWARDS, _TRACE_FORWARDS, DECLARED_PURE

_ELEMENTWISE_UNARY = (
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu", "Erf", "Erfinv",
    "Exp", "Expm1", "Floor", "Gelu", "Invert", "IsFinite", "IsInf", "IsNan", "LeakyRelu", "Log", "Log1p",
    "LogicalNot", "Neg", "Reciprocal", "Relu", "Relu6", "Rint", "Round", "Rsqrt", "Selu", "Sigmoid", "Sign",
    "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Square", "Tan", "Tanh", "Cast", "Conj", "Real", "Imag",
    "Identity", "StopGradient",
)
_ELEMENTWISE_BINARY = (
    "AddV2", "Sub", "Mul", "RealDiv", "DivNoNan", "FloorDiv", "FloorMod", "Pow", "SquaredDifference",
    "Maximum", "Minimum", "Atan2", "Complex", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less",
    "LessEqual", "LogicalAnd", "LogicalOr", "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "LeftShift", "RightShift", "EluGrad", "GeluGrad", "LeakyReluGrad", "ReciprocalGrad", "Relu6Grad",
    "ReluGrad", "RsqrtGrad", "SeluGrad", "SigmoidGrad", "SoftplusGrad", "SoftsignGrad", "SqrtGrad",
    "TanhGrad", "ClipByValue", "SelectV2", "AddN",
)
_OTHER = (
    # array manipulation
    "BroadcastTo", "ConcatV2", "DynamicSlice", "DynamicUpdateSlice", "Fill", "GatherV2", "IdentityN", "OneHot",
    "Pack", "PadV2", "Reshape", "ScatterUpdateWinners", "SplitV", "StridedSlice", "StridedSliceGrad",
    "TensorScatterUpdate", "Tile", "Transpose", "Unpack", "UnsortedSegmentSum", "Where",
    # reductions, scans, sorting
    "All", "Any", "ArgMax", "ArgMin", "ArgSort", "Cumprod", "Cumsum", "Max", "Mean", "Min", "Prod", "Sum",
    # linear algebra
    "Cholesky", "Einsum", "LogMatrixDeterminant", "MatMul", "MatrixDeterminant", "MatrixInverse", "MatrixSolve",
    "SpectralNorm", "SpectralNormGrad",
    # neural network kernels
    "AvgPool", "AvgPoolGrad", "BiasRelu", "BiasReluGrad", "Conv", "ConvBackpropFilter", "ConvBackpropInput",
    "ConvOfWindows", "ConvWindows", "ConvWindowsBackprop",
    "FusedBatchNormGrad", "FusedBatchNormTraining", "LogSoftmax", "MaxPool", "MaxPoolGrad", "MaxPoolGradGrad",
    "Softmax", "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
    # random numbers drawn from an explicit seed input: a function of it
    "StatelessBeta", "StatelessBinomial", "StatelessDropoutMask", "StatelessGamma", "StatelessMultinomial",
    "StatelessPermutation", "StatelessStandardNormal", "StatelessTruncatedStandardNormal",
    "StatelessUniformFullInt", "StatelessUniformInt", "StatelessUniformUnit",
)
PURE_OPS = frozenset(_ELEMENTWISE_UNARY + _ELEMENTWISE_BINARY + _OTHER)

# Elementwise ops whose output has the broadcast shape of the inputs (what a fused loop can compute).
ELEMENTWISE_OPS = frozenset(_ELEMENTWISE_UNARY + _ELEMENTWISE_BINARY) - {"AddN"}

# Ops whose output shapes follow from the input shapes and attributes alone (not from input values):
# in a graph traced at known input shapes, their traced output shapes hold at every call.
SHAPE_FROM_SHAPES = PURE_OPS - {"Where", "DynamicSlice", "StatelessMultinomial", "UnsortedSegmentSum"}


def is_pure(op_type):
    """Whether nodes of ``op_type`` may be removed, merged or folded (see the module docstring)."""
    if op_type not in _FORWARDS or op_type in _TRACE_FORWARDS:
        return False
    return op_type in PURE_OPS or op_type in DECLARED_PURE


def is_removable(op_type):
    """Whether an unread node of ``op_type`` may be dropped (dead-code elimination, as TensorFlow prunes
    what no output or stateful op needs). Every pure op, and also a listed op whose trace value is only a
    stand-in (GatherV2: indices may be out of the placeholder's range): such a node is never folded or merged
    by its trace value, but when nothing reads it, its forward (pure) has nothing to do."""
    return op_type in _FORWARDS and (op_type in PURE_OPS or op_type in DECLARED_PURE)
