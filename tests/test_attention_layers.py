"""MultiHeadAttention, Attention, AdditiveAttention and EinsumDense: masks, dropout, shapes, configs, errors and
gradients (first and second order against finite differences)."""
import numpy as np
import pytest

import tapeflow as tf
from gradcheck import check_gradients, vjp_fn

L = tf.keras.layers
rng = np.random.default_rng(7)


def _normal(*shape, dtype="float32"):
    return rng.normal(size=shape).astype(dtype)


# ------------------------------------------------------------------ EinsumDense ---
@pytest.mark.parametrize("equation, output_shape, bias_axes, input_shape, kernel, bias", [
    # kernel and bias shapes as Keras 3.15 builds them
    ("ab,bc->ac", 4, "c", (2, 3), (3, 4), (4,)),
    ("...b,bc->...c", 4, "c", (2, 5, 3), (3, 4), (4,)),
    ("abc,cde->abde", (None, 2, 3), "e", (2, 5, 3), (3, 2, 3), (3,)),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 5, 3), (3, 2, 3), (2, 3)),
    ("bc...,cd->bd...", 4, "d", (2, 3, 7, 2), (3, 4), (4, 1, 1)),
])
def test_einsum_dense_shapes_and_values(equation, output_shape, bias_axes, input_shape, kernel, bias):
    layer = L.EinsumDense(equation, output_shape, bias_axes=bias_axes, bias_initializer="random_normal")
    x = _normal(*input_shape)
    y = layer(x)
    assert tuple(layer.kernel.shape) == kernel and tuple(layer.bias.shape) == bias
    expected = np.einsum(equation, x, layer.kernel.numpy()) + layer.bias.numpy()
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    clone = L.EinsumDense.from_config(layer.get_config())
    clone.build(input_shape)
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(x).numpy(), y.numpy())


def test_einsum_dense_activation_and_gradients():
    layer = L.EinsumDense("abc,cd->abd", (None, 3), activation="tanh", bias_axes="d", dtype="float64")
    layer.build((2, 4, 5))
    check_gradients(lambda t: layer(t), _normal(2, 4, 5, dtype="float64"))
    x = tf.constant(_normal(2, 4, 5, dtype="float64"))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    grads = tape.gradient(loss, layer.trainable_weights)
    assert [tuple(g.shape) for g in grads] == [(5, 3), (3,)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(equation="ab,bc", output_shape=3), "Invalid einsum equation"),
    (dict(equation="ab,bcd->ad", output_shape=3), "did not have a match"),
    (dict(equation="ab,bc->acz", output_shape=(3, 2)), "no corresponding dim"),
    (dict(equation="ab,bc->ac", output_shape=3, bias_axes="z"), "not part of the output spec"),
])
def test_einsum_dense_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        L.EinsumDense(**kwargs).build((2, 4))


# ------------------------------------------------------------- MultiHeadAttention ---
def test_mha_query_value_key_masks_are_an_attention_mask():
    layer = L.MultiHeadAttention(2, 3)
    q, v = _normal(2, 4, 6), _normal(2, 5, 6)
    qm = np.array([[1, 1, 1, 0], [1, 0, 1, 1]], bool)
    vm = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 0]], bool)
    km = np.array([[1, 0, 1, 1, 1], [1, 1, 1, 1, 1]], bool)
    auto, auto_scores = layer(q, v, query_mask=qm, value_mask=vm, key_mask=km, use_causal_mask=True,
                              return_attention_scores=True)
    causal = np.tril(np.ones((4, 5), bool))
    explicit_mask = qm[:, :, None] & vm[:, None, :] & km[:, None, :] & causal
    explicit, scores = layer(q, v, attention_mask=explicit_mask, return_attention_scores=True)
    np.testing.assert_array_equal(auto.numpy(), explicit.numpy())
    np.testing.assert_array_equal(auto_scores.numpy(), scores.numpy())
    scores = scores.numpy()
    assert np.all(scores[np.broadcast_to(~explicit_mask[:, None], scores.shape)] == 0)
    row_sums = scores.sum(-1)
    np.testing.assert_allclose(row_sums[np.broadcast_to(explicit_mask.any(-1)[:, None], row_sums.shape)], 1, rtol=1e-6)
    # A query position that may attend to nothing gets all-zero weights (Keras's masked softmax).
    assert np.all(row_sums[np.broadcast_to(~explicit_mask.any(-1)[:, None], row_sums.shape)] == 0)


def test_mha_matches_a_numpy_reference():
    layer = L.MultiHeadAttention(2, 3, value_dim=4, output_shape=5, bias_initializer="random_normal")
    q, v, k = _normal(2, 4, 6), _normal(2, 5, 7), _normal(2, 5, 3)
    mask = rng.random((2, 4, 5)) > 0.3
    out, scores = layer(q, v, k, attention_mask=mask, return_attention_scores=True)
    wq, bq, wk, bk, wv, bv, wo, bo = [w.numpy().astype(np.float64) for w in layer.weights]
    qh = np.einsum("btf,fnh->btnh", q, wq) + bq
    kh = np.einsum("bsf,fnh->bsnh", k, wk) + bk
    vh = np.einsum("bsf,fnh->bsnh", v, wv) + bv
    logits = np.einsum("btnh,bsnh->bnts", qh, kh) / np.sqrt(3.0)
    logits = np.where(mask[:, None], logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.einsum("bnts,bsnh,nho->bto", weights, vh, wo) + bo
    np.testing.assert_allclose(scores.numpy(), weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_mha_dropout_only_in_training_and_scores_are_before_dropout():
    layer = L.MultiHeadAttention(2, 3, dropout=0.5, seed=3)
    q = _normal(2, 4, 6)
    a, scores_a = layer(q, q, return_attention_scores=True)
    b, scores_b = layer(q, q, return_attention_scores=True, training=False)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c, scores_c = layer(q, q, return_attention_scores=True, training=True)
    assert not np.allclose(c.numpy(), a.numpy())
    np.testing.assert_allclose(scores_c.numpy(), scores_a.numpy(), rtol=1e-6)


@pytest.mark.parametrize("axes, q_shape, v_shape", [(None, (4, 6), (5, 6)), ((1, 2), (3, 4, 5), (2, 4, 5)),
                                                    (2, (3, 4, 5), (3, 2, 5))])
def test_mha_symbolic_shapes_match_eager(axes, q_shape, v_shape):
    layer = L.MultiHeadAttention(2, 3, attention_axes=axes, output_shape=(2, 7))
    q_in, v_in = tf.keras.Input(q_shape), tf.keras.Input(v_shape)
    out, scores = layer(q_in, v_in, return_attention_scores=True)
    eager_out, eager_scores = layer(_normal(2, *q_shape), _normal(2, *v_shape), return_attention_scores=True)
    assert tuple(out.shape) == (None,) + tuple(eager_out.shape[1:])
    assert tuple(scores.shape) == (None,) + tuple(eager_scores.shape[1:])


def test_mha_config_round_trip_and_weight_names():
    layer = L.MultiHeadAttention(3, 2, value_dim=4, dropout=0.2, use_bias=False, output_shape=5,
                                 attention_axes=1, kernel_initializer="he_normal", name="mha")
    q, v = _normal(2, 4, 6), _normal(2, 3, 7)
    out = layer(q, v)
    assert [w.path for w in layer.weights] == ["mha/query/kernel", "mha/key/kernel", "mha/value/kernel",
                                               "mha/attention_output/kernel"]
    config = layer.get_config()
    assert config["attention_axes"] == [1] and config["output_shape"] == 5 and config["value_dim"] == 4
    clone = L.MultiHeadAttention.from_config(config)
    clone.build_from_config(layer.get_build_config())
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(q, v).numpy(), out.numpy())


def test_mha_errors():
    with pytest.raises(ValueError, match="num_heads"):
        L.MultiHeadAttention(0, 2)
    with pytest.raises(ValueError, match="dropout"):
        L.MultiHeadAttention(2, 2, dropout=1.5)
    with pytest.raises(TypeError, match="value"):
        L.MultiHeadAttention(2, 2)(_normal(2, 3, 4))
    with pytest.raises(ValueError, match="attention_axes"):
        L.MultiHeadAttention(2, 2, attention_axes=(3,))(_normal(2, 3, 4), _normal(2, 3, 4))
    with pytest.raises(ValueError, match="one attention axis"):
        x = _normal(2, 3, 4, 5)
        L.MultiHeadAttention(2, 2, attention_axes=(1, 2))(x, x, use_causal_mask=True)


def test_mha_gradients_first_and_second_order():
    layer = L.MultiHeadAttention(2, 2, value_dim=3, dtype="float64", bias_initializer="random_normal")
    mask = np.array([[[1, 1, 0], [1, 1, 1]], [[1, 0, 0], [1, 0, 1]]], bool)
    layer.build((2, 2, 3), (2, 3, 3))

    def f(q, v):
        return layer(q, v, attention_mask=mask, use_causal_mask=False)

    q, v = _normal(2, 2, 3, dtype="float64"), _normal(2, 3, 3, dtype="float64")
    check_gradients(f, q, v, atol=1e-7, rtol=1e-6)
    check_gradients(vjp_fn(f), q, v, atol=1e-6, rtol=1e-5)
    causal = lambda q: layer(q, q, use_causal_mask=True)  # noqa: E731
    check_gradients(causal, _normal(2, 3, 3, dtype="float64"), atol=1e-7, rtol=1e-6)


def test_mha_weight_gradients_match_finite_differences():
    layer = L.MultiHeadAttention(2, 2, dtype="float64", bias_initializer="random_normal")
    q, v = tf.constant(_normal(2, 3, 3, dtype="float64")), tf.constant(_normal(2, 2, 3, dtype="float64"))
    ct = _normal(2, 3, 3, dtype="float64")

    def loss():
        return tf.reduce_sum(layer(q, v) * ct)

    layer(q, v)
    with tf.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, layer.trainable_weights)
    eps = 1e-6
    for variable, grad in zip(layer.trainable_weights, grads):
        base = variable.numpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                variable.assign(shifted)
                numeric[idx] += sign * float(loss().numpy()) / (2 * eps)
        variable.assign(base)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-6, atol=1e-8, err_msg=variable.path)


# --------------------------------------------------------- Attention, AdditiveAttention ---
def _luong_reference(q, v, k, scale, concat_weight=None, v_mask=None, q_mask=None, causal=False):
    if concat_weight is None:
        scores = scale * np.einsum("btd,bsd->bts", q, k)
    else:
        scores = concat_weight * np.tanh(scale * (q[:, :, None] + k[:, None])).sum(-1)
    keep = np.ones(scores.shape, bool)
    if v_mask is not None:
        keep &= v_mask[:, None, :]
    if causal:
        keep &= np.tril(np.ones(scores.shape[1:], bool))
    # In float32, as the layer computes: a row with every key masked becomes uniform.
    scores = (scores.astype(np.float32) - np.float32(1e9) * (~keep)).astype(np.float64)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = weights @ v
    if q_mask is not None:
        out = out * q_mask[:, :, None]
    return out, weights


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
def test_attention_matches_a_numpy_reference(score_mode):
    layer = L.Attention(use_scale=True, score_mode=score_mode)
    q, v, k = _normal(2, 3, 4), _normal(2, 5, 4), _normal(2, 5, 4)
    layer.build([q.shape, v.shape, k.shape])
    layer.scale.assign(0.6)
    if score_mode == "concat":
        layer.concat_score_weight.assign(1.7)
    q_mask = np.array([[1, 0, 1], [1, 1, 1]], bool)
    v_mask = np.array([[1, 1, 0, 1, 0], [0, 1, 1, 1, 1]], bool)
    out, weights = layer([q, v, k], mask=[q_mask, v_mask], return_attention_scores=True, use_causal_mask=True)
    ref_out, ref_weights = _luong_reference(q.astype(np.float64), v, k, 0.6, 1.7 if score_mode == "concat" else None,
                                            v_mask, q_mask, causal=True)
    np.testing.assert_allclose(weights.numpy(), ref_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-5, atol=1e-6)
    assert layer.compute_mask([q, v, k], [q_mask, v_mask]).numpy().tolist() == q_mask.tolist()


def test_additive_attention_matches_a_numpy_reference():
    layer = L.AdditiveAttention()
    q, v = _normal(2, 3, 4), _normal(2, 5, 4)
    out = layer([q, v])
    scale = layer.scale.numpy()
    scores = (scale * np.tanh(q[:, :, None].astype(np.float64) + v[:, None])).sum(-1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), weights @ v, rtol=1e-5, atol=1e-6)
    assert [w.path for w in layer.weights] == [f"{layer.name}/scale"]
    assert "score_mode" not in layer.get_config()


@pytest.mark.parametrize("make", [lambda: L.Attention(use_scale=True, dtype="float64"),
                                  lambda: L.Attention(score_mode="concat", use_scale=True, dtype="float64"),
                                  lambda: L.AdditiveAttention(dtype="float64")])
def test_attention_gradients(make):
    layer = make()
    v_mask = np.array([[1, 0, 1], [1, 1, 1]], bool)
    f = lambda q, v: layer([q, v], mask=[None, v_mask])  # noqa: E731
    q, v = _normal(2, 2, 3, dtype="float64"), _normal(2, 3, 3, dtype="float64")
    check_gradients(f, q, v, atol=1e-7, rtol=1e-6)
    check_gradients(vjp_fn(f), q, v, atol=1e-6, rtol=1e-5)


def test_attention_config_round_trip_and_errors():
    layer = L.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=4)
    clone = L.Attention.from_config(layer.get_config())
    assert (clone.use_scale, clone.score_mode, clone.dropout, clone.seed) == (True, "concat", 0.1, 4)
    additive = L.AdditiveAttention.from_config(L.AdditiveAttention(use_scale=False, dropout=0.3).get_config())
    assert (additive.use_scale, additive.dropout) == (False, 0.3)
    with pytest.raises(ValueError, match="score_mode"):
        L.Attention(score_mode="general")
    with pytest.raises(ValueError, match="list of inputs"):
        L.Attention()(_normal(2, 3, 4))
    with pytest.raises(ValueError, match="mask must be a list"):
        L.Attention()([_normal(2, 3, 4), _normal(2, 3, 4)], mask=np.ones((2, 3), bool))


# ------------------------------------------------------------------- transformer ---
def _transformer_classifier():
    tokens = tf.keras.Input((8, 6))
    h = L.MultiHeadAttention(2, 4, dropout=0.1)(tokens, tokens)
    h = L.LayerNormalization()(L.Add()([tokens, h]))
    f = L.Dense(6)(L.Dense(16, activation="relu")(h))
    h = L.LayerNormalization()(L.Add()([h, f]))
    out = L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(h))
    return tf.keras.Model(tokens, out)


def test_transformer_block_trains_with_fit_and_reloads(tmp_path):
    # Label: is the product of two features, summed over the tokens, positive?
    x = np.random.default_rng(7).normal(size=(256, 8, 6)).astype("float32")
    y = ((x[:, :, 0] * x[:, :, 1]).sum(1) > 0).astype("int32")
    tf.keras.utils.set_random_seed(1)
    model = _transformer_classifier()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=12, verbose=0)
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    path = str(tmp_path / "transformer.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(restored.predict(x[:16], verbose=0), model.predict(x[:16], verbose=0))
