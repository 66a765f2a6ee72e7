"""Crossentropy metrics: a Mean of the matching loss function."""
from .. import losses as losses_module
from .reduction_metrics import _wrapper_class


def _crossentropy_metric(public_name, loss_name, **defaults):
    def fn(y_true, y_pred, **kwargs):
        return getattr(losses_module, loss_name)(y_true, y_pred, **kwargs)
    fn.__name__ = loss_name
    return _wrapper_class(public_name, fn, loss_name, **defaults)


BinaryCrossentropy = _crossentropy_metric("BinaryCrossentropy", "binary_crossentropy", from_logits=False,
                                          label_smoothing=0.0)


CategoricalCrossentropy = _crossentropy_metric("CategoricalCrossentropy", "categorical_crossentropy",
                                               from_logits=False, label_smoothing=0.0)


SparseCategoricalCrossentropy = _crossentropy_metric("SparseCategoricalCrossentropy",
                                                     "sparse_categorical_crossentropy", from_logits=False)
