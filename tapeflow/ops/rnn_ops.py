"""A whole recurrent sequence (LSTM, GRU, SimpleRNN) as one op, and its backward through time as one op.

``RNNSequence(z, R, rb, h0, c0, mask)`` runs the recurrence over the input
projections ``z = x @ W + b`` of every step (batch, steps, gates*units),
computed by the caller with one matmul:

* ``cell="lstm"``: [i, f, g, o] = [sig, sig, tanh, sig](z_t + h @ R); c = f*c + i*g; h = o*tanh(c)
* ``cell="gru"`` (reset_after=True): rec = h @ R + rb; z, r = sig(z_t + rec)[:2]; hh = tanh(x_h + r*rec_h)
* ``cell="gru_v1"`` (reset_after=False): hh = tanh(x_h + (r*h) @ R_h)
* ``cell="simple"``: h = tanh(z_t + h @ R)

where, for all cells but "gru", z_t is (z[:, t] + rb) when rb holds the input bias (gates*units,): the op
adds it, and its gradient is the sum of the pre-activations' cotangents, which the backward kernels
accumulate as they write them. rb (0,) adds nothing (graphs saved before the op took the bias).

with h = z*h_prev + (1-z)*hh for the GRUs. ``mask`` (batch, steps) bool: a
masked step keeps the state. ``go_backwards`` reads the steps last to first.
Outputs, in processing order: the states h of every step (batch, steps,
units), the cell states c (LSTM; (batch, steps, 0) otherwise), and a reserve
(one flat buffer, see ``_reserve_layout``) of states and gate
values for the backward. Unused inputs are empty: rb (0,) and c0 (batch, 0).

The backward takes the cotangents of H and C; an empty one, shape (0,), stands for zeros (a loss that
reads only some outputs, or only H): the kernels then read nothing in its place.

Per step, the forward makes one BLAS call for ``h @ R`` into a preallocated
buffer, numpy's vectorised exp and tanh, and numba kernels for the rest
(``tapeflow/kernels/rnn.py``). The backward ``RNNSequenceGrad`` is one op too:
per step a kernel and one BLAS call for the cotangent through ``h_prev @ R``,
then one matmul over all steps for the recurrent weights' gradient. Its own
gradient differentiates ``sequence_by_steps`` (the same recurrence written
with ordinary ops) under an inner tape, so second and higher orders work.
"""
import numpy as np

from ..framework.batching import register_batching_rule
from ..framework.errors import InvalidArgumentError
from ..framework.registry import RegisterGradient as _PerSliceGradient, takes_missing_cotangents
from . import array_ops, math_ops, nn_ops, reduction_ops
from .common import execute, register_op, to_tensor

CELLS = {"lstm": 4, "gru": 3, "gru_v1": 3, "simple": 1}


def _kernels():
    from ..kernels import rnn  # numba loads on first use
    return rnn


def _check(z, R, rb, h0, c0, mask, cell):
    """Shapes of a sequence op's inputs, checked before any kernel indexes them (graphs come from files)."""
    if cell not in CELLS:
        raise InvalidArgumentError(f"RNNSequence: unknown cell {cell!r}; expected one of {sorted(CELLS)}")
    if z.ndim != 3 or R.ndim != 2 or h0.ndim != 2 or c0.ndim != 2 or rb.ndim != 1 or mask.ndim != 2:
        raise InvalidArgumentError("RNNSequence: expected z of rank 3, R, h0, c0 and mask of rank 2, rb of rank 1")
    batch, steps, width = z.shape
    units = R.shape[0]
    gates = CELLS[cell]
    dtypes = {a.dtype for a in (z, R, rb, h0, c0)}
    if len(dtypes) != 1 or z.dtype not in (np.float32, np.float64):
        raise InvalidArgumentError(f"RNNSequence: inputs must all be float32 or all float64, got "
                                   f"{sorted(map(str, dtypes))}")
    expected = {"R": (units, gates * units), "h0": (batch, units), "mask": (batch, steps),
                "rb": (gates * units,) if cell == "gru" or rb.size else (0,),
                "c0": (batch, units) if cell == "lstm" else (batch, 0)}
    actual = {"R": R.shape, "h0": h0.shape, "mask": mask.shape, "rb": rb.shape, "c0": c0.shape}
    if width != gates * units:
        raise InvalidArgumentError(f"RNNSequence: z has {width} columns; a {cell} cell of {units} units needs "
                                   f"{gates * units}")
    for name, shape in expected.items():
        if tuple(actual[name]) != shape:
            raise InvalidArgumentError(f"RNNSequence: {name} has shape {tuple(actual[name])}, expected {shape}")
    if mask.dtype != np.bool_:
        raise InvalidArgumentError(f"RNNSequence: mask must be bool, got {mask.dtype}")
    return batch, steps, units, gates


def _step_index(t, steps, go_backwards):
    return steps - 1 - t if go_backwards else t


def _reserve_layout(cell, steps, batch, units):
    """What the forward keeps for the backward, as (name, shape) parts of one flat buffer: Hp, at [:, s] the
    state input step s was processed from; per processing step, the LSTM's sigmoid gates [i, f, o], its
    candidate g and tanh(c); the GRUs' gates [z, r], candidate hh and recurrent term, h_prev @ R_h + rb_h
    (reset_after=True) or r * h_prev (reset_after=False). Each is contiguous per step: numpy's exp and tanh
    run at full speed only on contiguous blocks."""
    T, B, U = steps, batch, units
    parts = [("Hp", (B, T, U))]
    if cell == "lstm":
        parts += [("sig", (T, B, 3 * U)), ("cand", (T, B, U)), ("TC", (T, B, U))]
    elif cell in ("gru", "gru_v1"):
        parts += [("zr", (T, B, 2 * U)), ("HH", (T, B, U)), ("RH", (T, B, U))]
    return parts


def _reserve_size(layout):
    return sum(int(np.prod(shape)) for _, shape in layout)


def _reserve_views(reserve, layout):
    views, start = {}, 0
    for name, shape in layout:
        size = int(np.prod(shape))
        views[name] = reserve[start:start + size].reshape(shape)
        start += size
    return views


@register_op("RNNSequence", num_outputs=3)
def _rnn_sequence_fwd(z, R, rb, h0, c0, mask, cell, go_backwards):
    batch, steps, units, gates = _check(z, R, rb, h0, c0, mask, cell)
    z, R, rb, h0, c0, mask = map(np.ascontiguousarray, (z, R, rb, h0, c0, mask))
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: sigmoid is then 0
        return _forward(z, R, rb, h0, c0, mask, cell, go_backwards, batch, steps, units, gates)


def _forward(z, R, rb, h0, c0, mask, cell, go_backwards, batch, steps, units, gates):
    """The loop over the steps: per step one BLAS call for the recurrent product, numpy's exp and tanh, and
    kernels for the rest. Sigmoid gates are computed as 1 / (1 + exp(-x)) from the negated pre-activations."""
    K = _kernels()
    dtype = z.dtype
    U = units
    H = np.empty((batch, steps, U), dtype)
    C = np.empty((batch, steps, U if cell == "lstm" else 0), dtype)
    layout = _reserve_layout(cell, steps, batch, U)
    reserve = np.empty(_reserve_size(layout), dtype)
    parts = _reserve_views(reserve, layout)
    Hp = parts["Hp"]
    if steps:
        Hp[:, _step_index(0, steps, go_backwards)] = h0
    zr, HH, RH = parts.get("zr"), parts.get("HH"), parts.get("RH")
    rec = np.empty((batch, gates * U), dtype)  # the step's recurrent product
    tmp = np.empty((batch, U), dtype)
    if cell == "lstm":
        sig, cand, TC = parts["sig"], parts["cand"], parts["TC"]
    if cell == "gru_v1":
        R_zr, R_h = np.ascontiguousarray(R[:, :2 * U]), np.ascontiguousarray(R[:, 2 * U:])
        rec = rec[:, :2 * U]
    for t in range(steps):
        s = _step_index(t, steps, go_backwards)
        s_next = _step_index(t + 1, steps, go_backwards) if t + 1 < steps else -1
        if cell == "lstm":
            np.matmul(Hp[:, s], R, out=rec)
            K.lstm_preactivations(rec, z, rb, s, sig, cand, t)
            np.exp(sig[t], out=sig[t])
            np.tanh(cand[t], out=cand[t])
            K.lstm_state(sig, cand, C, TC, c0, mask, t, s)
            np.tanh(TC[t], out=TC[t])
            K.lstm_output(sig, TC, Hp, H, mask, t, s, s_next)
        elif cell == "gru":
            np.matmul(Hp[:, s], R, out=rec)
            K.gru_gate_inputs(rec, rb, z, zr, t, s)
            np.exp(zr[t], out=zr[t])
            K.gru_candidate(z, rec, zr, HH, RH, t, s)
            np.tanh(HH[t], out=HH[t])
            K.gru_state(zr, HH, Hp, H, mask, t, s, s_next)
        elif cell == "gru_v1":
            np.matmul(Hp[:, s], R_zr, out=rec)
            K.negated_preactivations(rec, z, rb, s, zr, t)
            np.exp(zr[t], out=zr[t])
            K.gru_v1_reset(zr, RH, Hp, t, s)
            np.matmul(RH[t], R_h, out=tmp)
            K.gru_v1_candidate(z, rb, tmp, HH, t, s)
            np.tanh(HH[t], out=HH[t])
            K.gru_state(zr, HH, Hp, H, mask, t, s, s_next)
        else:
            np.matmul(Hp[:, s], R, out=rec)
            K.simple_preactivation(rec, z, rb, s)
            np.tanh(rec, out=rec)
            K.masked_state(rec, Hp, H, mask, t, s, s_next)
    return H, C, reserve


ABSENT = (0,)  # the shape of a cotangent that stands for zeros


@register_op("RNNSequenceGrad", num_outputs=5)
def _rnn_sequence_grad_fwd(z, R, rb, h0, c0, mask, H, C, reserve, dH, dC, cell, go_backwards):
    batch, steps, units, gates = _check(z, R, rb, h0, c0, mask, cell)
    state_shape = (batch, steps, units)
    cell_state_shape = (batch, steps, units if cell == "lstm" else 0)
    layout = _reserve_layout(cell, steps, batch, units)
    for name, a, shape in (("H", H, state_shape), ("dH", dH, state_shape), ("C", C, cell_state_shape),
                           ("dC", dC, cell_state_shape), ("reserve", reserve, (_reserve_size(layout),))):
        if a.dtype != z.dtype or a.shape != shape and not (name in ("dH", "dC") and a.shape == ABSENT):
            expected = f"{shape} or {ABSENT} (zeros)" if name in ("dH", "dC") else f"{shape}"
            raise InvalidArgumentError(f"RNNSequenceGrad: {name} has shape {a.shape} ({a.dtype}), expected "
                                       f"{expected} ({z.dtype})")
    dH, dC = (np.empty((0, 0, 0), z.dtype) if a.shape == ABSENT else a for a in (dH, dC))
    c0, mask, H, C, reserve, dH, dC = map(np.ascontiguousarray, (c0, mask, H, C, reserve, dH, dC))
    input_bias = cell != "gru" and rb.size > 0
    return _backward(R, c0, mask, H, C, _reserve_views(reserve, layout), dH, dC, input_bias, cell, go_backwards,
                     batch, steps, units, gates)


def _backward(R, c0, mask, H, C, parts, dH, dC, input_bias, cell, go_backwards, batch, steps, units, gates):
    """The loop over the steps in reverse: per step a kernel for the elementwise backward and one BLAS call
    for the cotangent reaching h_prev through h_prev @ R; then the weight gradient of all steps as one matmul
    of the states each step started from and the cotangents of its recurrent product."""
    K = _kernels()
    dtype = R.dtype
    U = units
    dz = np.empty((batch, steps, gates * U), dtype)          # in input order
    db = np.zeros((gates * U if input_bias or cell == "gru" else 0,), dtype)  # the GRU's: its recurrent bias
    Hp = parts["Hp"]
    if cell == "gru":        # the cotangents of h_prev @ R + rb, in input order
        dRec = np.empty((batch, steps, 3 * U), dtype)
    elif cell == "gru_v1":   # in processing order
        dZs = np.empty((steps, batch, gates * U), dtype)
    drec_h = np.zeros((batch, U), dtype)
    dh_pass = np.zeros((batch, U), dtype)
    dc_carry = np.zeros((batch, U if cell == "lstm" else 0), dtype)
    RT = np.ascontiguousarray(R.T)
    if cell == "gru_v1":
        R_zrT = np.ascontiguousarray(R[:, :2 * U].T)
        R_hT = np.ascontiguousarray(R[:, 2 * U:].T)
        d_rh = np.empty((batch, U), dtype)
    for t in range(steps - 1, -1, -1):
        s = _step_index(t, steps, go_backwards)
        if cell == "lstm":
            K.lstm_backward(dH, dC, drec_h, dh_pass, dc_carry, parts["sig"], parts["cand"], parts["TC"], C, c0, mask,
                            t, s, dz, db)
            np.matmul(dz[:, s], RT, out=drec_h)
        elif cell == "gru":
            K.gru_backward(dH, drec_h, dh_pass, parts["zr"], parts["HH"], parts["RH"], Hp, mask, t, s, dRec, dz, db)
            np.matmul(dRec[:, s], RT, out=drec_h)
        elif cell == "gru_v1":
            K.gru_v1_backward_state(dH, drec_h, dh_pass, parts["zr"], parts["HH"], Hp, mask, t, s, dZs)
            np.matmul(dZs[t, :, 2 * U:], R_hT, out=d_rh)
            K.gru_v1_backward_gates(d_rh, dh_pass, parts["zr"], Hp, mask, t, s, dZs, dz, db)
            np.matmul(dZs[t, :, :2 * U], R_zrT, out=drec_h)
        else:
            K.simple_backward(dH, drec_h, dh_pass, H, mask, t, s, dz, db)
            np.matmul(dz[:, s], RT, out=drec_h)
    dh0 = drec_h + dh_pass
    H_prev = Hp.reshape(-1, U)
    flat = dz.reshape(-1, gates * U)
    drb = db
    if cell == "gru":
        dR = H_prev.T @ dRec.reshape(-1, 3 * U)
    elif cell == "gru_v1":
        rh = parts["RH"].reshape(-1, U)
        dR = np.concatenate([H_prev.T @ flat[:, :2 * U], rh.T @ dZs.reshape(-1, gates * U)[:, 2 * U:]], axis=1)
    else:
        dR = H_prev.T @ flat
    return dz, dR, drb, dh0, dc_carry


@register_batching_rule("RNNSequence")
def _rnn_sequence_rows(op, batched):
    """Row b of H and C depends on row b of z, h0, c0 and mask only, while the weights R and rb are constants;
    the reserve is step-major."""
    rows = not batched[1] and not batched[2]
    return rows, rows, False


def _absent_if_none(g, like):
    return array_ops.zeros(ABSENT, like.dtype) if g is None else g


def _is_absent(g):
    return g._value.shape == ABSENT


takes_missing_cotangents("RNNSequence")  # no zeros of the reserve's size (never read), nor of unread outputs


@_PerSliceGradient("RNNSequence")
def _rnn_sequence_grad(op, dH, dC, _d_reserve):
    z, R, rb, h0, c0, mask = op.inputs
    H, C, reserve = op.outputs
    dz, dR, drb, dh0, dc0 = execute(
        "RNNSequenceGrad", (z, R, rb, h0, c0, mask, H, C, reserve, _absent_if_none(dH, H), _absent_if_none(dC, C)),
        dict(op.attrs))
    return dz, dR, drb, dh0, dc0, None


@_PerSliceGradient("RNNSequenceGrad")
def _rnn_sequence_grad_grad(op, *cotangents):
    """Differentiates the backward written with ordinary ops. H, C and the reserve get no cotangent: they
    are functions of z, R, rb, h0 and c0, which receive the whole derivative."""
    from ..backprop import GradientTape  # backprop sits above ops
    z, R, rb, h0, c0, mask, _H, _C, _reserve, dH, dC = op.inputs
    attrs = op.attrs
    absent = [_is_absent(dH), _is_absent(dC)]
    sources = [z, R, rb, h0, c0] + [g for g, a in zip((dH, dC), absent) if not a]
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(sources)
        with GradientTape(watch_accessed_variables=False) as inner:
            inner.watch([z, R, rb, h0, c0])
            H, C = sequence_by_steps(z, R, rb, h0, c0, mask, attrs["cell"], attrs["go_backwards"])
        dH, dC = (array_ops.zeros_like(out) if a else g for g, out, a in zip((dH, dC), (H, C), absent))
        firsts = inner.gradient([H, C], [z, R, rb, h0, c0], output_gradients=[dH, dC])
        total = None
        for g, cot in zip(firsts, cotangents):
            if g is None or cot is None:
                continue
            term = reduction_ops.reduce_sum(math_ops.multiply(g, cot))
            total = term if total is None else math_ops.add(total, term)
    if total is None:
        return [None] * 11
    grads = list(outer.gradient(total, sources))
    dz, dR, drb, dh0, dc0 = grads[:5]
    ddH, ddC = (None if a else grads.pop(5) for a in absent)
    return [dz, dR, drb, dh0, dc0, None, None, None, None, ddH, ddC]


# ------------------------------------------------------------------ the same recurrence, step by step ---
def _step(cell, zt, R, rb, h, c, units):
    """One step of ``cell`` with ordinary ops: (h, c)."""
    M = math_ops
    if cell == "lstm":
        pre = M.add(zt, M.matmul(h, R))
        i, f, g, o = (pre[:, k * units:(k + 1) * units] for k in range(4))
        i, f, o = nn_ops.sigmoid(i), nn_ops.sigmoid(f), nn_ops.sigmoid(o)
        c = M.add(M.multiply(f, c), M.multiply(i, M.tanh(g)))
        return M.multiply(o, M.tanh(c)), c
    if cell == "simple":
        return M.tanh(M.add(zt, M.matmul(h, R))), c
    x_z, x_r, x_h = (zt[:, k * units:(k + 1) * units] for k in range(3))
    if cell == "gru":
        rec = M.add(M.matmul(h, R), rb)
        z = nn_ops.sigmoid(M.add(x_z, rec[:, :units]))
        r = nn_ops.sigmoid(M.add(x_r, rec[:, units:2 * units]))
        hh = M.tanh(M.add(x_h, M.multiply(r, rec[:, 2 * units:])))
    else:
        rec = M.matmul(h, R[:, :2 * units])
        z = nn_ops.sigmoid(M.add(x_z, rec[:, :units]))
        r = nn_ops.sigmoid(M.add(x_r, rec[:, units:]))
        hh = M.tanh(M.add(x_h, M.matmul(M.multiply(r, h), R[:, 2 * units:])))
    return M.add(M.multiply(z, h), M.multiply(M.subtract(1.0, z), hh)), c


def sequence_by_steps(z, R, rb, h0, c0, mask, cell, go_backwards):
    """(H, C) of RNNSequence, written with ordinary ops one step at a time."""
    steps = z._value.shape[1]
    units = R._value.shape[0]
    if cell != "gru" and rb._value.size:
        z = math_ops.add(z, rb)  # the input bias
    h, c = h0, c0
    hs, cs = [], []
    for t in range(steps):
        s = _step_index(t, steps, go_backwards)
        m = array_ops.expand_dims(mask[:, s], -1)
        h_new, c_new = _step(cell, z[:, s], R, rb, h, c, units)
        h = array_ops.where(m, h_new, h)
        if cell == "lstm":
            c = array_ops.where(m, c_new, c)
        hs.append(h)
        cs.append(c)
    return array_ops.stack(hs, axis=1), array_ops.stack(cs, axis=1)


def rnn_sequence(z, recurrent_kernel, h0, cell, c0=None, recurrent_bias=None, mask=None, go_backwards=False,
                 input_bias=None):
    """(states of every step, cell states of every step) of ``cell`` over input projections ``z``, plus
    ``input_bias`` when given (every cell but "gru", whose ``recurrent_bias`` takes the op's bias input).

    Returns H (batch, steps, units) and C (batch, steps, units for an LSTM, else 0), in processing order.
    """
    if input_bias is not None:
        if cell == "gru":
            raise ValueError("rnn_sequence: a 'gru' cell takes its input bias in z; rb is its recurrent bias")
        recurrent_bias = input_bias
    z = to_tensor(z)
    R = math_ops.cast(to_tensor(recurrent_kernel), z.dtype)
    h0 = math_ops.cast(to_tensor(h0), z.dtype)
    batch, steps = z._value.shape[:2]
    dtype = z._value.dtype
    c0 = array_ops.zeros((batch, 0), dtype.name) if c0 is None else math_ops.cast(to_tensor(c0), z.dtype)
    rb = array_ops.zeros((0,), dtype.name) if recurrent_bias is None else math_ops.cast(
        to_tensor(recurrent_bias), z.dtype)
    mask = array_ops.ones((batch, steps), "bool") if mask is None else math_ops.cast(to_tensor(mask), "bool")
    H, C, _ = execute("RNNSequence", (z, R, rb, h0, c0, mask), {"cell": cell, "go_backwards": bool(go_backwards)})
    return H, C
