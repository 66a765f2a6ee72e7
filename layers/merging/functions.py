"""The functional shortcuts of the merging layers: ``add([a, b])`` is ``Add()([a, b])``."""
from .add import Add
from .average import Average
from .concatenate import Concatenate
from .dot import Dot
from .maximum import Maximum
from .minimum import Minimum
from .multiply import Multiply
from .subtract import Subtract


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    return Dot(axes=axes, **kwargs)(inputs)
