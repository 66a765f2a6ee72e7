"""EinsumDense: ``activation(einsum(equation, inputs, kernel) + bias)``, a Dense over any axes.

The equation names three operands, ``"<input>,<kernel>-><output>"``, with an
optional ``...`` at the same end of the input and the output standing for
axes passed through. ``output_shape`` is the output's shape without the batch
axis (an int is a one-axis shape); the kernel takes each of its axes' sizes
from the input axis or the output axis of the same letter. ``bias_axes`` lists
output letters that get a bias: the bias spans the output from the first such
letter to the end, with size 1 on the letters not listed.
"""
import re

from tapeflow.ops import math_ops

from .. import activations, constraints, initializers, regularizers
from ..layer import Layer, deserialize_nested_objects
from ..serialization_lib import keras_export, serialize_keras_object

_PLAIN = re.compile(r"^([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$")
_LEFT_ELIDED = re.compile(r"^\.\.\.([a-zA-Z]+),([a-zA-Z]+)->\.\.\.([a-zA-Z]+)$")
_RIGHT_ELIDED = re.compile(r"^([a-zA-Z]+)\.\.\.,([a-zA-Z]+)->([a-zA-Z]+)\.\.\.$")


def _parse_equation(equation):
    """(input_spec, kernel_spec, output_spec, elision) with elision None, "left" or "right"."""
    for pattern, elision in ((_PLAIN, None), (_LEFT_ELIDED, "left"), (_RIGHT_ELIDED, "right")):
        match = pattern.match(equation)
        if match:
            return match.group(1), match.group(2), match.group(3), elision
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                     "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def analyze_equation(equation, bias_axes, input_shape, output_shape):
    """(kernel_shape, bias_shape or None, full output shape) for inputs of ``input_shape``."""
    input_spec, kernel_spec, output_spec, elision = _parse_equation(equation)
    input_shape = tuple(input_shape)
    elided = len(input_shape) - len(input_spec)
    if elided < 0 or (elided > 0 and elision is None):
        raise ValueError(f"EinsumDense: the equation '{equation}' names {len(input_spec)} input axes, but the "
                         f"input has shape {input_shape}.")
    out = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    out.insert(0, input_shape[0])
    if elision == "left":
        out[1:1] = list(input_shape[1:elided])
    elif elision == "right":
        out.extend(input_shape[len(input_shape) - elided:])
    if len(out) != len(output_spec) + (elided if elision else 0):
        raise ValueError(f"EinsumDense: output_shape {output_shape} does not match the output '{output_spec}' of "
                         f"the equation '{equation}' (for an input of shape {input_shape}).")
    if elision == "left":
        input_axis = {c: i + elided - len(input_shape) for i, c in enumerate(input_spec)}
        output_axis = {c: i + elided - len(out) for i, c in enumerate(output_spec)}
    else:
        input_axis = {c: i for i, c in enumerate(input_spec)}
        output_axis = {c: i for i, c in enumerate(output_spec)}
    for c in input_spec:
        in_size, out_size = input_shape[input_axis[c]], out[output_axis[c]] if c in output_axis else None
        if c in output_axis and out_size is not None and out_size != in_size:
            raise ValueError(f"EinsumDense: input axis '{c}' has size {in_size}, but output_shape gives it "
                             f"{out_size} (equation '{equation}').")
    for c in output_spec:
        if c not in input_spec and c not in kernel_spec:
            raise ValueError(f"Dimension '{c}' was specified in the output '{output_spec}' but has no corresponding "
                             f"dim in the input spec '{input_spec}' or weight spec '{kernel_spec}'")
    kernel_shape = []
    for c in kernel_spec:
        if c in input_axis:
            kernel_shape.append(input_shape[input_axis[c]])
        elif c in output_axis:
            kernel_shape.append(out[output_axis[c]])
        else:
            raise ValueError(f"Weight dimension '{c}' did not have a match in either the input spec "
                             f"'{input_spec}' or the output spec '{output_spec}'. For this layer, the weight must "
                             "be fully specified.")
    if any(d is None for d in kernel_shape):
        raise ValueError(f"EinsumDense: the kernel shape {tuple(kernel_shape)} of equation '{equation}' has an "
                         f"undefined axis (input shape {input_shape}, output_shape {output_shape}).")
    bias_shape = None
    if bias_axes is not None:
        for c in bias_axes:
            if c not in output_spec:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(c) for c in bias_axes)
        bias_shape = [out[output_axis[c]] if c in bias_axes else 1 for c in output_spec[first:]]
        if elision == "right":
            bias_shape.extend([1] * elided)
    return tuple(kernel_shape), None if bias_shape is None else tuple(bias_shape), tuple(out)


@keras_export("keras.layers.EinsumDense")
class EinsumDense(Layer):
    def __init__(self, equation, output_shape, activation=None, bias_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None, quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        if lora_rank is not None or quantization_config is not None:
            raise ValueError("EinsumDense: LoRA and quantization are not supported by tapeflow. Received: "
                             f"lora_rank={lora_rank}, quantization_config={quantization_config}")
        _parse_equation(equation)
        self.equation = equation
        self.partial_output_shape = output_shape if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.full_output_shape = None
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        kernel_shape, bias_shape, full_output_shape = analyze_equation(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        self.full_output_shape = full_output_shape
        self.kernel = self.add_weight(name="kernel", shape=kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if bias_shape is not None:
            self.bias = self.add_weight(name="bias", shape=bias_shape, initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs, training=None):
        x = math_ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = math_ops.add(x, self.bias)
        if self.activation is not activations.linear:
            x = self.activation(x)
        return x

    def compute_output_shape(self, input_shape):
        return analyze_equation(self.equation, self.bias_axes, input_shape, self.partial_output_shape)[2]

    def get_config(self):
        config = super().get_config()
        s = serialize_keras_object
        output_shape = self.partial_output_shape
        config.update({
            "output_shape": [output_shape] if isinstance(output_shape, int) else list(output_shape),
            "equation": self.equation,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            "kernel_initializer": s(self.kernel_initializer),
            "bias_initializer": s(self.bias_initializer),
            "kernel_regularizer": s(self.kernel_regularizer),
            "bias_regularizer": s(self.bias_regularizer),
            "kernel_constraint": s(self.kernel_constraint),
            "bias_constraint": s(self.bias_constraint),
            "quantization_config": None,
        })
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(deserialize_nested_objects(config))
