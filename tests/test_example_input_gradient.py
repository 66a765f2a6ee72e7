"""examples/input_gradient_regularization.py: the penalty buys robustness to FGSM at no clean-accuracy cost."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import input_gradient_regularization as example  # noqa: E402


def test_penalty_improves_fgsm_accuracy_and_keeps_clean_accuracy(capsys):
    results = example.main(weight=0.5, epochs=15)
    (plain_clean, _, plain_attacked), (robust_clean, _, robust_attacked) = results.values()
    assert plain_clean >= 0.95 and robust_clean >= 0.95
    assert robust_attacked > plain_attacked + 0.1
    assert "FGSM acc" in capsys.readouterr().out
