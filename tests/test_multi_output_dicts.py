"""A multi-output model compiled with dicts keyed by output names and fed `y` as such a dict, as Keras 3
takes them: the figures equal real Keras's (fixture written by Keras 3.15)."""
import json
import pathlib

import numpy as np
import pytest

import tapeflow as tf

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "keras3_multi_output"


def _compiled():
    model = tf.keras.models.load_model(FIXTURES / "two_outputs.keras")
    model.compile(optimizer="sgd", loss={"score": "mse", "cls": "sparse_categorical_crossentropy"},
                  loss_weights={"score": 1.0, "cls": 0.2}, metrics={"cls": ["accuracy"]})
    data = np.load(FIXTURES / "data.npz")
    return model, data["x"], {"score": data["score"], "cls": data["cls"]}


def test_evaluate_with_dict_targets_and_dict_loss_weights_matches_keras():
    model, x, y = _compiled()
    got = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    expected = json.loads((FIXTURES / "evaluation.json").read_text())
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, err_msg=key)


def test_fit_on_dict_targets_equals_fit_on_the_list_in_output_order():
    histories = []
    for as_dict in (True, False):
        model, x, y = _compiled()
        target = y if as_dict else [y["score"], y["cls"]]
        histories.append(model.fit(x, target, batch_size=8, epochs=2, verbose=0, shuffle=False).history)
    assert histories[0] == histories[1]


def test_a_target_for_no_output_is_refused():
    model, x, y = _compiled()
    with pytest.raises(ValueError, match=r"key\(s\) \['nope'\] do not correspond to any model output"):
        model.evaluate(x, dict(y, nope=y["cls"]), verbose=0)
