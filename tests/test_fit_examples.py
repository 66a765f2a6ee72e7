"""The two digits examples reach the accuracy they promise (>= 95% on held-out digits)."""
import importlib.util
import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name,kwargs", [("keras_fit", {"verbose": 0, "save_dir": None}),
                                         ("custom_training_loop", {})])
def test_digits_examples_reach_95_percent(name, kwargs, capsys):
    accuracy = load(name).main(**kwargs)
    assert accuracy >= 0.95
    assert "accuracy" in capsys.readouterr().out


def test_flagship_saves_reloads_and_keeps_training(tmp_path, capsys):
    accuracy = load("keras_fit").main(epochs=3, verbose=2, save_dir=str(tmp_path))
    out = capsys.readouterr().out
    assert (tmp_path / "digits.keras").exists()
    assert "predictions identical: True" in out and "one more epoch from the reloaded model" in out
    assert accuracy > 0.8
