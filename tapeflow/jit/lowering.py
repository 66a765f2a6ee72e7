"""What the jit compiler can compute inside numba, per op: scalar expressions for elementwise ops
and outer products (a MatMul over an inner dimension of 1, fused into loops), sums over fixed axes (accumulated in the loop that computes their input) and
reshapes (free on flat arrays). Everything else runs as a call of the op's
forward between kernels; matmuls among them go to BLAS through numpy, as numba's own np.dot
would need scipy, which tapeflow does not depend on.

Each expression computes what the op's own forward computes: numpy's arithmetic for the
arithmetic ops, and the formulas of kernels/activations.py for the activations and
their gradients. Every node's result is rounded to its dtype before the next node reads
it, so a fused loop rounds exactly where the unfused ops do; transcendental functions may
differ from numpy's in the last bit, and sums add in index order where numpy adds
contiguous runs pairwise (float32 rounding).
"""
import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# op type -> expression over the argument names a, b (in input order) and the op's float attributes
ELEMENTWISE = {
    "AddV2": "a + b",
    "Sub": "a - b",
    "Mul": "a * b",
    "RealDiv": "a / b",
    "Neg": "-a",
    "Abs": "abs(a)",
    "Square": "a * a",
    "Identity": "a",
    "BroadcastTo": "a",        # the loop reads the input through its broadcast index
    "Exp": "np.exp(a)",
    "Log": "np.log(a)",
    "Sqrt": "np.sqrt(a)",
    "Sin": "np.sin(a)",
    "Cos": "np.cos(a)",
    "Tanh": "math.tanh(a)",
    "TanhGrad": "b * (1 - a * a)",
    "Sigmoid": "(1.0 / (1.0 + math.exp(-a)) if a >= 0 else math.exp(a) / (1.0 + math.exp(a)))",
    "SigmoidGrad": "b * a * (1 - a)",
    "Relu": "(0 if a <= 0 else a)",
    "Elu": "(a if a > 0 else math.expm1(a))",
    "EluGrad": "(a * (b + 1) if b < 0 else a)",
    "LeakyRelu": "(a if a > 0 else alpha * a)",
    "LeakyReluGrad": "(a if b > 0 else alpha * a)",
    "ReluGrad": "a * (b > 0)",
    "Cast": "a",
}


def operand_shapes(op_type, attrs, in_shapes, out_shape):
    """The shapes a loop reads its node's operands as: their own, except for an outer product (a
    MatMul over an inner dimension of 1), whose operands are read as a column (M, 1) and a row
    (1, N), which is what they are in memory whichever way they are transposed."""
    if op_type == "MatMul":
        return [(out_shape[0], 1), (1, out_shape[1])]
    return list(in_shapes)


def expression(op_type):
    """The scalar expression of a node lowered to a loop."""
    return "a * b" if op_type == "MatMul" else ELEMENTWISE[op_type]


def _outer_product(attrs, in_shapes):
    """A 2-D MatMul whose inner dimension is 1: each output is one product, a[i] * b[j], rounded once
    as BLAS rounds it."""
    if len(in_shapes) != 2 or any(len(s) != 2 for s in in_shapes) or attrs.get("adjoint_a") or attrs.get("adjoint_b"):
        return False
    (a0, a1), (b0, b1) = in_shapes
    inner_a = a0 if attrs.get("transpose_a") else a1
    inner_b = b1 if attrs.get("transpose_b") else b0
    return inner_a == inner_b == 1


def lowering_of(op_type, attrs, in_dtypes, out_dtypes, in_shapes, out_shapes):
    """"elementwise", "reduce", "reshape" or None (the op stays a call), given proven dtypes and shapes."""
    if any(d not in FLOATS for d in list(in_dtypes) + list(out_dtypes)) or len(out_dtypes) != 1:
        return None
    if any(s is None for s in list(in_shapes) + list(out_shapes)):
        return None
    if op_type in ELEMENTWISE:
        if op_type != "Cast" and any(d != out_dtypes[0] for d in in_dtypes):
            return None
        return "elementwise"
    if op_type == "MatMul" and _outer_product(attrs, in_shapes) and in_dtypes[0] == in_dtypes[1] == out_dtypes[0]:
        return "elementwise"
    if op_type == "Sum" and len(in_shapes) == 1 and in_dtypes[0] == out_dtypes[0] \
            and attrs.get("axes") is not None and all(isinstance(a, int) for a in attrs["axes"]):
        return "reduce"
    if op_type == "Reshape" and len(in_shapes) == 1 and in_dtypes[0] == out_dtypes[0]:
        return "reshape"
    return None
