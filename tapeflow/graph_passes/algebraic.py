"""Algebraic simplification: nodes that return one of their inputs unchanged are bypassed.

Each rule is an identity in IEEE arithmetic for every input value, checked on
the node's proven dtype and shape (a rule that needs a shape applies only where
the shape is the same at every call):

- ``Identity(x)``, ``Transpose(x, [0, 1, ..., n-1])``, ``Reshape``/``BroadcastTo``
  to x's own shape, ``Sum(x, axes=[])`` keeping x's dtype;
- ``x * 1``, ``1 * x``, ``x / 1`` (ones of x's dtype, not widening x's shape);
- ``x - 0`` with +0; ``x + 0``, ``0 + x`` for integers, and for floats only when
  the zeros are -0.0: ``-0.0 + +0.0`` is ``+0.0``, so adding +0.0 is not an
  identity and stays;
- for floats, ``x ** 1`` is x and ``x ** 0`` is a constant of ones of x's static shape
  (IEEE pow: pow(x, 1) = x and pow(x, ±0) = 1 for every x, NaN and infinities included),
  which is what a second derivative of ``x ** 2`` leaves.

StopGradient and custom-gradient IdentityN nodes are never bypassed: under a
tape they change the gradient.
"""
import numpy as np


def _broadcasts_to(shape, other_shape):
    try:
        return np.broadcast_shapes(shape, other_shape) == tuple(shape)
    except ValueError:
        return False


class _Rules:
    def __init__(self, graph):
        self.graph = graph
        self.shapes = graph.static_shapes()

    def keeps_shape(self, x, c):
        """Whether broadcasting ``x`` with constant ``c`` leaves x's shape as it is, at every call."""
        shape = self.shapes.get(x)
        return c.ndim == 0 or (shape is not None and _broadcasts_to(shape, c.shape))

    def constant_like(self, x, c_ref, test):
        """Whether c_ref is a constant of x's dtype, all of whose elements pass ``test``, not widening x."""
        c = self.graph.constant(c_ref)
        dtype = self.graph.dtype(x)
        return (c is not None and dtype is not None and c.dtype == dtype and c.size > 0
                and bool(np.all(test(c))) and self.keeps_shape(x, c))

    def same_shape_out(self, k, x):
        shape = self.shapes.get(x)
        return shape is not None and self.shapes.get(("node", k, 0)) == shape

    def same_dtype_out(self, k, x):
        dtype = self.graph.dtype(x)
        return dtype is not None and self.graph.dtype(("node", k, 0)) == dtype

    def bypass(self, k):
        """The input node k passes through unchanged, or None."""
        op, refs, attrs, _ = self.graph.nodes[k]
        is_one = lambda c: c == 1                                               # noqa: E731
        is_zero = lambda c: c == 0                                              # noqa: E731
        is_positive_zero = lambda c: (c == 0) & ~np.signbit(c)                  # noqa: E731
        if op == "Identity":
            return refs[0]
        if op == "Transpose":
            perm = attrs.get("perm")
            shape = self.shapes.get(refs[0])
            if perm is not None and shape is not None and list(perm) == list(range(len(shape))):
                return refs[0]
        if op in ("Reshape", "BroadcastTo") and len(refs) == 1 and self.same_shape_out(k, refs[0]):
            return refs[0]
        if op == "Sum" and len(refs) == 1 and attrs.get("axes") is not None and len(attrs["axes"]) == 0 \
                and self.same_dtype_out(k, refs[0]):
            return refs[0]
        if len(refs) != 2:
            return None
        x, y = refs
        if op == "Mul":
            if self.constant_like(x, y, is_one):
                return x
            if self.constant_like(y, x, is_one):
                return y
        if op == "RealDiv" and self.graph.dtype(x) is not None and self.graph.dtype(x).kind in "fc" \
                and self.constant_like(x, y, is_one):
            return x
        if op == "Sub":
            dtype = self.graph.dtype(x)
            test = is_positive_zero if dtype is not None and dtype.kind in "fc" else is_zero
            if dtype is not None and dtype.kind in "fciu" and self.constant_like(x, y, test):
                return x
        if op == "Pow" and self.graph.dtype(x) is not None and self.graph.dtype(x).kind == "f" \
                and self.constant_like(x, y, is_one):
            return x
        if op == "AddV2":
            for a, b in ((x, y), (y, x)):
                dtype = self.graph.dtype(a)
                if dtype is None or dtype.kind not in "fiu":
                    continue
                test = (lambda c: (c == 0) & np.signbit(c)) if dtype.kind == "f" else is_zero
                if self.constant_like(a, b, test):
                    return a
        return None


    def constant_result(self, k):
        """The constant node k computes whatever its other input holds, or None: ``x ** 0`` for floats."""
        op, refs, attrs, _ = self.graph.nodes[k]
        if op != "Pow" or len(refs) != 2:
            return None
        x, y = refs
        dtype = self.graph.dtype(x)
        shape = self.shapes.get(("node", k, 0))
        if dtype is None or dtype.kind != "f" or shape is None or self.graph.dtype(("node", k, 0)) != dtype \
                or not self.constant_like(x, y, lambda c: c == 0):
            return None
        return np.ones(shape, dtype)


def simplify_algebra(graph):
    """Bypasses the identity nodes of ``graph`` (a PassGraph); returns how many (dead-code
    elimination then removes them)."""
    rules = _Rules(graph)
    simplified = 0
    for k, node in enumerate(graph.nodes):
        if node is None or not graph.is_pure(k) or node[3] != 1:
            continue
        node[1] = [graph.resolve(r) for r in node[1]]
        source = rules.bypass(k)
        if source is None:
            constant = rules.constant_result(k)
            source = None if constant is None else graph.add_constant(constant)
        if source is not None:
            graph.replace(("node", k, 0), source)
            graph.nodes[k] = None
            simplified += 1
    graph.apply_replacements()
    return simplified
