"""One time step of the LSTM, GRU and SimpleRNN recurrences, forward and backward.

The sequence op (``tapeflow/ops/rnn_ops.py``) loops over the steps: the
recurrent product ``h @ R`` of a step is one BLAS call, the exponentials and
tanh of the forward are numpy's vectorised ufuncs (several times faster than
numba's scalar libm calls), and these kernels do the rest of a step's
elementwise work: the pre-activations, the sigmoids 1 / (1 + exp(-x)) from the
exponentials, the state updates with their masks, and the whole backward step,
which is arithmetic on saved gate values only.

Every kernel takes whole C-contiguous arrays and the step's indices: ``t`` is
the processing step, which indexes the op's step-major buffers (T, batch, ...)
and its outputs H, C (batch, T, ...) and their cotangents; ``s`` is the input
step (``T - 1 - t`` under go_backwards), which indexes z, dz (batch, T, ...)
and the mask (batch, T). ``Hp`` (batch, T, units) holds at [:, s] the state
input step s is processed from (the weight gradient's rows, aligned with dz),
written by the previous step for ``s_next`` (-1 after the last). A masked row
keeps its state, and passes its state's cotangent straight through.

Speed: per row, each loop runs over contiguous memory and reads or writes a
few arrays only, so that LLVM vectorises it (its run-time overlap checks are
few); ``error_model="numpy"`` drops the division-by-zero check that would
keep divisions scalar. Arithmetic is in the arrays' dtype (``one`` is a
scalar of that dtype), as the ops computing the same step by step do.

Gate layouts of z and dz are Keras's: LSTM [i, f, c, o], GRU [z, r, h]. The LSTM keeps its sigmoid gates
[i, f, o] (T, batch, 3U), its candidate (T, batch, U) and tanh(c) (T, batch, U) in separate step-major
buffers, the GRUs their gates [z, r] (T, batch, 2U), candidate and recurrent term (T, batch, U) likewise:
numpy's exp and tanh run several times faster on a contiguous block than on strided rows.
"""

from numba import njit

kernel = njit(cache=True, error_model="numpy")


@kernel
def _copy(dst, src):
    """dst = src for two rows (an explicit loop: numba's slice assignment is twice as slow)."""
    for j in range(dst.size):
        dst[j] = src[j]


@kernel
def _zero(dst):
    for j in range(dst.size):
        dst[j] = 0


# ------------------------------------------------------------------------------------- forward ---


@kernel
def _next_state(h, Hp, s_next, b):
    """Hp[b, s_next] = h, the state the next input step is processed from (none after the last: -1)."""
    if s_next >= 0:
        _copy(Hp[b, s_next], h)


@kernel
def negated_preactivations(rec, z, bias, s, out, t):
    """out[t, :, :w] = -(rec + (z[:, s, :w] + bias[:w])) for ``rec`` = h_prev @ R of width w: the argument of
    exp(-x) (and of tanh(-x)). An empty ``bias`` adds nothing."""
    batch, width = rec.shape
    for b in range(batch):
        r, x, o = rec[b], z[b, s], out[t, b]
        if bias.size:
            for j in range(width):
                o[j] = -(r[j] + (x[j] + bias[j]))
        else:
            for j in range(width):
                o[j] = -(r[j] + x[j])


@kernel
def sigmoids_in_place(e):
    """e = 1 / (1 + e): sigmoid(x) from e = exp(-x)."""
    one = e.dtype.type(1)
    for j in range(e.size):
        e[j] = one / (one + e[j])


@kernel
def lstm_preactivations(rec, z, bias, s, sig, cand, t):
    """From ``rec`` = h_prev @ R and z, both in Keras's gate order [i, f, g, o], plus ``bias`` (possibly
    empty): sig[t] = -[i, f, o] pre-activations side by side (the arguments of exp(-x)), cand[t] = the
    candidate's pre-activation (the argument of tanh)."""
    batch, width = rec.shape
    U = width // 4
    for b in range(batch):
        r, x, ns, g = rec[b], z[b, s], sig[t, b], cand[t, b]
        if bias.size:
            for u in range(2 * U):
                ns[u] = -(r[u] + (x[u] + bias[u]))
            for u in range(U):
                g[u] = r[2 * U + u] + (x[2 * U + u] + bias[2 * U + u])
            for u in range(U):
                ns[2 * U + u] = -(r[3 * U + u] + (x[3 * U + u] + bias[3 * U + u]))
        else:
            for u in range(2 * U):
                ns[u] = -(r[u] + x[u])
            for u in range(U):
                g[u] = r[2 * U + u] + x[2 * U + u]
            for u in range(U):
                ns[2 * U + u] = -(r[3 * U + u] + x[3 * U + u])


@kernel
def lstm_state(sig, cand, C, TC, c0, mask, t, s):
    """On entry sig[t] holds exp(-pre-activation) of [i, f, o] and cand[t] g = tanh(pre-activation); on
    exit sig[t] = [i, f, o], and C[:, t] and TC[t] the new cell state c = f*c_prev + i*g (c_prev on masked
    rows; TC then becomes tanh(c) in place)."""
    batch, units = C.shape[0], C.shape[2]
    for b in range(batch):
        row = sig[t, b]
        sigmoids_in_place(row)
        i, f, g = row[:units], row[units:2 * units], cand[t, b]
        c, tc = C[b, t], TC[t, b]
        c_prev = C[b, t - 1] if t > 0 else c0[b]
        if mask[b, s]:
            for u in range(units):
                tc[u] = f[u] * c_prev[u] + i[u] * g[u]
            _copy(c, tc)
        else:
            _copy(c, c_prev)
            _copy(tc, c_prev)


@kernel
def lstm_output(sig, TC, Hp, H, mask, t, s, s_next):
    """h = o * tanh(c) (h_prev on masked rows), into H[:, t] and Hp[:, s_next], given TC[t] = tanh(C[:, t])."""
    batch, units = TC.shape[1], TC.shape[2]
    for b in range(batch):
        h = H[b, t]
        if mask[b, s]:
            o, tc = sig[t, b, 2 * units:], TC[t, b]
            for u in range(units):
                h[u] = o[u] * tc[u]
        else:
            _copy(h, Hp[b, s])
        _next_state(h, Hp, s_next, b)


@kernel
def gru_gate_inputs(rec, rb, z, zr, t, s):
    """reset_after=True. On entry ``rec`` = h_prev @ R; on exit rec = h_prev @ R + rb and
    zr[t] = -(pre-activations of z and r)."""
    batch, width = rec.shape
    units = width // 3
    for b in range(batch):
        r = rec[b]
        for j in range(width):
            r[j] += rb[j]
        x, o = z[b, s], zr[t, b]
        for j in range(2 * units):
            o[j] = -(r[j] + x[j])


@kernel
def gru_candidate(z, rec, zr, HH, RH, t, s):
    """reset_after=True. On entry zr[t] holds exp(-pre-activation) of z and r, ``rec`` is h_prev @ R + rb.
    Writes zr[t] = [z, r], HH[t] = x_h + r * rec_h (the candidate's pre-activation) and RH[t] = rec_h."""
    batch = rec.shape[0]
    units = rec.shape[1] // 3
    for b in range(batch):
        row = zr[t, b]
        sigmoids_in_place(row)
        r, hh, rh = row[units:], HH[t, b], RH[t, b]
        rec_h, x_h = rec[b, 2 * units:], z[b, s, 2 * units:]
        _copy(rh, rec_h)
        for u in range(units):
            hh[u] = x_h[u] + r[u] * rec_h[u]


@kernel
def gru_v1_reset(zr, RH, Hp, t, s):
    """reset_after=False. On entry zr[t] holds exp(-pre-activation) of z and r; on exit zr[t] = [z, r] and
    RH[t] = r * h_prev."""
    batch, units = Hp.shape[0], Hp.shape[2]
    for b in range(batch):
        row = zr[t, b]
        sigmoids_in_place(row)
        r, rh, h_prev = row[units:], RH[t, b], Hp[b, s]
        for u in range(units):
            rh[u] = r[u] * h_prev[u]


@kernel
def gru_v1_candidate(z, bias, rh_R, HH, t, s):
    """reset_after=False: HH[t] = (x_h + b_h) + (r * h_prev) @ R_h, the candidate's pre-activation (no b_h
    for an empty ``bias``)."""
    batch, units = rh_R.shape
    for b in range(batch):
        x_h, p, hh = z[b, s, 2 * units:], rh_R[b], HH[t, b]
        if bias.size:
            b_h = bias[2 * units:]
            for u in range(units):
                hh[u] = (x_h[u] + b_h[u]) + p[u]
        else:
            for u in range(units):
                hh[u] = x_h[u] + p[u]


@kernel
def gru_state(zr, HH, Hp, H, mask, t, s, s_next):
    """h = z * h_prev + (1 - z) * hh from zr[t] = [z, r] and HH[t] = hh (h_prev on masked rows), into H[:, t]
    and Hp[:, s_next]."""
    batch, units = Hp.shape[0], Hp.shape[2]
    one = zr.dtype.type(1)
    for b in range(batch):
        h, h_prev = H[b, t], Hp[b, s]
        if mask[b, s]:
            zg, hh = zr[t, b, :units], HH[t, b]
            for u in range(units):
                h[u] = zg[u] * h_prev[u] + (one - zg[u]) * hh[u]
        else:
            _copy(h, h_prev)
        _next_state(h, Hp, s_next, b)


@kernel
def simple_preactivation(rec, z, bias, s):
    """rec = h_prev @ R + (z[:, s] + bias) in place, the SimpleRNN pre-activation (no bias if it is empty)."""
    batch, units = rec.shape
    for b in range(batch):
        r, x = rec[b], z[b, s]
        if bias.size:
            for u in range(units):
                r[u] += x[u] + bias[u]
        else:
            for u in range(units):
                r[u] += x[u]


@kernel
def masked_state(new, Hp, H, mask, t, s, s_next):
    """h = new, or h_prev on masked rows, into H[:, t] and Hp[:, s_next]."""
    for b in range(new.shape[0]):
        h = H[b, t]
        _copy(h, new[b] if mask[b, s] else Hp[b, s])
        _next_state(h, Hp, s_next, b)


# ------------------------------------------------------------------------------------ backward ---
# Each backward kernel takes ``drec_h``, the cotangent reaching the step's h through the next step's
# ``h @ R``, and ``dh_pass`` (``dc_carry``), what reaches it directly; it leaves in them what reaches h_prev
# (c_prev) other than through ``h_prev @ R``. It writes the step's pre-activation cotangents into ``dz``
# (batch, T, ...) at the input step; the GRUs also the cotangent of the recurrent product where it differs
# from dz (reset_after=True) or is used in blocks (reset_after=False). An empty cotangent of the outputs
# (``dH``, ``dC``) stands for zeros, and is not read. Given a non-empty ``db`` (the input bias's gradient,
# zeros on entry), they add the step's dz rows to it while they are in cache.


@kernel
def _total_state_cotangent(dH, drec_h, dh_pass, t, b):
    """dh_pass[b] = dH[b, t] + drec_h[b] + dh_pass[b]: all that reaches the step's h."""
    dh, d_rec = dh_pass[b], drec_h[b]
    if dH.size:
        d_out = dH[b, t]
        for u in range(dh.size):
            dh[u] = d_out[u] + d_rec[u] + dh[u]
    else:
        for u in range(dh.size):
            dh[u] = d_rec[u] + dh[u]


@kernel
def _accumulate(total, row):
    """total += row, unless ``total`` is empty."""
    for j in range(total.size):
        total[j] += row[j]


@kernel
def lstm_backward(dH, dC, drec_h, dh_pass, dc_carry, sig, cand, TC, C, c0, mask, t, s, dz, db):
    """Given the forward's sig[t] = [i, f, o], cand[t] = g and TC[t] = tanh(C[:, t])."""
    batch, units = drec_h.shape
    one = sig.dtype.type(1)
    for b in range(batch):
        _total_state_cotangent(dH, drec_h, dh_pass, t, b)
        dh, dcc = dh_pass[b], dc_carry[b]
        if dC.size:
            d_out = dC[b, t]
            for u in range(units):
                dcc[u] = d_out[u] + dcc[u]
        d = dz[b, s]
        if not mask[b, s]:
            _zero(d)
            continue
        i, f, o, g = sig[t, b, :units], sig[t, b, units:2 * units], sig[t, b, 2 * units:], cand[t, b]
        di, df, dg, do = d[:units], d[units:2 * units], d[2 * units:3 * units], d[3 * units:]
        c = TC[t, b]
        c_prev = C[b, t - 1] if t > 0 else c0[b]
        for u in range(units):
            dcc[u] += dh[u] * o[u] * (one - c[u] * c[u])
        for u in range(units):
            do[u] = dh[u] * c[u] * o[u] * (one - o[u])
        for u in range(units):
            di[u] = dcc[u] * g[u] * i[u] * (one - i[u])
        for u in range(units):
            df[u] = dcc[u] * c_prev[u] * f[u] * (one - f[u])
        for u in range(units):
            dg[u] = dcc[u] * i[u] * (one - g[u] * g[u])
        for u in range(units):
            dcc[u] *= f[u]
        _zero(dh)
        _accumulate(db, d)


@kernel
def gru_backward(dH, drec_h, dh_pass, zr, HH, RH, Hp, mask, t, s, dRec, dz, db):
    """reset_after=True: dz for the input pre-activations, and dRec[:, s] (batch, T, 3U) for the step's
    ``h_prev @ R + rb``, which differs from dz in its candidate part only; ``db`` accumulates dRec (the
    recurrent bias's gradient)."""
    batch, units = drec_h.shape
    one = zr.dtype.type(1)
    for b in range(batch):
        _total_state_cotangent(dH, drec_h, dh_pass, t, b)
        d, drec = dz[b, s], dRec[b, s]
        if not mask[b, s]:
            _zero(d)
            _zero(drec)
            continue
        dh, h_prev = dh_pass[b], Hp[b, s]
        zg, r, hh, rh = zr[t, b, :units], zr[t, b, units:], HH[t, b], RH[t, b]
        dpz, dpr, dph = d[:units], d[units:2 * units], d[2 * units:]
        for u in range(units):
            dph[u] = dh[u] * (one - zg[u]) * (one - hh[u] * hh[u])
        for u in range(units):
            dpz[u] = dh[u] * (h_prev[u] - hh[u]) * zg[u] * (one - zg[u])
        for u in range(units):
            dpr[u] = dph[u] * rh[u] * r[u] * (one - r[u])
        _copy(drec[:2 * units], d[:2 * units])
        drh = drec[2 * units:]
        for u in range(units):
            drh[u] = dph[u] * r[u]
        for u in range(units):
            dh[u] *= zg[u]
        _accumulate(db, drec)


@kernel
def gru_v1_backward_state(dH, drec_h, dh_pass, zr, HH, Hp, mask, t, s, dZs):
    """reset_after=False backward, first half: dZs[t] of the z and h gates; dh_pass = dh * z."""
    batch, units = drec_h.shape
    one = zr.dtype.type(1)
    for b in range(batch):
        _total_state_cotangent(dH, drec_h, dh_pass, t, b)
        d = dZs[t, b]
        if not mask[b, s]:
            _zero(d)
            continue
        dh, h_prev = dh_pass[b], Hp[b, s]
        zg, hh = zr[t, b, :units], HH[t, b]
        dpz, dph = d[:units], d[2 * units:]
        for u in range(units):
            dpz[u] = dh[u] * (h_prev[u] - hh[u]) * zg[u] * (one - zg[u])
        for u in range(units):
            dph[u] = dh[u] * (one - zg[u]) * (one - hh[u] * hh[u])
        for u in range(units):
            dh[u] *= zg[u]


@kernel
def gru_v1_backward_gates(d_rh, dh_pass, zr, Hp, mask, t, s, dZs, dz, db):
    """reset_after=False backward, second half, given d_rh = dz_h @ R_h.T: dZs[t] of the r gate, and the
    step's cotangents copied to dz[:, s]."""
    batch, units = d_rh.shape
    one = zr.dtype.type(1)
    for b in range(batch):
        if mask[b, s]:
            r, h_prev, dr, dh = zr[t, b, units:], Hp[b, s], d_rh[b], dh_pass[b]
            dpr = dZs[t, b, units:2 * units]
            for u in range(units):
                dpr[u] = dr[u] * h_prev[u] * r[u] * (one - r[u])
            for u in range(units):
                dh[u] += dr[u] * r[u]
            _accumulate(db, dZs[t, b])
        _copy(dz[b, s], dZs[t, b])


@kernel
def simple_backward(dH, drec_h, dh_pass, H, mask, t, s, dz, db):
    batch, units = drec_h.shape
    one = H.dtype.type(1)
    for b in range(batch):
        _total_state_cotangent(dH, drec_h, dh_pass, t, b)
        d = dz[b, s]
        if not mask[b, s]:
            _zero(d)
        else:
            dh, h = dh_pass[b], H[b, t]
            for u in range(units):
                d[u] = dh[u] * (one - h[u] * h[u])
            _zero(dh)
            _accumulate(db, d)
