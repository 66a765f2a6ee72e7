"""One time step of the LSTM, GRU and SimpleRNN recurrences, forward and backward.

The sequence op (``tapeflow/ops/rnn_ops.py``) loops over the steps: the
recurrent product ``h @ R`` of a step is one BLAS call, these kernels do all
the elementwise work of the step in one pass. Arrays are 2-D (batch, ...)
views, possibly strided; ``m`` is the step's (batch,) mask: a masked row keeps
its state, and passes its state's cotangent straight through.

Gate layouts are Keras's: LSTM [i, f, c, o], GRU [z, r, h].
"""
import math

from numba import njit


@njit(cache=True, inline="always")
def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@njit(cache=True)
def lstm_forward(zt, rec, m, h_prev, c_prev, gates, h, c):
    """gates = [i, f, g, o] activations; c = f*c_prev + i*g; h = o*tanh(c)."""
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
                c[b, u] = c_prev[b, u]
                for k in range(4):
                    gates[b, k * units + u] = 0.0
            continue
        for u in range(units):
            i = _sigmoid(zt[b, u] + rec[b, u])
            f = _sigmoid(zt[b, units + u] + rec[b, units + u])
            g = math.tanh(zt[b, 2 * units + u] + rec[b, 2 * units + u])
            o = _sigmoid(zt[b, 3 * units + u] + rec[b, 3 * units + u])
            cc = f * c_prev[b, u] + i * g
            gates[b, u] = i
            gates[b, units + u] = f
            gates[b, 2 * units + u] = g
            gates[b, 3 * units + u] = o
            c[b, u] = cc
            h[b, u] = o * math.tanh(cc)


@njit(cache=True)
def lstm_backward(dh_out, dc_out, drec_h, dh_pass, dc_carry, gates, c, c_prev, m, dz):
    """dz = cotangent of the step's gate pre-activations. On entry ``drec_h`` is the cotangent reaching
    this step's h through the next step's ``h @ R``, ``dh_pass``/``dc_carry`` what reaches it directly;
    on exit ``dh_pass``/``dc_carry`` hold what reaches h_prev/c_prev other than through ``h_prev @ R``."""
    batch, units = c.shape
    for b in range(batch):
        for u in range(units):
            dh = dh_out[b, u] + drec_h[b, u] + dh_pass[b, u]
            dcc = dc_out[b, u] + dc_carry[b, u]
            if not m[b]:
                for k in range(4):
                    dz[b, k * units + u] = 0.0
                dh_pass[b, u] = dh
                dc_carry[b, u] = dcc
                continue
            i = gates[b, u]
            f = gates[b, units + u]
            g = gates[b, 2 * units + u]
            o = gates[b, 3 * units + u]
            tc = math.tanh(c[b, u])
            dcc += dh * o * (1.0 - tc * tc)
            dz[b, u] = dcc * g * i * (1.0 - i)
            dz[b, units + u] = dcc * c_prev[b, u] * f * (1.0 - f)
            dz[b, 2 * units + u] = dcc * i * (1.0 - g * g)
            dz[b, 3 * units + u] = dh * tc * o * (1.0 - o)
            dh_pass[b, u] = 0.0
            dc_carry[b, u] = dcc * f


@njit(cache=True)
def gru_forward(zt, rec, m, h_prev, saved, h):
    """reset_after=True: rec = h_prev @ R + recurrent bias; hh = tanh(x_h + r * rec_h).
    saved = [z, r, hh, rec_h]."""
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
                for k in range(4):
                    saved[b, k * units + u] = 0.0
            continue
        for u in range(units):
            z = _sigmoid(zt[b, u] + rec[b, u])
            r = _sigmoid(zt[b, units + u] + rec[b, units + u])
            rh = rec[b, 2 * units + u]
            hh = math.tanh(zt[b, 2 * units + u] + r * rh)
            saved[b, u] = z
            saved[b, units + u] = r
            saved[b, 2 * units + u] = hh
            saved[b, 3 * units + u] = rh
            h[b, u] = z * h_prev[b, u] + (1.0 - z) * hh


@njit(cache=True)
def gru_backward(dh_out, drec_h, dh_pass, saved, h_prev, m, dz, drec):
    """Backward of gru_forward: dz for the input pre-activations, drec for ``h_prev @ R + bias``."""
    batch, units = h_prev.shape
    for b in range(batch):
        for u in range(units):
            dh = dh_out[b, u] + drec_h[b, u] + dh_pass[b, u]
            if not m[b]:
                for k in range(3):
                    dz[b, k * units + u] = 0.0
                    drec[b, k * units + u] = 0.0
                dh_pass[b, u] = dh
                continue
            z = saved[b, u]
            r = saved[b, units + u]
            hh = saved[b, 2 * units + u]
            rh = saved[b, 3 * units + u]
            dpre_h = dh * (1.0 - z) * (1.0 - hh * hh)
            dpre_z = dh * (h_prev[b, u] - hh) * z * (1.0 - z)
            dpre_r = dpre_h * rh * r * (1.0 - r)
            dz[b, u] = dpre_z
            dz[b, units + u] = dpre_r
            dz[b, 2 * units + u] = dpre_h
            drec[b, u] = dpre_z
            drec[b, units + u] = dpre_r
            drec[b, 2 * units + u] = dpre_h * r
            dh_pass[b, u] = dh * z


@njit(cache=True)
def gru_v1_gates(zt, rec_zr, h_prev, saved, rh):
    """reset_after=False, first half: z and r from ``h_prev @ R[:, :2U]``; rh = r * h_prev."""
    batch, units = h_prev.shape
    for b in range(batch):
        for u in range(units):
            z = _sigmoid(zt[b, u] + rec_zr[b, u])
            r = _sigmoid(zt[b, units + u] + rec_zr[b, units + u])
            saved[b, u] = z
            saved[b, units + u] = r
            rh[b, u] = r * h_prev[b, u]
            saved[b, 3 * units + u] = rh[b, u]


@njit(cache=True)
def gru_v1_state(zt, rec_h, m, h_prev, saved, h):
    """reset_after=False, second half: hh = tanh(x_h + (r * h_prev) @ R[:, 2U:]). saved = [z, r, hh, rh]."""
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
                for k in range(4):
                    saved[b, k * units + u] = 0.0
            continue
        for u in range(units):
            z = saved[b, u]
            hh = math.tanh(zt[b, 2 * units + u] + rec_h[b, u])
            saved[b, 2 * units + u] = hh
            h[b, u] = z * h_prev[b, u] + (1.0 - z) * hh


@njit(cache=True)
def gru_v1_backward_state(dh_out, drec_h, dh_pass, saved, h_prev, m, dz):
    """reset_after=False backward, first half: dz of the z and h gates; dh_pass = dh * z."""
    batch, units = h_prev.shape
    for b in range(batch):
        for u in range(units):
            dh = dh_out[b, u] + drec_h[b, u] + dh_pass[b, u]
            if not m[b]:
                for k in range(3):
                    dz[b, k * units + u] = 0.0
                dh_pass[b, u] = dh
                continue
            z = saved[b, u]
            hh = saved[b, 2 * units + u]
            dz[b, u] = dh * (h_prev[b, u] - hh) * z * (1.0 - z)
            dz[b, 2 * units + u] = dh * (1.0 - z) * (1.0 - hh * hh)
            dh_pass[b, u] = dh * z


@njit(cache=True)
def gru_v1_backward_gates(d_rh, dh_pass, saved, h_prev, m, dz):
    """reset_after=False backward, second half, given d_rh = dz_h @ R_h.T: dz of the r gate."""
    batch, units = h_prev.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                dz[b, units + u] = 0.0
            continue
        for u in range(units):
            r = saved[b, units + u]
            dz[b, units + u] = d_rh[b, u] * h_prev[b, u] * r * (1.0 - r)
            dh_pass[b, u] += d_rh[b, u] * r


@njit(cache=True)
def simple_forward(zt, rec, m, h_prev, h):
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
            continue
        for u in range(units):
            h[b, u] = math.tanh(zt[b, u] + rec[b, u])


@njit(cache=True)
def simple_backward(dh_out, drec_h, dh_pass, h, m, dz):
    batch, units = h.shape
    for b in range(batch):
        for u in range(units):
            dh = dh_out[b, u] + drec_h[b, u] + dh_pass[b, u]
            if not m[b]:
                dz[b, u] = 0.0
                dh_pass[b, u] = dh
            else:
                dz[b, u] = dh * (1.0 - h[b, u] * h[b, u])
                dh_pass[b, u] = 0.0
