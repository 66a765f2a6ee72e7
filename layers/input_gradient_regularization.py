"""Input-gradient regularisation (Finlay & Oberman, 2019) through ``fit``.

Wrap any model; ``fit`` then minimises

    loss + weight * mean_i ||d loss_i / d x_i||^2

where loss_i is example i's loss. This is the advanced guide's inner-tape
recipe (an inner tape watches only the input, its gradient is computed inside
an outer tape over the weights) placed in ``train_step``, Keras's documented
place for custom training logic. The wrapper shares the wrapped model's
layers and weights, so the model itself is what you save and serve.
"""
from tapeflow.backprop import GradientTape
from tapeflow.framework.conversion import convert_to_tensor
from tapeflow.framework.tensor import host_array
from tapeflow.ops import array_ops, math_ops, reduction_ops

from .trainers.data_adapter import unpack_x_y_sample_weight
from .trainers.trainer import call_compute_loss
from .metrics import Mean
from .models.model import Model


def input_gradient_penalty(model, x, y, sample_weight=None, loss_fn=None, training=True):
    """(loss, y_pred, mean over examples of ||d loss_i / d x_i||^2) for one batch.

    ``loss_fn(y, y_pred, sample_weight)`` defaults to the model's compiled loss.
    Call it inside a tape over the weights to differentiate the penalty.
    """
    x = convert_to_tensor(x)
    if x.dtype.is_integer:
        raise TypeError(f"input-gradient regularisation needs floating-point inputs, got {x.dtype.name}")
    with GradientTape(watch_accessed_variables=False) as inner:
        inner.watch(x)
        y_pred = model(x, training=training)
        if loss_fn is None:
            loss = call_compute_loss(model, x, y, y_pred, sample_weight, training)   # as fit calls it
        else:
            loss = loss_fn(y, y_pred, sample_weight)
    g = inner.gradient(loss, x)
    if g is None:
        raise ValueError("input-gradient regularisation: the loss does not depend on the input")
    batch = host_array(x).shape[0]   # the rows of this call (a traced step is specialised to them)
    # The loss is a batch mean, so example i's own input gradient is batch * g_i.
    per_example = array_ops.reshape(g * float(batch), [batch, -1])
    penalty = reduction_ops.reduce_mean(reduction_ops.reduce_sum(math_ops.square(per_example), axis=1))
    return loss, y_pred, penalty


class InputGradientRegularizedModel(Model):
    """A model trained with an input-gradient penalty.

    >>> robust = InputGradientRegularizedModel(model, weight=0.01)
    >>> robust.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    >>> robust.fit(x, y)          # logs also show `input_gradient_penalty`

    Args:
        model: The model to regularise (its weights are trained in place).
        weight: Multiplies the mean squared input-gradient norm added to the loss.
    """

    def __init__(self, model, weight=0.01, name=None, **kwargs):
        if not isinstance(model, Model):
            raise TypeError(f"InputGradientRegularizedModel wraps a Keras model, got {type(model).__name__}")
        if weight < 0:
            raise ValueError(f"`weight` must be >= 0. Received: weight={weight!r}")
        super().__init__(name=name or f"{model.name}_input_gradient_regularized", **kwargs)
        self.model = model
        self.weight = float(weight)
        self.penalty_tracker = Mean(name="input_gradient_penalty")

    def call(self, inputs, training=None):
        return self.model(inputs, training=training)

    def train_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            loss, y_pred, penalty = input_gradient_penalty(self, x, y, sample_weight)
            total = loss + math_ops.cast(penalty, loss.dtype) * self.weight
        self._loss_tracker.update_state(host_array(loss), sample_weight=x.shape[0])
        self.penalty_tracker.update_state(host_array(penalty), sample_weight=x.shape[0])
        variables = self.trainable_weights
        self.optimizer.apply_gradients(zip(tape.gradient(total, variables), variables))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    @property
    def metrics(self):
        out = super().metrics
        return out if any(m is self.penalty_tracker for m in out) else out + [self.penalty_tracker]

    def get_config(self):
        return {"name": self.name, "weight": self.weight}
