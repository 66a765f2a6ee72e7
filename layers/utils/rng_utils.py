"""set_random_seed: one seed for tapeflow's global generator, numpy's and Python's."""
import numpy as np

from tapeflow.keras_ops import random as keras_random


def set_random_seed(seed):
    """Seeds Python's random (Keras's initializers and seed generators take their seeds from it), numpy's and
    tapeflow's global generator, and restarts keras.random's global seed generator."""
    import random

    import tapeflow
    if not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(int(seed))
    np.random.seed(int(seed))
    tapeflow.random.set_seed(int(seed))
    keras_random.reset_global_seed_generator()
