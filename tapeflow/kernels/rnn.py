"""One time step of the LSTM, GRU and SimpleRNN recurrences, forward and backward.

The sequence op (``tapeflow/ops/rnn_ops.py``) loops over the steps: the
recurrent product ``h @ R`` of a step is one BLAS call, the exponentials and
tanh of the forward are numpy's vectorised ufuncs (several times faster than
numba's scalar libm calls), and these kernels do the rest of a step's
elementwise work in one pass each: the sigmoids 1 / (1 + exp(-x)) from the
exponentials, the state updates with their masks, and the whole backward
step, which is arithmetic on saved gate values only. Arrays are 2-D (batch, ...)
views, possibly strided; ``m`` is the step's (batch,) mask: a masked row keeps
its state, and passes its state's cotangent straight through.

Gate layouts are Keras's: LSTM [i, f, c, o], GRU [z, r, h].
"""

from numba import njit


@njit(cache=True)
def lstm_state(gates, neg_g, c_prev, m, c):
    """On entry ``gates`` holds exp(-pre-activation) and ``neg_g`` = tanh(-candidate pre-activation); on exit
    gates = [i, f, g, o] = [sig, sig, tanh, sig](pre-activation), and c = f*c_prev + i*g (c_prev on masked
    rows)."""
    batch, units = c.shape
    for b in range(batch):
        for u in range(units):
            i = 1.0 / (1.0 + gates[b, u])
            f = 1.0 / (1.0 + gates[b, units + u])
            g = -neg_g[b, u]
            gates[b, u] = i
            gates[b, units + u] = f
            gates[b, 2 * units + u] = g
            gates[b, 3 * units + u] = 1.0 / (1.0 + gates[b, 3 * units + u])
            c[b, u] = f * c_prev[b, u] + i * g if m[b] else c_prev[b, u]


@njit(cache=True)
def lstm_output(gates, tc, h_prev, m, h):
    """h = o * tanh(c) (h_prev on masked rows)."""
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
            continue
        for u in range(units):
            h[b, u] = gates[b, 3 * units + u] * tc[b, u]


@njit(cache=True)
def lstm_backward(dh_out, dc_out, drec_h, dh_pass, dc_carry, gates, tc_all, c_prev, m, dz):
    """dz = cotangent of the step's gate pre-activations. On entry ``drec_h`` is the cotangent reaching
    this step's h through the next step's ``h @ R``, ``dh_pass``/``dc_carry`` what reaches it directly;
    on exit ``dh_pass``/``dc_carry`` hold what reaches h_prev/c_prev other than through ``h_prev @ R``."""
    batch, units = c_prev.shape
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
            tc = tc_all[b, u]
            dcc += dh * o * (1.0 - tc * tc)
            dz[b, u] = dcc * g * i * (1.0 - i)
            dz[b, units + u] = dcc * c_prev[b, u] * f * (1.0 - f)
            dz[b, 2 * units + u] = dcc * i * (1.0 - g * g)
            dz[b, 3 * units + u] = dh * tc * o * (1.0 - o)
            dh_pass[b, u] = 0.0
            dc_carry[b, u] = dcc * f


@njit(cache=True)
def gru_candidate(zt, neg_rec, saved):
    """reset_after=True. On entry saved[:, :2U] holds exp(-pre-activation) of z and r, ``neg_rec`` is
    -(h_prev @ R + recurrent bias). Writes saved = [z, r, x_h + r * rec_h, rec_h]."""
    batch = saved.shape[0]
    units = saved.shape[1] // 4
    for b in range(batch):
        for u in range(units):
            saved[b, u] = 1.0 / (1.0 + saved[b, u])
            r = 1.0 / (1.0 + saved[b, units + u])
            rh = -neg_rec[b, 2 * units + u]
            saved[b, units + u] = r
            saved[b, 3 * units + u] = rh
            saved[b, 2 * units + u] = zt[b, 2 * units + u] + r * rh


@njit(cache=True)
def gru_v1_gates(saved, h_prev):
    """reset_after=False. On entry saved[:, :2U] holds exp(-pre-activation) of z and r. Writes
    saved = [z, r, ., r * h_prev]."""
    batch, units = h_prev.shape
    for b in range(batch):
        for u in range(units):
            saved[b, u] = 1.0 / (1.0 + saved[b, u])
            r = 1.0 / (1.0 + saved[b, units + u])
            saved[b, units + u] = r
            saved[b, 3 * units + u] = r * h_prev[b, u]


@njit(cache=True)
def gru_state(saved, h_prev, m, h):
    """h = z * h_prev + (1 - z) * hh from saved = [z, r, hh, .] (h_prev on masked rows)."""
    batch, units = h.shape
    for b in range(batch):
        if not m[b]:
            for u in range(units):
                h[b, u] = h_prev[b, u]
            continue
        for u in range(units):
            z = saved[b, u]
            h[b, u] = z * h_prev[b, u] + (1.0 - z) * saved[b, 2 * units + u]


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
def masked_state(new, h_prev, m, h):
    """h = new, or h_prev on masked rows."""
    batch, units = h.shape
    for b in range(batch):
        src = new if m[b] else h_prev
        for u in range(units):
            h[b, u] = src[b, u]


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
