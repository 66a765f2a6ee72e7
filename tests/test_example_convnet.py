"""examples/convnet.py: the Keras MNIST convnet example's model on the shipped digits."""
import os
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)

import convnet  # noqa: E402


def test_the_convnet_example_reaches_97_percent_and_reloads_identically(tmp_path):
    accuracy, identical = convnet.main(verbose=0, save_dir=str(tmp_path))
    assert accuracy >= 0.97 and identical
