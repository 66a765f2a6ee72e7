"""keras.utils.plot_model / model_to_dot: drawing a model needs pydot and graphviz, as in Keras."""


def _check_drawing_tools(caller):
    try:
        import pydot
    except ImportError as error:
        raise ImportError(f"You must install pydot (`pip install pydot`) for `{caller}` to work.") from error
    try:
        pydot.Dot.create(pydot.Dot())
    except Exception as error:      # pydot reports a missing `dot` program in several ways
        raise ImportError("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) "
                          f"for `{caller}` to work.") from error
    raise NotImplementedError(f"`{caller}`: tapeflow does not draw model graphs yet (pydot and graphviz are "
                              "installed, but the graph builder is not implemented).")


def model_to_dot(model, *args, **kwargs):
    _check_drawing_tools("model_to_dot")


def plot_model(model, *args, **kwargs):
    _check_drawing_tools("plot_model")
