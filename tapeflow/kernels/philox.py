"""Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the
conversions of its 32-bit words into the values TensorFlow's CPU random ops produce.

A stream is a 64-bit key and a 128-bit counter (two uint64 halves, low first). Block ``i`` of the
stream is the Philox bijection applied to ``counter + i``; each block yields four 32-bit words.
Every fill kernel is a loop over blocks, so any block can be computed without the ones before it.

Conversions (all checked bit for bit against TensorFlow 2.21):
- float32 uniform: 23 low bits of a word as the mantissa of a float in [1, 2), minus 1;
  float16 / bfloat16 the same with their 10 / 7 mantissa bits (done by the caller from raw words);
- float64 uniform: two words, the first as the high half, 52 low bits as mantissa;
- normal: Box-Muller on pairs of uniforms (u1 raised to 1e-7), sin first then cos; float32 keeps
  its arithmetic in float32 (libm's logf/sinf/cosf), except 2*pi*u2 formed in double and rounded;
- truncated normal: output groups (4 float32 or 2 float64 values) each own 256 words (64 blocks) of the
  stream per value, and keep the Box-Muller values of magnitude below 2, in order;
- shuffle: see ``shuffle_order``.
"""
import math

import numpy as np
from numba import njit

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)
_ONE = np.uint64(1)

BLOCKS_PER_TRUNCATED_VALUE = 64


@njit(cache=True, inline="always")
def _block(k0, k1, c0, c1, c2, c3):
    """The Philox-4x32-10 bijection: four uint32 words (held in uint64) for key (k0, k1)."""
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (p1 >> _32) ^ c1 ^ k0, p1 & _LOW32, (p0 >> _32) ^ c3 ^ k1, p0 & _LOW32
        k0 = (k0 + _W0) & _LOW32
        k1 = (k1 + _W1) & _LOW32
    return c0, c1, c2, c3


@njit(cache=True, inline="always")
def _block_at(key, counter_lo, counter_hi, i):
    """Block ``i`` of the stream: Philox of the 128-bit counter + i."""
    lo = counter_lo + i
    hi = counter_hi + (_ONE if lo < counter_lo else np.uint64(0))
    return _block(key & _LOW32, key >> _32, lo & _LOW32, lo >> _32, hi & _LOW32, hi >> _32)


@njit(cache=True)
def fill_words(key, counter_lo, counter_hi, out):
    """out (uint32) = the stream's words in order."""
    n = out.shape[0]
    for b in range((n + 3) // 4):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        for j in range(4):
            if 4 * b + j < n:
                out[4 * b + j] = np.uint32(w[j])


@njit(cache=True)
def shuffle_order(key, counter_lo, counter_hi, n):
    """The order TensorFlow's RandomShuffle puts n < 2**32 rows in: a forward Fisher-Yates shuffle whose
    step i swaps row i with row i + (word i mod (n - i)), the words being the stream's in order."""
    order = np.arange(n)
    for b in range((n + 2) // 4):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        for k in range(4):
            i = 4 * b + k
            if i < n - 1:
                j = i + np.int64(w[k] % np.uint64(n - i))
                order[i], order[j] = order[j], order[i]
    return order


@njit(cache=True, inline="always")
def _unit_float32(word):
    # (1.mantissa) - 1 is exactly mantissa * 2**-23: no bit cast needed
    return np.float32(word & np.uint64(0x7FFFFF)) * np.float32(2.0 ** -23)


@njit(cache=True, inline="always")
def _unit_float64(high, low):
    return np.float64(((high << _32) | low) & np.uint64(0xFFFFFFFFFFFFF)) * 2.0 ** -52


@njit(cache=True, inline="always")
def _box_muller32(x0, x1):
    u1 = _unit_float32(x0)
    if u1 < np.float32(1e-7):
        u1 = np.float32(1e-7)
    v = np.float32(2.0 * math.pi * np.float64(_unit_float32(x1)))
    r = math.sqrt(np.float32(-2.0) * math.log(u1))
    return math.sin(v) * r, math.cos(v) * r


@njit(cache=True, inline="always")
def _box_muller64(x0, x1, x2, x3):
    u1 = _unit_float64(x0, x1)
    if u1 < 1e-7:
        u1 = 1e-7
    v = 2.0 * math.pi * _unit_float64(x2, x3)
    r = math.sqrt(-2.0 * math.log(u1))
    return math.sin(v) * r, math.cos(v) * r


@njit(cache=True)
def fill_uniform32(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for b in range((n + 3) // 4):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        for j in range(4):
            if 4 * b + j < n:
                out[4 * b + j] = _unit_float32(w[j])


@njit(cache=True)
def fill_uniform64(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for b in range((n + 1) // 2):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        out[2 * b] = _unit_float64(w[0], w[1])
        if 2 * b + 1 < n:
            out[2 * b + 1] = _unit_float64(w[2], w[3])


@njit(cache=True)
def categorical(key, counter_lo, counter_hi, logits, out):
    """TensorFlow's multinomial sampling of the rows of float32 ``logits`` into ``out`` (rows, samples): an
    unnormalised float32 CDF of exp(logit - row max) over the finite logits, and for each sample the first
    class whose CDF exceeds (the stream's next float64 uniform) * total, the samples of all rows drawn in turn."""
    rows, classes = logits.shape
    samples = out.shape[1]
    u = np.empty(rows * samples, np.float64)
    fill_uniform64(key, counter_lo, counter_hi, u)
    cdf = np.empty(classes, np.float32)
    for r in range(rows):
        top = logits[r, 0]
        for j in range(1, classes):
            top = max(top, logits[r, j])
        total = np.float32(0)
        for j in range(classes):
            if np.isfinite(logits[r, j]):
                total += np.float32(math.exp(logits[r, j] - top))
            cdf[j] = total
        for k in range(samples):
            target = u[r * samples + k] * np.float64(total)
            lo, hi = 0, classes            # upper bound: the first cdf entry > target
            while lo < hi:
                mid = (lo + hi) // 2
                if np.float64(cdf[mid]) > target:
                    hi = mid
                else:
                    lo = mid + 1
            out[r, k] = lo


@njit(cache=True)
def fill_normal32(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for b in range((n + 3) // 4):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        for pair in range(2):
            f0, f1 = _box_muller32(w[2 * pair], w[2 * pair + 1])
            i = 4 * b + 2 * pair
            if i < n:
                out[i] = f0
            if i + 1 < n:
                out[i + 1] = f1


@njit(cache=True)
def fill_normal64(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for b in range((n + 1) // 2):
        w = _block_at(key, counter_lo, counter_hi, np.uint64(b))
        f0, f1 = _box_muller64(w[0], w[1], w[2], w[3])
        out[2 * b] = f0
        if 2 * b + 1 < n:
            out[2 * b + 1] = f1


@njit(cache=True)
def fill_truncated_normal32(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for g in range((n + 3) // 4):
        block = np.uint64(4 * g * BLOCKS_PER_TRUNCATED_VALUE)
        i, end = 4 * g, min(4 * g + 4, n)
        while i < end:
            w = _block_at(key, counter_lo, counter_hi, block)
            block += _ONE
            for pair in range(2):
                f0, f1 = _box_muller32(w[2 * pair], w[2 * pair + 1])
                if i < end and abs(f0) < np.float32(2.0):
                    out[i] = f0
                    i += 1
                if i < end and abs(f1) < np.float32(2.0):
                    out[i] = f1
                    i += 1


@njit(cache=True)
def fill_truncated_normal64(key, counter_lo, counter_hi, out):
    n = out.shape[0]
    for g in range((n + 1) // 2):
        block = np.uint64(2 * g * BLOCKS_PER_TRUNCATED_VALUE)
        i, end = 2 * g, min(2 * g + 2, n)
        while i < end:
            w = _block_at(key, counter_lo, counter_hi, block)
            block += _ONE
            f0, f1 = _box_muller64(w[0], w[1], w[2], w[3])
            if i < end and abs(f0) < 2.0:
                out[i] = f0
                i += 1
            if i < end and abs(f1) < 2.0:
                out[i] = f1
                i += 1
