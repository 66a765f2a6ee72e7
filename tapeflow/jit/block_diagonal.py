"""The full jacobian of a target proven block-diagonal over the batch, assembled in compiled code.

GradientTape.jacobian builds it from batch_jacobian's blocks (y, b, x) with the ops
``einsum("ybx,bc->bycx", blocks, eye(b))``: one product per element of the dense result,
almost all of them a block entry times 0. The compiled program writes the blocks onto the
diagonal of a zeroed array instead, which is the same result when every block entry is
finite (x * 1 = x and x * 0 = 0); a block holding an infinity or NaN (whose products
with 0 are NaN) runs the einsum.
"""
import numpy as np

EQUATION = "ybx,bc->bycx"


def is_identity(c):
    return c is not None and c.ndim == 2 and c.shape[0] == c.shape[1] and c.dtype.kind == "f" \
        and bool(np.array_equal(c, np.eye(c.shape[0], dtype=c.dtype)))


def assembles_blocks(graph, node):
    """Whether Einsum ``node`` places jacobian blocks on the diagonal with a constant identity."""
    _, refs, attrs, _ = graph.nodes[node]
    return attrs.get("equation") == EQUATION and len(refs) == 2 and is_identity(graph.constant(refs[1]))


def block_diagonal_einsum(forward):
    """``forward`` (Einsum's) for blocks and an identity, writing the blocks in place where that is exact."""
    def einsum(blocks, eye, equation):
        if blocks.ndim == 3 and blocks.dtype == eye.dtype and blocks.shape[1] == eye.shape[0] \
                and np.isfinite(blocks).all():
            y, b, x = blocks.shape
            dense = np.zeros((b, y, b, x), blocks.dtype)
            diagonal = np.arange(b)
            dense[diagonal, :, diagonal, :] = blocks.transpose(1, 0, 2)
            return dense
        return forward(blocks, eye, equation=equation)
    return einsum
