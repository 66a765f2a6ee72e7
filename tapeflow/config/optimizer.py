"""tf.config.optimizer: graph-optimizer switches, accepted and reported back."""
_jit = [False]
_options = {}


def set_jit(enabled):
    _jit[0] = enabled if enabled in ("autoclustering",) else bool(enabled)


def get_jit():
    return _jit[0]


def set_experimental_options(options):
    _options.update(dict(options))


def get_experimental_options():
    return dict(_options)
