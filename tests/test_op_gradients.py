"""Every differentiable op of the library against central finite differences (float64).

Each case is ``(id, f, inputs)``: ``f`` maps Tensors to a Tensor (or a list of
Tensors) and the check differentiates ``<ct, f(x)>`` for a random cotangent
``ct`` passed as ``output_gradients``, so non-scalar outputs are covered.

The same cases are then used to check ``tape.jacobian`` (one vectorised
backward pass with stacked cotangents) against a per-element loop of
``tape.gradient`` with one-hot ``output_gradients``.
"""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, check_jacobian, jacobian_fn
from tapeflow.ops import array_ops as _A
from tapeflow.ops import nn_ops as _N
from tapeflow.ops import reduction_ops as _R

rng = np.random.default_rng(20240601)


def r(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def pos(*shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def away(*shape, lo=0.3, hi=2.0):
    """Values of random sign with |x| in [lo, hi]: away from the kink at 0."""
    return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], size=shape)


def well_conditioned(*shape):
    n = shape[-1]
    return rng.uniform(-1, 1, shape) + 3 * np.eye(n)


def _dropout(x):
    tf.random.set_seed(7)   # the same mask on every call, so finite differences see one function
    return tf.nn.dropout(x, rate=0.5, seed=3)


CASES = []


def case(name, f, *inputs):
    CASES.append(pytest.param(f, inputs, id=name))


# ------------------------------------------------------------------ arithmetic ---
case("add_3x1_1x4", tf.add, r(3, 1), r(1, 4))
case("add_scalar_matrix", tf.add, r(), r(2, 3))
case("add_matrix_row", lambda x, y: x + y, r(2, 3), r(3))
case("subtract_3x1_1x4", tf.subtract, r(3, 1), r(1, 4))
case("subtract_matrix_scalar", lambda x, y: x - y, r(2, 3), r())
case("rsub_python", lambda x: 2.0 - x, r(2, 3))
case("multiply_3x1_1x4", tf.multiply, r(3, 1), r(1, 4))
case("multiply_scalar_matrix", tf.multiply, r(), r(2, 3))
case("multiply_same", lambda x, y: x * y, r(2, 3), r(2, 3))
case("multiply_self", lambda x: x * x, r(4))
case("divide_3x1_1x4", tf.divide, r(3, 1), away(1, 4))
case("divide_scalar_matrix", tf.math.divide, r(), away(2, 3))
case("divide_python", lambda x: 1.0 / x, away(5))
case("truediv_operator", lambda x, y: x / y, r(2, 1, 3), away(4, 1))
case("pow_both", tf.pow, pos(2, 3), r(1, 3))
case("pow_scalar_base", tf.pow, pos(), r(2, 3))
case("pow_negative_base_int_exponent", lambda x: tf.pow(x, 3.0), r(2, 3))
case("pow_operator", lambda x: x ** 2, r(4))
case("pow_half", lambda x: x ** 0.5, pos(4))
case("maximum_3x1_1x4", tf.maximum, r(3, 1), r(1, 4))
case("maximum_scalar", lambda x: tf.maximum(x, 0.25), r(6))
case("minimum_3x1_1x4", tf.minimum, r(3, 1), r(1, 4))
case("minimum_matrix_row", tf.minimum, r(2, 3), r(3))
case("squared_difference", tf.math.squared_difference, r(2, 3), r(3))
case("add_n", lambda x, y, z: tf.add_n([x, y, z, x]), r(2, 2), r(2, 2), r(2, 2))

# ------------------------------------------------------------------ unary ---
case("square", tf.square, r(2, 3))
case("sqrt", tf.sqrt, pos(2, 3))
case("rsqrt", tf.math.rsqrt, pos(2, 3))
case("exp", tf.exp, r(2, 3))
case("log", tf.math.log, pos(2, 3))
case("log1p", tf.math.log1p, r(2, 3, lo=-0.5, hi=2.0))
case("sin", tf.sin, r(2, 3))
case("cos", tf.cos, r(2, 3))
case("tan", tf.tan, r(2, 3, lo=-1.2, hi=1.2))
case("tanh", tf.tanh, r(2, 3))
case("nn_tanh", tf.nn.tanh, r(3))
case("abs", tf.abs, away(2, 3))
case("abs_operator", lambda x: abs(x), away(4))
case("negative", tf.negative, r(2, 3))
case("neg_operator", lambda x: -x, r(2, 3))
case("reciprocal", tf.math.reciprocal, away(2, 3))
case("sign_times_x", lambda x: tf.sign(x) * x, away(5))
case("expm1", tf.math.expm1, r(4))
case("sinh", tf.math.sinh, r(4))
case("cosh", tf.math.cosh, r(4))
case("atan", tf.math.atan, r(4))
case("asin", tf.math.asin, r(4, lo=-0.8, hi=0.8))
case("acos", tf.math.acos, r(4, lo=-0.8, hi=0.8))
case("erf", tf.math.erf, r(4))
case("cast_f64_f32", lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * 3.0, r(2, 3))
case("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.7), away(3, 4, lo=0.05, hi=2.0) + 0.01)
case("clip_by_value_tensor_bounds", lambda x, lo, hi: tf.clip_by_value(x, lo, hi),
     np.array([[-2.0, -0.1, 0.3], [1.5, 0.2, -0.9]]), np.array(-0.5), np.array([0.1, 0.6, 1.0]))
case("clip_by_norm_clipped", lambda x: tf.clip_by_norm(x, 1.0), r(2, 3) + 2.5)
case("clip_by_norm_unclipped", lambda x: tf.clip_by_norm(x, 100.0), r(2, 3))
case("clip_by_norm_axes", lambda x: tf.clip_by_norm(x, 1.5, axes=[1]), r(3, 4))
case("clip_by_norm_tensor", lambda x, c: tf.clip_by_norm(x, c), r(4) + 2.0, np.array(1.3))

# ------------------------------------------------------------------ matmul ---
case("matmul", tf.matmul, r(2, 3), r(3, 4))
case("matmul_transpose_a", lambda a, b: tf.matmul(a, b, transpose_a=True), r(3, 2), r(3, 4))
case("matmul_transpose_b", lambda a, b: tf.matmul(a, b, transpose_b=True), r(2, 3), r(4, 3))
case("matmul_transpose_both", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True), r(3, 2), r(4, 3))
case("matmul_adjoint", lambda a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True), r(3, 2), r(4, 3))
case("matmul_batched", tf.matmul, r(2, 2, 3), r(2, 3, 4))
case("matmul_batch_broadcast", tf.matmul, r(2, 2, 3), r(3, 2))
case("matmul_batch_broadcast_left", tf.matmul, r(2, 3), r(2, 2, 3, 2))
case("matmul_batch_broadcast_ones", tf.matmul, r(2, 1, 2, 3), r(1, 2, 3, 2))
case("matmul_stack_times_matrix_transpose_b", lambda a, b: tf.matmul(a, b, transpose_b=True), r(2, 3, 2, 3), r(4, 3))
case("matmul_strided_stack_times_matrix", lambda a, b: tf.matmul(a[:, ::2], b), r(2, 4, 2, 3), r(3, 2))
case("matmul_operator", lambda a, b: a @ b, r(2, 3), r(3, 2))
case("linalg_matmul", tf.linalg.matmul, r(2, 2), r(2, 2))
case("matvec", tf.linalg.matvec, r(2, 3), r(3))
case("matvec_batched", tf.linalg.matvec, r(2, 2, 3), r(2, 3))
case("matvec_transpose", lambda a, b: tf.linalg.matvec(a, b, transpose_a=True), r(3, 2), r(3))

# ------------------------------------------------------------------ einsum ---
for _eq, _shapes in [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ijk->kj", [(2, 3, 2)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("...i,...i->...", [(2, 3), (2, 3)]),
    ("b...,b...->b", [(2, 3, 2), (2, 3, 2)]),
    ("bxby->bxy", [(2, 3, 2, 2)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
]:
    case(f"einsum_{_eq}", (lambda eq: lambda *xs: tf.einsum(eq, *xs))(_eq), *[r(*s) for s in _shapes])

case("tensordot_1", lambda a, b: tf.tensordot(a, b, 1), r(2, 3), r(3, 2))
case("tensordot_2", lambda a, b: tf.tensordot(a, b, axes=[[1, 2], [0, 1]]), r(2, 3, 2), r(3, 2, 2))
case("tensordot_0", lambda a, b: tf.tensordot(a, b, axes=0), r(2), r(3))
case("tensordot_pairs", lambda a, b: tf.tensordot(a, b, axes=([0], [1])), r(3, 2), r(2, 3))

# --------------------------------------------------------------- reductions ---
_REDUCTIONS = {
    "sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
    "prod": tf.reduce_prod, "logsumexp": tf.reduce_logsumexp,
}
for _name, _fn in _REDUCTIONS.items():
    for _axis in [None, 0, 1, -1, (0, 2), [0, 1, 2]]:
        for _keep in (False, True):
            case(f"reduce_{_name}_axis{_axis}_keep{_keep}",
                 (lambda fn, axis, keep: lambda x: fn(x, axis=axis, keepdims=keep))(_fn, _axis, _keep),
                 away(2, 3, 2, lo=0.5, hi=1.5))
case("reduce_prod_with_zero", lambda x: tf.reduce_prod(x, axis=1), np.array([[0.0, 2.0, 3.0], [1.5, -1.0, 0.5]]))
case("reduce_prod_two_zeros", lambda x: tf.reduce_prod(x), np.array([0.0, 2.0, 0.0]))
case("reduce_std", lambda x: tf.math.reduce_std(x, axis=0), r(3, 2))
case("reduce_variance", lambda x: tf.math.reduce_variance(x), r(2, 3))
case("cumsum", lambda x: tf.math.cumsum(x, axis=1), r(2, 3))
case("cumsum_exclusive_reverse", lambda x: tf.math.cumsum(x, axis=0, exclusive=True, reverse=True), r(3, 2))

case("norm_euclidean", tf.norm, r(2, 3))
case("norm_axis", lambda x: tf.norm(x, axis=1), r(2, 3))
case("norm_axis_keepdims", lambda x: tf.norm(x, axis=-1, keepdims=True), r(2, 3))
case("norm_fro_matrix", lambda x: tf.norm(x, ord="fro", axis=(0, 1)), r(2, 3))
case("norm_1", lambda x: tf.norm(x, ord=1), away(5))
case("norm_inf", lambda x: tf.norm(x, ord=np.inf), np.array([0.3, -1.7, 0.9]))
case("norm_3", lambda x: tf.norm(x, ord=3), away(4))
case("norm_2_vector", lambda x: tf.norm(x, ord=2, axis=0), r(3, 2))
case("norm_matrix_1", lambda x: tf.norm(x, ord=1, axis=[-2, -1]), r(2, 3, 3))
case("norm_matrix_inf", lambda x: tf.norm(x, ord=np.inf, axis=[-2, -1]), r(2, 3, 3))
case("norm_matrix_2", lambda x: tf.norm(x, ord=2, axis=[0, 1]), r(3, 2))
case("linalg_norm", tf.linalg.norm, r(4))

# ------------------------------------------------------------------- arrays ---
case("reshape", lambda x: tf.reshape(x, [3, -1]), r(2, 3))
case("reshape_scalar", lambda x: tf.reshape(x, [1, 1]), r())
case("transpose", tf.transpose, r(2, 3))
case("transpose_perm", lambda x: tf.transpose(x, [1, 2, 0]), r(2, 3, 2))
case("matrix_transpose", tf.linalg.matrix_transpose, r(2, 2, 3))
case("concat_axis0", lambda x, y, z: tf.concat([x, y, z], 0), r(2, 3), r(1, 3), r(3, 3))
case("concat_axis1", lambda x, y: tf.concat([x, y], axis=1), r(2, 3), r(2, 1))
case("concat_axis_neg", lambda x, y: tf.concat([x, y, x], axis=-1), r(2, 2), r(2, 1))
case("stack_axis0", lambda x, y: tf.stack([x, y]), r(2, 3), r(2, 3))
case("stack_axis1", lambda x, y: tf.stack([x, y, x], axis=1), r(2, 3), r(2, 3))
case("stack_axis_neg", lambda x, y: tf.stack([x, y], axis=-1), r(3), r(3))
case("stack_scalars", lambda x, y: tf.stack([x, y, x * y]), r(), r())
case("unstack", lambda x: tf.unstack(x), r(3, 2))
case("unstack_axis1", lambda x: tf.unstack(x, axis=1), r(2, 3))
case("unstack_one_used", lambda x: tf.unstack(x)[1] * 2.0, r(3, 2))
case("split_num", lambda x: tf.split(x, 3, axis=1), r(2, 3))
case("split_sizes", lambda x: tf.split(x, [1, -1, 2], axis=0), r(5, 2))
case("split_one_used", lambda x: tf.split(x, 2)[0], r(4, 2))
case("pad_constant", lambda x: tf.pad(x, [[1, 0], [2, 1]]), r(2, 3))
case("pad_constant_value", lambda x: tf.pad(x, [[1, 1], [0, 2]], constant_values=1.5), r(2, 3))
case("pad_constant_value_tensor", lambda x, c: tf.pad(x, [[1, 1]], constant_values=c), r(3), r())
case("pad_reflect", lambda x: tf.pad(x, [[1, 2], [2, 1]], mode="REFLECT"), r(3, 4))
case("pad_symmetric", lambda x: tf.pad(x, [[2, 1], [1, 2]], mode="SYMMETRIC"), r(3, 3))
case("pad_reflect_3d", lambda x: tf.pad(x, [[0, 0], [1, 1], [1, 0]], mode="reflect"), r(2, 3, 2))
case("gather", lambda x: tf.gather(x, [2, 0, 2, 1]), r(3, 2))
case("gather_axis1", lambda x: tf.gather(x, [[1, 1], [0, 2]], axis=1), r(2, 3))
case("gather_scalar_index", lambda x: tf.gather(x, 1), r(3, 2))
case("gather_batch_dims", lambda x: tf.gather(x, [[0, 2], [1, 1]], batch_dims=1), r(2, 3))
case("gather_batch_dims_axis2", lambda x: tf.gather(x, [[0, 1, 1], [1, 0, 0]], axis=2, batch_dims=1), r(2, 3, 2, 2))
case("gather_nd_list_key", lambda x: x[[0, 2, 0]], r(3, 2))
case("boolean_mask", lambda x: tf.boolean_mask(x, [True, False, True]), r(3, 2))
case("squeeze_all", tf.squeeze, r(1, 3, 1))
case("squeeze_axis", lambda x: tf.squeeze(x, axis=2), r(1, 3, 1))
case("expand_dims_0", lambda x: tf.expand_dims(x, 0), r(2, 3))
case("expand_dims_neg", lambda x: tf.expand_dims(x, -1), r(2, 3))
case("tile", lambda x: tf.tile(x, [2, 3]), r(2, 2))
case("tile_3d", lambda x: tf.tile(x, [1, 2, 2]), r(2, 1, 2))
case("broadcast_to", lambda x: tf.broadcast_to(x, [2, 3]), r(3))
case("broadcast_to_ones", lambda x: tf.broadcast_to(x, [2, 3, 4]), r(3, 1))
case("where", lambda x, y: tf.where(tf.constant([[True, False, True], [False, False, True]]), x, y), r(2, 3), r(2, 3))
case("where_broadcast", lambda x, y: tf.where(tf.constant([True, False, True]), x, y), r(2, 3), r())
case("where_cond_from_x", lambda x: tf.where(x > 0, x * x, -x), away(5))
case("slice_basic", lambda x: x[1:, ::2], r(3, 4))
case("slice_ellipsis_int", lambda x: x[..., 0], r(2, 3))
case("slice_newaxis", lambda x: x[None, :, 1], r(2, 3))
case("slice_negative_step", lambda x: x[::-1, 1:3], r(3, 4))
case("slice_int", lambda x: x[1], r(3, 2))
case("slice_tensor_index", lambda x: x[tf.constant(2)], r(3, 2))
case("slice_twice_overlapping", lambda x: x[1:] * x[:-1], r(5))
case("tf_slice", lambda x: tf.slice(x, [0, 1], [2, -1]), r(3, 3))
case("tf_strided_slice", lambda x: tf.strided_slice(x, [0, 0], [3, 4], [2, 3]), r(3, 4))
case("reverse", lambda x: tf.reverse(x, [1]), r(2, 3))
case("repeat", lambda x: tf.repeat(x, [1, 2, 0], axis=0), r(3, 2))
case("identity", tf.identity, r(3))
case("fill", lambda v: tf.fill([2, 3], v), r())
case("unsorted_segment_sum", lambda x: tf.math.unsorted_segment_sum(x, tf.constant([1, 0, 1, -1]), 3), r(4, 2))

# Ops implemented in tapeflow.ops but not (yet) exported by the tf namespaces.
case("gather_nd", lambda x: _A.gather_nd(x, [[0, 1], [1, 2], [0, 1]]), r(2, 3, 2))
case("gather_nd_full_depth", lambda x: _A.gather_nd(x, [[[1, 0]], [[0, 2]]]), r(2, 3))
case("sort", lambda x: _A.sort(x), r(2, 4))
case("sort_axis0_descending", lambda x: _A.sort(x, axis=0, direction="DESCENDING"), r(3, 2))
case("top_k_values", lambda x: _N.top_k(x, 2)[0], r(2, 4))
case("log_sigmoid", _N.log_sigmoid, r(5, lo=-30, hi=30))
case("reduce_euclidean_norm", lambda x: _R.reduce_euclidean_norm(x, axis=1, keepdims=True), r(2, 3))

# ------------------------------------------------------------------------ nn ---
case("relu", tf.nn.relu, away(3, 4))
case("relu6", tf.nn.relu6, np.array([[-1.0, 0.5, 3.0], [5.9, 6.5, -0.2]]))
case("elu", tf.nn.elu, away(3, 4))
case("selu", tf.nn.selu, away(3, 4))
case("gelu", tf.nn.gelu, r(3, 4))
case("gelu_approximate", lambda x: tf.nn.gelu(x, approximate=True), r(3, 4))
case("leaky_relu", tf.nn.leaky_relu, away(3, 4))
case("leaky_relu_alpha", lambda x: tf.nn.leaky_relu(x, alpha=0.01), away(3, 4))
case("sigmoid", tf.nn.sigmoid, r(3, 4))
case("math_sigmoid", tf.math.sigmoid, r(3))
case("softplus", tf.nn.softplus, r(3, 4, lo=-5, hi=5))
case("softsign", tf.nn.softsign, away(3, 4))
case("silu", tf.nn.silu, r(5))
case("softmax", tf.nn.softmax, r(2, 4))
case("softmax_axis0", lambda x: tf.nn.softmax(x, axis=0), r(3, 2))
case("softmax_3d_axis1", lambda x: tf.nn.softmax(x, axis=1), r(2, 3, 2))
case("log_softmax", tf.nn.log_softmax, r(2, 4))
case("log_softmax_axis0", lambda x: tf.nn.log_softmax(x, axis=0), r(3, 2))
case("dropout", _dropout, r(4, 5))
case("softmax_xent", lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=lg),
     rng.dirichlet(np.ones(4), size=3), r(3, 4))
case("softmax_xent_axis0", lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=lg, axis=0),
     rng.dirichlet(np.ones(3), size=2).T, r(3, 2))
case("softmax_xent_3d", lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=lg),
     rng.dirichlet(np.ones(3), size=(2, 2)), r(2, 2, 3))
case("sparse_softmax_xent",
     lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([2, 0, 3]), logits=lg), r(3, 4))
case("sparse_softmax_xent_3d",
     lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([[1, 0], [2, 2]]), logits=lg),
     r(2, 2, 3))
case("sigmoid_xent", lambda lab, lg: tf.nn.sigmoid_cross_entropy_with_logits(labels=lab, logits=lg),
     rng.uniform(0, 1, (2, 3)), away(2, 3))
case("sigmoid_xent_at_zero", lambda lg: tf.nn.sigmoid_cross_entropy_with_logits(
    labels=tf.cast([0.0, 1.0, 0.3], lg.dtype), logits=lg), np.zeros(3))
case("weighted_xent", lambda lab, lg: tf.nn.weighted_cross_entropy_with_logits(lab, lg, 2.0),
     rng.uniform(0, 1, (2, 3)), away(2, 3))
case("l2_loss", tf.nn.l2_loss, r(2, 3))
case("moments", lambda x: list(tf.nn.moments(x, axes=[0])), r(4, 3))
case("moments_all_keepdims", lambda x: list(tf.nn.moments(x, axes=[0, 1], keepdims=True)), r(3, 2))
case("l2_normalize", lambda x: tf.math.l2_normalize(x, axis=1), r(2, 3))
case("bias_add", tf.nn.bias_add, r(2, 3), r(3))
case("batch_normalization", lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
     r(4, 3), r(3), pos(3), r(3), r(3))

# ----------------------------------------------------------------- linalg ---
case("solve", tf.linalg.solve, well_conditioned(3, 3), r(3, 2))
case("solve_batched", tf.linalg.solve, well_conditioned(2, 3, 3), r(2, 3, 1))
case("solve_adjoint", lambda a, b: tf.linalg.solve(a, b, adjoint=True), well_conditioned(3, 3), r(3, 2))
case("inv", tf.linalg.inv, well_conditioned(3, 3))
case("inv_batched", tf.linalg.inv, well_conditioned(2, 2, 2))
case("inv_adjoint", lambda a: tf.linalg.inv(a, adjoint=True), well_conditioned(3, 3))
case("det", tf.linalg.det, well_conditioned(3, 3))
case("det_batched", tf.linalg.det, well_conditioned(2, 3, 3))
case("logdet", tf.linalg.logdet, well_conditioned(3, 3) @ well_conditioned(3, 3).T)
case("slogdet", lambda a: tf.linalg.slogdet(a)[1], well_conditioned(3, 3))
case("diag_part", tf.linalg.diag_part, r(3, 3))
case("diag_part_batched_nonsquare", tf.linalg.diag_part, r(2, 2, 3))
case("diag", tf.linalg.diag, r(3))
case("trace", tf.linalg.trace, r(3, 3))
case("trace_batched", tf.linalg.trace, r(2, 3, 3))
case("cross", tf.linalg.cross, r(2, 3), r(2, 3))
case("cast_chain", lambda x: tf.cast(x, tf.float32) * tf.constant(2.0), r(3))


def _fd_options(f_id):
    # cast through float32 loses precision: use a bigger step on a function that is linear.
    if "cast" in f_id:
        return dict(eps=1e-2, atol=1e-5, rtol=1e-5)
    return {}


@pytest.mark.parametrize("f, inputs", CASES)
def test_gradient_matches_finite_differences(request, f, inputs):
    check_gradients(f, *inputs, **_fd_options(request.node.callspec.id))


@pytest.mark.parametrize("f, inputs", CASES)
def test_jacobian_matches_gradient_loop(f, inputs):
    y = f(*[tf.constant(np.asarray(a, np.float64)) for a in inputs])
    outputs = range(len(y)) if isinstance(y, (list, tuple)) else [None]
    for k in sorted({outputs[0], outputs[-1]}, key=str):
        g = f if k is None else (lambda k: lambda *xs: f(*xs)[k])(k)
        jacobians = check_jacobian(g, *inputs)
        assert any(j is not None for j in jacobians), "the output does not depend on any input"


@pytest.mark.parametrize("f, inputs", CASES)
def test_float32_gradients_match_float64(f, inputs):
    """The same gradients in float32: gradient functions keep the dtype (no float64 leaks, no
    mixed-dtype errors from Python constants) and agree with the float64 result."""
    results = {}
    for dtype in (np.float32, np.float64):
        xs = [tf.constant(np.asarray(a, dtype)) for a in inputs]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        ys = [t for t in (y if isinstance(y, (list, tuple)) else [y]) if t is not None]
        grads = tape.gradient(ys, xs, output_gradients=[tf.ones_like(t) for t in ys])
        for g in grads:
            assert g is not None and g.dtype == tf.as_dtype(dtype.__name__)
        results[dtype] = [g.numpy() for g in grads]
    for g32, g64 in zip(results[np.float32], results[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_stack_times_matrix_gradient_equals_the_per_matrix_products(transpose_b):
    """The gradient of a rank-4 ``a @ b`` (one flat product over all rows) against the products of each
    matrix of the stack with its cotangent, summed over the stack in float64; the stacked-cotangent
    (jacobian) path, which keeps the batched products, agrees with it."""
    gen = np.random.default_rng(3)
    a = gen.normal(size=(3, 5, 7, 6)).astype(np.float32)
    b = gen.normal(size=(4, 6) if transpose_b else (6, 4)).astype(np.float32)
    ct = gen.normal(size=(3, 5, 7, 4)).astype(np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([ta, tb])
        y = tf.matmul(ta, tb, transpose_b=transpose_b)
        loss = tf.reduce_sum(y * ct)
        columns = tf.reduce_sum(y * ct, axis=[0, 1, 2])
    ga, gb = tape.gradient(loss, [ta, tb])
    b64 = b.astype(np.float64).T if transpose_b else b.astype(np.float64)
    ct64 = ct.astype(np.float64)
    np.testing.assert_allclose(ga.numpy(), ct64 @ b64.T, rtol=1e-5, atol=1e-5)
    expected_gb = sum(a[i, j].astype(np.float64).T @ ct64[i, j] for i in range(3) for j in range(5))
    np.testing.assert_allclose(gb.numpy(), expected_gb.T if transpose_b else expected_gb, rtol=1e-5, atol=1e-4)
    jac = tape.jacobian(columns, tb).numpy()   # stacked cotangents: batched path
    np.testing.assert_allclose(jac.sum(axis=0), gb.numpy(), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------- fused bias+relu ---
def _bias_relu_inputs():
    rng = np.random.default_rng(11)
    return rng.normal(size=(5, 4)), rng.normal(size=(4,)) * 0.3


def test_bias_relu_matches_relu_of_a_sum_and_finite_differences():
    from tapeflow.ops import nn_ops
    x, b = _bias_relu_inputs()
    np.testing.assert_allclose(nn_ops.bias_relu(tf.constant(x), tf.constant(b)).numpy(), np.maximum(x + b, 0))
    check_gradients(lambda a, c: nn_ops.bias_relu(a, c), x, b)
    check_jacobian(lambda a, c: nn_ops.bias_relu(a, c), x, b)


def test_bias_relu_second_order_and_fused_backward_agree():
    from tapeflow.ops import nn_ops
    x, b = _bias_relu_inputs()
    xs, bs = tf.constant(x), tf.constant(b)
    w = tf.constant(np.linspace(-1, 1, 20).reshape(5, 4))
    with tf.GradientTape() as plain:
        plain.watch([xs, bs])
        y = tf.reduce_sum(nn_ops.bias_relu(xs, bs) * w)
    fused = plain.gradient(y, [xs, bs])               # no outer tape: the fused BiasReluGrad kernel
    with tf.GradientTape() as outer:
        outer.watch(bs)
        with tf.GradientTape() as inner:
            inner.watch([xs, bs])
            y = tf.reduce_sum(nn_ops.bias_relu(xs, bs) * w)
        composite = inner.gradient(y, [xs, bs])       # under a tape: composite ops
        total = tf.reduce_sum(composite[0] * w) + tf.reduce_sum(composite[1])
    for f, c in zip(fused, composite):
        np.testing.assert_allclose(f.numpy(), c.numpy(), atol=1e-12)
    assert outer.gradient(total, bs).numpy().tolist() == [0.0] * 4  # piecewise linear in b
    check_gradients(jacobian_fn(lambda a, c: nn_ops.bias_relu(a, c)), x, b)


def test_bias_relu_fused_gradient_of_the_gradient_op():
    from tapeflow.ops.common import execute
    rng = np.random.default_rng(12)
    g, y = rng.normal(size=(3, 4)), np.maximum(rng.normal(size=(3, 4)), 0)
    check_gradients(lambda a: tf.reduce_sum(execute("BiasReluGrad", (a, tf.constant(y)))[0] ** 2)
                    + tf.reduce_sum(execute("BiasReluGrad", (a, tf.constant(y)))[1] ** 3), g)
