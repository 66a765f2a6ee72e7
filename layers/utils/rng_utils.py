"""set_random_seed: one seed for tapeflow's global generator, numpy's and Python's."""
import numpy as np


def set_random_seed(seed):
    """Seeds tapeflow's global generator (initializers, dropout, shuffling) and numpy's and Python's."""
    import random

    import tapeflow
    if not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(int(seed))
    np.random.seed(int(seed))
    tapeflow.random.set_seed(int(seed))
