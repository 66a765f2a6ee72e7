"""tf.config.run_functions_eagerly: run tf.function bodies as plain Python (for debugging)."""
_eagerly = [False]


def run_functions_eagerly(run_eagerly):
    _eagerly[0] = bool(run_eagerly)


def functions_run_eagerly():
    return _eagerly[0]
