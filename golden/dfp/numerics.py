"""Integer and FP32 primitives of the DFP16 golden model (spec dfp.md §4.1, §4.2, §4.5, §4.6).

Integers are unbounded Python ints; FP32 values are uint32 bit patterns held in Python ints.
"""

import math

import numpy as np

from golden.dfp.formats import BIASED, CANONICAL_NAN, RNE, TRUNC

__all__ = ["bitlen", "clog2", "tsh", "sat16", "rshift_round", "to_fp32", "to_fp32_int",
           "fadd32", "f32_bits", "bits_f32", "dfp_add"]

FP32_MIN_NORMAL = 2.0 ** -126


def bitlen(x):
    """Number of bits of |x| (bitlen(0) = 0)."""
    return abs(int(x)).bit_length()


def clog2(n):
    """ceil(log2 n), with clog2(1) = 0."""
    n = int(n)
    if n < 1:
        raise ValueError(f"clog2 needs n >= 1, got {n}")
    return (n - 1).bit_length()


def tsh(x, s):
    """Truncating right shift of the magnitude, sign reapplied (toward zero); s >= 0."""
    x = int(x)
    return -((-x) >> s) if x < 0 else x >> s


def sat16(x):
    """(clamp(x, -32767, 32767), saturated?)."""
    if x > 32767:
        return 32767, True
    if x < -32767:
        return -32767, True
    return x, False


def rshift_round(x, s, mode, bias_bits=1):
    """Right shift of the magnitude by s >= 0 with TRUNC, BIASED or RNE rounding (§4.2).

    BIASED rounds up unless the round bit and the ``bias_bits`` bias bits are all zero; any
    other mode value (the reserved 3) is rejected here: callers map it to BIASED first.
    """
    x = int(x)
    if s == 0:
        return x
    m = abs(x)
    q = m >> s
    rest = m & ((1 << s) - 1)
    if mode == TRUNC:
        up = 0
    elif mode == BIASED:
        up = 1 if rest >> max(0, s - 1 - bias_bits) else 0
    elif mode == RNE:
        half = 1 << (s - 1)
        up = 1 if rest > half or (rest == half and q & 1) else 0
    else:
        raise ValueError(f"round mode {mode!r} is not TRUNC, BIASED or RNE")
    q += up
    return -q if x < 0 else q


def to_fp32_int(acc, es):
    """to_fp32 by the integer algorithm of §4.5 (the reference for the float shortcut)."""
    acc, es = int(acc), int(es)
    if acc == 0:
        return 0
    s = 1 if acc < 0 else 0
    m = abs(acc)
    n = m.bit_length()
    e = es + n - 1
    if e < -126:
        return s << 31
    if n > 24:
        q = rshift_round(m, n - 24, RNE)
        if q == 1 << 24:
            q = 1 << 23
            e += 1
    else:
        q = m << (24 - n)
    if e > 127:
        return s << 31 | 0x7F800000
    return s << 31 | (e + 127) << 23 | (q - (1 << 23))


def f32_bits(value):
    """uint32 bit pattern of ``numpy.float32(value)`` (one RNE rounding from float64)."""
    return int(np.array(value, dtype=np.float32).view(np.uint32))


def bits_f32(bits):
    """The float value of an FP32 bit pattern."""
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


def to_fp32(acc, es):
    """acc * 2^es as FP32 bits: RNE, FTZ before rounding, Inf on overflow (DFP-F19, §4.5).

    Float shortcut of §4.5 (exact while |acc| < 2^53); larger accumulators use the integer
    algorithm.
    """
    acc, es = int(acc), int(es)
    if acc == 0:
        return 0
    if abs(acc) >= 1 << 53:
        return to_fp32_int(acc, es)
    s = 1 if acc < 0 else 0
    try:
        v = math.ldexp(float(acc), es)
    except OverflowError:
        return s << 31 | 0x7F800000
    if abs(v) < FP32_MIN_NORMAL:
        return s << 31
    with np.errstate(over="ignore"):
        return f32_bits(v)


def _is_nan(x):
    return (x >> 23) & 0xFF == 0xFF and x & 0x7FFFFF


def _is_inf(x):
    return (x >> 23) & 0xFF == 0xFF and not x & 0x7FFFFF


def fadd32(x, y):
    """IEEE binary32 x + y with RNE, FTZ of results below 2^-126, canonical NaN (§4.6)."""
    x, y = int(x), int(y)
    if _is_nan(x) or _is_nan(y):
        return CANONICAL_NAN
    if _is_inf(x) and _is_inf(y) and (x ^ y) >> 31:
        return CANONICAL_NAN
    if _is_inf(x):
        return x
    if _is_inf(y):
        return y
    with np.errstate(over="ignore"):
        total = np.array([x], dtype=np.uint32).view(np.float32)[0] + \
            np.array([y], dtype=np.uint32).view(np.float32)[0]
    bits = int(np.array([total], dtype=np.float32).view(np.uint32)[0])
    if bits & 0x7FFFFFFF == 0:                 # exact zero: IEEE sign rule
        return 0x80000000 if x == y == 0x80000000 else 0
    if (bits >> 23) & 0xFF == 0:               # subnormal result: flush, sign of the sum
        return bits & 0x80000000
    return bits


def dfp_add(ia, es_a, ib, es_b):
    """Fig 16A/16B add primitive (§4.11): align to the larger exponent (toward zero) and add.

    Returns (I, es) with |I| <= 65534, a 17-bit DFP value.
    """
    if es_a < es_b:
        ia, es_a, ib, es_b = ib, es_b, ia, es_a
    return int(ia) + tsh(ib, es_a - es_b), es_a
