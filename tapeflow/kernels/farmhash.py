"""FarmHash's 64-bit fingerprint (``farmhash::Fingerprint64``, the "na" variant), on bytes.

TensorFlow hashes strings into buckets with it (``tf.strings.to_hash_bucket_fast``):
StringLookup spreads out-of-vocabulary strings over several OOV indices as
``fingerprint64(s) % num_oov_indices``. Written from the published algorithm;
all arithmetic is modulo 2**64.
"""
import struct

_MASK = (1 << 64) - 1
K0 = 0xc3a5c85c97cb3127
K1 = 0xb492b66fbe98f273
K2 = 0x9ae16a3b2f90404f


def _fetch64(data, i):
    return struct.unpack_from("<Q", data, i)[0]


def _fetch32(data, i):
    return struct.unpack_from("<I", data, i)[0]


def _rotate(value, shift):
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_len0to16(data, n):
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(data, 0) + K2) & _MASK
        b = _fetch64(data, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        a = _fetch32(data, 0)
        return _hash_len16((n + (a << 3)) & _MASK, _fetch32(data, n - 4), mul)
    if n > 0:
        a, b, c = data[0], data[n >> 1], data[n - 1]
        y = a + (b << 8)
        z = n + (c << 2)
        return (_shift_mix(((y * K2) ^ (z * K0)) & _MASK) * K2) & _MASK
    return K2


def _hash_len17to32(data, n):
    mul = K2 + n * 2
    a = (_fetch64(data, 0) * K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * K2) & _MASK
    return _hash_len16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                       (a + _rotate((b + K2) & _MASK, 18) + c) & _MASK, mul)


def _hash_len33to64(data, n):
    mul = K2 + n * 2
    a = (_fetch64(data, 0) * K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, n - 24)) * mul) & _MASK
    return _hash_len16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                       (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak_hash_len32_with_seeds(data, i, a, b):
    w, x, y, z = (_fetch64(data, i + k) for k in (0, 8, 16, 24))
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data):
    """The 64-bit FarmHash fingerprint of ``data`` (bytes)."""
    n = len(data)
    if n <= 16:
        return _hash_len0to16(data, n)
    if n <= 32:
        return _hash_len17to32(data, n)
    if n <= 64:
        return _hash_len33to64(data, n)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & _MASK
    z = (_shift_mix((y * K2 + 113) & _MASK) * K2) & _MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(data, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(data, i + 8)) & _MASK, 37) * K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(data, i + 48)) & _MASK, 42) * K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, i + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * K1) & _MASK
        v = _weak_hash_len32_with_seeds(data, i, (v[1] * K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_hash_len32_with_seeds(data, i + 32, (z + w[1]) & _MASK, (y + _fetch64(data, i + 16)) & _MASK)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = K1 + ((z & 0xff) << 1)
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, i + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(data, i + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(data, i + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak_hash_len32_with_seeds(data, i, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak_hash_len32_with_seeds(data, i + 32, (z + w[1]) & _MASK, (y + _fetch64(data, i + 16)) & _MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & _MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & _MASK, mul)
