"""examples/tf_data_custom_loop.py: tf.data + tf.function step + CheckpointManager + TensorBoard, resumable
after a kill with the same final weights as an uninterrupted run."""
import os
import signal
import subprocess
import sys
import time

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)

import tf_data_custom_loop as example  # noqa: E402


def test_a_killed_run_resumes_to_the_same_weights(tmp_path):
    epochs = 6
    reference, _ = example.train(str(tmp_path / "uninterrupted"), epochs, log=lambda _: None)

    workdir = tmp_path / "killed"
    child = subprocess.Popen([sys.executable, os.path.join(EXAMPLES, "tf_data_custom_loop.py"),
                              "--workdir", str(workdir), "--epochs", str(epochs)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in child.stdout:          # kill it right after its second checkpoint
            if line.startswith("epoch 2:"):
                break
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert sorted(os.listdir(workdir / "ckpts"))[:1] == ["checkpoint"]

    messages = []
    resumed, accuracy = example.train(str(workdir), epochs, log=messages.append)
    assert messages[0].startswith("resumed from") and "at epoch" in messages[0]
    assert int(messages[0].rsplit(" ", 1)[1]) >= 2
    for got, want in zip(resumed.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(got, want)
    assert accuracy > 0.85

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(workdir / "logs"))
    events.Reload()
    steps = sorted({e.step for e in events.Tensors("loss")})
    assert steps[-1] == epochs
