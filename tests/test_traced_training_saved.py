"""A traced training step is data: saved with tf.saved_model.save, reloaded in a fresh process, it trains on
with the same numbers as the process that traced it (the optimizer's updates are state ops, not Python calls).
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import optimizers
from tapeflow.framework.recording import forward_of
from tapeflow.function import VARIABLE_ASSIGN, VARIABLE_READ

STEPS = 4
OPTIMIZERS = {
    "adam": lambda: optimizers.Adam(0.01),
    "sgd_nesterov": lambda: optimizers.SGD(0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    "rmsprop_centered_clipnorm": lambda: optimizers.RMSprop(0.01, momentum=0.5, centered=True, clipnorm=0.5),
    "nadam_global_clipnorm": lambda: optimizers.Nadam(0.01, global_clipnorm=1.0),
    "adamw_accumulation_ema": lambda: optimizers.AdamW(0.01, gradient_accumulation_steps=2, use_ema=True,
                                                       ema_overwrite_frequency=3),
    "adam_schedule": lambda: optimizers.Adam(optimizers.schedules.ExponentialDecay(0.05, 2, 0.5)),
}


class Regression(tf.Module):
    def __init__(self, optimizer):
        super().__init__()
        rng = np.random.default_rng(1)
        self.w1 = tf.Variable(rng.normal(size=(3, 5)).astype(np.float32), name="w1")
        self.b1 = tf.Variable(np.zeros(5, np.float32), name="b1")
        self.w2 = tf.Variable(rng.normal(size=(5, 1)).astype(np.float32), name="w2")
        self.optimizer = optimizer

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
    def train_step(self, x, y):
        variables = [self.w1, self.b1, self.w2]
        with tf.GradientTape() as tape:
            hidden = tf.tanh(tf.matmul(x, self.w1) + self.b1)
            loss = tf.reduce_mean(tf.square(tf.matmul(hidden, self.w2) - y))
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return loss


def _batches(n, seed):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 1)).astype(np.float32))
            for _ in range(n)]


def _eager_twin(make_optimizer):
    """The same model trained by the same Python function, run eagerly."""
    twin = Regression(make_optimizer())
    return twin, Regression.train_step.python_function.__get__(twin)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_traced_step_trains_as_the_eager_one(name):
    traced = Regression(OPTIMIZERS[name]())
    twin, eager_step = _eager_twin(OPTIMIZERS[name])
    for x, y in _batches(2 * STEPS, seed=2):
        a = traced.train_step(tf.constant(x), tf.constant(y)).numpy()
        b = eager_step(tf.constant(x), tf.constant(y)).numpy()
        assert a == b
    for mine, theirs in zip(traced.optimizer.variables + [traced.w1, traced.b1, traced.w2],
                            twin.optimizer.variables + [twin.w1, twin.b1, twin.w2]):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    graph = traced.train_step.get_concrete_function().graph
    for node in graph.nodes:   # the update is recorded as ops, nothing runs Python at replay
        assert node[0] in (VARIABLE_READ, VARIABLE_ASSIGN) or forward_of(node[0])


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tapeflow as tf
    path, batches = sys.argv[1], np.load(sys.argv[2])
    module = tf.saved_model.load(path)
    losses = [float(module.train_step(tf.constant(batches[f"x{i}"]), tf.constant(batches[f"y{i}"])).numpy())
              for i in range(int(batches["n"]))]
    values = {v.name: v.numpy().tolist() for v in module.variables}
    print(json.dumps({"losses": losses, "values": values}))
""")


@pytest.mark.parametrize("name", ["adam", "adamw_accumulation_ema", "nadam_global_clipnorm"])
def test_a_saved_training_step_trains_on_in_a_fresh_process(tmp_path, name):
    module = Regression(OPTIMIZERS[name]())
    for x, y in _batches(STEPS, seed=3):
        module.train_step(tf.constant(x), tf.constant(y))
    path = tmp_path / "trainer"
    tf.saved_model.save(module, str(path))

    later = _batches(STEPS, seed=4)
    batch_file = tmp_path / "batches.npz"
    np.savez(batch_file, n=len(later), **{f"x{i}": x for i, (x, _) in enumerate(later)},
             **{f"y{i}": y for i, (_, y) in enumerate(later)})
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(batch_file)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    child = json.loads(out.stdout.strip().splitlines()[-1])

    losses = [float(module.train_step(tf.constant(x), tf.constant(y)).numpy()) for x, y in later]
    assert child["losses"] == losses
    ours = {v.name: v.numpy() for v in (module.w1, module.b1, module.w2)}
    assert sorted(child["values"]) == sorted(ours)
    for name_, value in ours.items():
        np.testing.assert_array_equal(np.asarray(child["values"][name_], np.float32), value)


def test_a_state_op_naming_a_wrong_variable_fails_cleanly():
    """A state op checks its variables against the update before touching memory."""
    from tapeflow.framework.errors import InvalidArgumentError
    from tapeflow.framework.recording import execute_state
    w, m, v = tf.Variable(np.ones(4, np.float32)), tf.Variable(np.zeros(3, np.float32)), \
        tf.Variable(np.zeros(4, np.float32))
    before = [w.numpy(), m.numpy(), v.numpy()]
    with pytest.raises(InvalidArgumentError, match="does not match the shape"):
        execute_state("ApplyAdam", [w, m, v], [tf.ones(4), tf.constant(0.1), tf.constant(0, tf.int64)],
                      dict(beta_1=0.9, beta_2=0.999, epsilon=1e-7, decay=False, weight_decay=0.0))
    for var, value in zip([w, m, v], before):
        np.testing.assert_array_equal(var.numpy(), value)


def test_a_gated_update_runs_only_when_its_condition_holds():
    from tapeflow.framework.recording import execute_state
    acc = tf.Variable(np.zeros(3, np.float32))
    for condition, expected in [(False, 0.0), (True, 1.0), (True, 2.0)]:
        execute_state("AccumulateGradient", [acc], [tf.ones(3), tf.constant(condition)], {"gated": True})
        np.testing.assert_array_equal(acc.numpy(), np.full(3, expected, np.float32))


FIT_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tapeflow as tf
    path, batches = sys.argv[1], np.load(sys.argv[2])
    module = tf.saved_model.load(path)
    logs = [module.train(tf.constant(batches[f"x{i}"]), tf.constant(batches[f"y{i}"]))
            for i in range(int(batches["n"]))]
    print(json.dumps([{k: float(v.numpy()) for k, v in log.items()} for log in logs]))
""")


def _compiled_model():
    keras = tf.keras
    tf.keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(6, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.01, global_clipnorm=2.0),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_fits_train_step_traced_saves_and_trains_on_in_a_fresh_process(tmp_path):
    model = _compiled_model()
    module = tf.Module()
    module.model_variables = model.variables
    module.train = tf.function(lambda x, y: model.train_step((x, y)),
                               input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.int64)])
    rng = np.random.default_rng(6)
    batches = [(rng.normal(size=(16, 3)).astype(np.float32), rng.integers(0, 2, 16).astype(np.int64))
               for _ in range(2 * STEPS)]
    for x, y in batches[:STEPS]:
        module.train(tf.constant(x), tf.constant(y))
    path = tmp_path / "fit_step"
    tf.saved_model.save(module, str(path))

    later = batches[STEPS:]
    batch_file = tmp_path / "batches.npz"
    np.savez(batch_file, n=len(later), **{f"x{i}": x for i, (x, _) in enumerate(later)},
             **{f"y{i}": y for i, (_, y) in enumerate(later)})
    out = subprocess.run([sys.executable, "-c", FIT_CHILD, str(path), str(batch_file)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    child = json.loads(out.stdout.strip().splitlines()[-1])

    # This process trains on eagerly, with Keras's train_step itself: the same numbers.
    ours = [{k: float(np.asarray(v)) for k, v in model.train_step((tf.constant(x), tf.constant(y))).items()}
            for x, y in later]
    assert child == ours
    assert set(ours[0]) == {"loss", "accuracy"}
