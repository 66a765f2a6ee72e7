"""keras.random: Keras's seeding contract (an int seed repeats, a SeedGenerator advances and is reproducible,
seed=None follows keras.utils.set_random_seed), traced functions drawing new numbers on each call,
distributions checked against their moments on large fixed-seed samples, and argument errors."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import random

keras = tf.keras


def test_an_int_seed_gives_the_same_numbers_on_every_call():
    a = random.normal((3, 2), seed=7).numpy()
    b = random.normal((3, 2), seed=7).numpy()
    assert a.dtype == np.float32 and np.array_equal(a, b)
    assert not np.array_equal(a, random.normal((3, 2), seed=8).numpy())


def test_a_seed_generator_advances_and_is_reproducible():
    gen = random.SeedGenerator(1337)
    first, second = random.uniform((4,), seed=gen).numpy(), random.uniform((4,), seed=gen).numpy()
    assert not np.array_equal(first, second)
    again = random.SeedGenerator(1337)
    assert np.array_equal(random.uniform((4,), seed=again).numpy(), first)
    assert np.array_equal(random.uniform((4,), seed=again).numpy(), second)
    assert gen.state.numpy().tolist() == [1337, 2]
    assert random.SeedGenerator.from_config(gen.get_config()).state.numpy().tolist() == [1337, 0]


def test_set_random_seed_makes_unseeded_draws_reproducible():
    keras.utils.set_random_seed(5)
    a = [random.normal((3,)).numpy(), random.randint((3,), 0, 100).numpy()]
    keras.utils.set_random_seed(5)
    b = [random.normal((3,)).numpy(), random.randint((3,), 0, 100).numpy()]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], random.normal((3,)).numpy())


def test_a_traced_function_draws_new_numbers_on_each_call():
    gen = random.SeedGenerator(3)

    @tf.function
    def noisy(x):
        return x + random.normal((2,), seed=gen)

    x = tf.constant([0.0, 0.0])
    first, second = noisy(x).numpy(), noisy(x).numpy()
    assert not np.array_equal(first, second)
    reference = random.SeedGenerator(3)
    expected = [random.normal((2,), seed=reference).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, expected[0])
    np.testing.assert_array_equal(second, expected[1])


def test_distributions_match_their_moments():
    n = 200_000
    normal = random.normal((n,), mean=2.0, stddev=3.0, seed=1, dtype="float64").numpy()
    assert abs(normal.mean() - 2.0) < 0.03 and abs(normal.std() - 3.0) < 0.03
    truncated = random.truncated_normal((n,), mean=1.0, stddev=2.0, seed=2).numpy()
    assert truncated.min() >= -3.0 and truncated.max() <= 5.0
    assert abs(truncated.std() - 2.0 * 0.8796) < 0.02           # the std of a standard normal cut at +-2 is 0.8796
    uniform = random.uniform((n,), minval=-1.0, maxval=3.0, seed=3).numpy()
    assert uniform.min() >= -1.0 and uniform.max() < 3.0 and abs(uniform.mean() - 1.0) < 0.02
    ints = random.randint((n,), 2, 6, seed=4).numpy()
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {2, 3, 4, 5}
    gamma = random.gamma((n,), alpha=3.0, seed=5).numpy()
    assert abs(gamma.mean() - 3.0) < 0.03 and abs(gamma.var() - 3.0) < 0.1
    binomial = random.binomial((n,), counts=10.0, probabilities=0.3, seed=6).numpy()
    assert abs(binomial.mean() - 3.0) < 0.03 and np.all(binomial == np.round(binomial))
    beta = random.beta((n,), alpha=2.0, beta=6.0, seed=7).numpy()
    assert abs(beta.mean() - 0.25) < 0.005


def test_categorical_follows_the_softmax_of_the_logits():
    logits = np.log(np.array([[0.2, 0.5, 0.3], [0.9, 0.05, 0.05]]))
    draws = random.categorical(logits, 50_000, seed=9).numpy()
    assert draws.shape == (2, 50_000) and draws.dtype == np.int32
    np.testing.assert_allclose(np.bincount(draws[0], minlength=3) / 50_000, [0.2, 0.5, 0.3], atol=0.01)
    np.testing.assert_allclose(np.bincount(draws[1], minlength=3) / 50_000, [0.9, 0.05, 0.05], atol=0.01)


def test_dropout_and_shuffle():
    x = np.ones((200, 50), "float32")
    dropped = random.dropout(x, 0.3, seed=1).numpy()
    assert set(np.unique(dropped)) == {0.0, np.float32(1 / 0.7)} and abs((dropped == 0).mean() - 0.3) < 0.01
    rows = random.dropout(x, 0.5, noise_shape=(200, 1), seed=2).numpy()
    assert all(len(set(row)) == 1 for row in rows)
    data = np.arange(20.0).reshape(10, 2)
    shuffled = random.shuffle(data, seed=3).numpy()
    assert sorted(shuffled[:, 0].tolist()) == data[:, 0].tolist() and np.all(shuffled[:, 1] == shuffled[:, 0] + 1)
    columns = random.shuffle(data.T, axis=1, seed=3).numpy()
    np.testing.assert_array_equal(columns, shuffled.T)


def test_gradients_flow_to_tensor_arguments_and_through_dropout():
    mean, x = tf.Variable(0.5), tf.Variable(np.ones(6, "float32"))
    with tf.GradientTape(persistent=True) as tape:
        total = tf.reduce_sum(random.normal((6,), mean=mean, seed=1))
        y = tf.reduce_sum(random.dropout(x, 0.5, seed=2))
    assert float(tape.gradient(total, mean)) == 6.0
    mask = random.dropout(np.ones(6, "float32"), 0.5, seed=2).numpy()
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), mask)


@pytest.mark.parametrize("call, message", [
    (lambda: random.uniform((2,), dtype="int32"), "`keras.random.uniform` requires a floating point `dtype`"),
    (lambda: random.normal((2,), dtype="int32"), "requires a floating point `dtype`"),
    (lambda: random.randint((2,), 0, 5, dtype="float32"), "`keras.random.randint` requires an integer `dtype`"),
    (lambda: random.randint((2,), 5, 5, seed=1), "minval (5) must be less than maxval (5)"),
    (lambda: random.normal((2,), seed="abc"), "Argument `seed` must be either an integer or an instance of"),
    (lambda: random.SeedGenerator(1.5), "Argument `seed` must be an integer"),
    (lambda: random.categorical(np.ones(3), 2), "`logits` should be a 2-D tensor"),
    (lambda: random.dropout(np.ones(3), 1.0), "Expected a float value in [0, 1)"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)
