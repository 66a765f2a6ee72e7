"""``model.summary()``: the Keras 3 table, drawn with the same box characters and column widths.

Keras renders the table with ``rich``; the widths here follow the same rule:
fractions of ``line_length`` (at most the terminal width minus 4) give each
column's content width, cells get one space of padding on each side, and if
the table is too wide every column gives up an equal share of the excess.
"""
import shutil
import warnings

import numpy as np

from tapeflow.framework.tensor import host_array

from ..utils import tree


def readable_memory_size(size):
    units = ["B", "KB", "MB", "GB", "TB", "PB"]
    for unit in units:
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} {units[-1]}"


def _count(variables):
    count = sum(int(np.prod(v.shape)) for v in variables)
    memory = sum(int(np.prod(v.shape)) * np.dtype(host_array(v).dtype).itemsize for v in variables)
    return count, memory


def _ratio_reduce(total, ratios, maximums, values):
    """Take ``total`` away from ``values`` in proportion to ``ratios`` (rich's rule)."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return list(values)
    remaining = total
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            distributed = min(maximum, round(ratio * remaining / total_ratio))
            out.append(value - distributed)
            remaining -= distributed
            total_ratio -= ratio
        else:
            out.append(value)
    return out


def _wrap(text, width):
    """Greedy word wrap; words longer than ``width`` are cut."""
    lines = []
    for paragraph in str(text).split("\n"):
        current = ""
        for word in paragraph.split(" "):
            while len(word) > width:
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:width])
                word = word[width:]
            if not current:
                current = word
            elif len(current) + 1 + len(word) <= width:
                current += " " + word
            else:
                lines.append(current)
                current = word
        lines.append(current)
    return lines or [""]


def _align(text, width, how):
    if how == "right":
        return text.rjust(width)
    if how == "center":
        return text.center(width)
    return text.ljust(width)


def _format_shape(shape):
    return str(tuple(shape))


def format_layer_shape(layer):
    nodes = layer._inbound_nodes
    if not nodes and not layer._build_shapes_dict:
        return "?"
    if nodes:
        outputs = nodes[-1].outputs
        shapes = tree.map_structure(lambda t: _format_shape(t.shape), outputs)
        if isinstance(shapes, str):
            return shapes
        return str(shapes).replace("'", "")
    try:
        (shape,) = layer._build_shapes_dict.values()
        out = layer.compute_output_shape(shape)
    except (NotImplementedError, ValueError, TypeError):
        return "?"
    shapes = tree.map_shape_structure(_format_shape, out)
    return shapes if isinstance(shapes, str) else str(shapes).replace("'", "")


def _is_sequential_like(model):
    from .functional import Functional
    from .sequential import Sequential
    if isinstance(model, Sequential) or not isinstance(model, Functional):
        return True
    nodes = []
    for depth_nodes in model._nodes_by_depth.values():
        if len(depth_nodes) > 1 or (len(depth_nodes) == 1 and len(depth_nodes[0].input_tensors) > 1):
            return False
        nodes.extend(depth_nodes)
    for layer in model.layers:
        if sum(1 for node in layer._inbound_nodes if node in nodes) > 1:
            return False
    return True


def _connections(layer, relevant_nodes):
    parts = []
    for node in layer._inbound_nodes:
        if relevant_nodes is not None and node not in relevant_nodes:
            continue
        for t in node.input_tensors:
            inbound, node_index, tensor_index = t._keras_history
            parts.append(f"{inbound.name}[{node_index}][{tensor_index}]")
    return ", ".join(parts) if parts else "-"


def print_summary(model, line_length=None, positions=None, print_fn=None, expand_nested=False,
                  show_trainable=False, layer_range=None):
    if expand_nested:
        warnings.warn("summary(expand_nested=True) is not supported by tapeflow; nested models are shown as one "
                      "row each.", stacklevel=3)
    sequential_like = _is_sequential_like(model)
    layers = list(model.layers)
    if layer_range is not None:
        names = [layer.name for layer in layers]
        if len(layer_range) != 2 or layer_range[0] not in names or layer_range[1] not in names:
            raise ValueError(f"`layer_range` must be a list of two layer names of the model. Received: "
                             f"layer_range={layer_range}; layers: {names}")
        layers = layers[names.index(layer_range[0]):names.index(layer_range[1]) + 1]
    if sequential_like:
        default_length = 88
        positions = positions or [0.45, 0.80, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #"]
        alignment = ["left", "left", "right"]
        relevant = None
    else:
        default_length = 108
        positions = positions or [0.3, 0.56, 0.74, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        alignment = ["left", "left", "right", "left"]
        relevant = [n for nodes in model._nodes_by_depth.values() for n in nodes]
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        alignment.append("center")
    default_length = min(default_length, shutil.get_terminal_size().columns - 4)
    line_length = line_length or default_length
    if positions[-1] <= 1:
        positions = [int(p * line_length) for p in positions]
    widths, current = [], 0
    for position in positions:
        width = position - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width)
        current = position

    rows = []
    for layer in layers:
        name = f"{layer.name} ({type(layer).__name__})"
        params = f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"
        row = [name, format_layer_shape(layer), params]
        if not sequential_like:
            row.append(_connections(layer, relevant))
        if show_trainable:
            row.append("Y" if layer.trainable and layer.weights else ("N" if layer.weights else "-"))
        rows.append(row)

    # rich: padded widths, shrunk evenly to fit line_length minus the vertical borders.
    cells = [w + 2 for w in widths]
    available = line_length - (len(cells) + 1)
    if sum(cells) > available:
        cells = _ratio_reduce(sum(cells) - available, [1] * len(cells), cells, cells)
    inner = [max(1, c - 2) for c in cells]

    def border(left, mid, right, fill):
        return left + mid.join(fill * c for c in cells) + right

    def render(row, vertical):
        wrapped = [_wrap(text, w) for text, w in zip(row, inner)]
        height = max(len(w) for w in wrapped)
        out = []
        for i in range(height):
            parts = [" " + _align(w[i] if i < len(w) else "", width, how) + " "
                     for w, width, how in zip(wrapped, inner, alignment)]
            out.append(vertical + vertical.join(parts) + vertical)
        return out

    lines = [f'Model: "{model.name}"', border("┏", "┳", "┓", "━")]
    lines += render(header, "┃")
    lines.append(border("┡", "╇", "┩", "━"))
    for i, row in enumerate(rows):
        if i:
            lines.append(border("├", "┼", "┤", "─"))
        lines += render(row, "│")
    lines.append(border("└", "┴", "┘", "─"))

    trainable_count, trainable_memory = _count(model.trainable_weights)
    non_trainable_count, non_trainable_memory = _count(model.non_trainable_weights)
    optimizer = getattr(model, "optimizer", None)
    optimizer_count = optimizer_memory = 0
    if optimizer is not None and getattr(optimizer, "built", False):
        optimizer_count, optimizer_memory = _count(list(optimizer.variables))
    total = trainable_count + non_trainable_count + optimizer_count
    total_memory = trainable_memory + non_trainable_memory + optimizer_memory
    lines.append(f" Total params: {total:,} ({readable_memory_size(total_memory)})")
    lines.append(f" Trainable params: {trainable_count:,} ({readable_memory_size(trainable_memory)})")
    lines.append(f" Non-trainable params: {non_trainable_count:,} ({readable_memory_size(non_trainable_memory)})")
    if optimizer_count:
        lines.append(f" Optimizer params: {optimizer_count:,} ({readable_memory_size(optimizer_memory)})")
    emit = print_fn or print
    for line in lines:
        emit(line)

