"""Golden DFP primitives against the spec's vectors and independent references (float64,
numpy float32, exhaustive sweeps): rshift_round, to_fp32, fadd32, dequant_lzd, dfp_add."""

import math
import random

import numpy as np
import pytest

from golden.dfp import vectors as gv
from golden.dfp.formats import BIASED, RNE, TRUNC
from golden.dfp.numerics import (bits_f32, dfp_add, fadd32, rshift_round, to_fp32, to_fp32_int,
                                 tsh)
from golden.dfp.quant import dequant, dequant_lzd


@pytest.mark.req("DFP-GV4", "DFP-F7")
def test_biased_rounding_truth_table():
    """Table 5: with one bias bit, the magnitude rounds up unless R and B are both 0, whatever
    the bits below them."""
    for r_bit, b_bit, up in gv.GV4:
        for low in range(4):
            rest = r_bit << 3 | b_bit << 2 | low          # 4 discarded bits: R, B, 2 more
            assert rshift_round(5 << 4 | rest, 4, BIASED, 1) == 5 + up
            assert rshift_round(-(5 << 4 | rest), 4, BIASED, 1) == -(5 + up)


@pytest.mark.req("DFP-F6", "DFP-F7", "DFP-F8")
def test_rshift_round_against_exact_rationals(seed):
    """TRUNC, BIASED (threshold 0.25 for one bias bit, 2^-(b+1) for b bits) and RNE against
    the exact quotient x / 2^s computed with fractions."""
    from fractions import Fraction
    rng = random.Random(seed)
    for _ in range(20000):
        s = rng.randrange(0, 40)
        x = rng.randrange(-(1 << 48), 1 << 48)
        bias_bits = rng.randrange(1, 5)
        exact = Fraction(abs(x), 1 << s)
        floor = abs(x) >> s
        frac = exact - floor
        sign = -1 if x < 0 else 1
        assert rshift_round(x, s, TRUNC) == sign * floor
        threshold = Fraction(1, 1 << (bias_bits + 1))
        assert rshift_round(x, s, BIASED, bias_bits) == sign * (floor + (frac >= threshold and s > 0))
        if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and floor % 2 == 1):
            assert rshift_round(x, s, RNE) == sign * (floor + 1)
        else:
            assert rshift_round(x, s, RNE) == sign * floor
        assert tsh(x, s) == sign * floor


@pytest.mark.req("DFP-GV13", "DFP-F19", "DFP-E9")
@pytest.mark.parametrize("acc,es,bits", gv.GV13)
def test_to_fp32_gv13(acc, es, bits):
    assert to_fp32(acc, es) == bits
    assert to_fp32_int(acc, es) == bits


@pytest.mark.req("DFP-V8", "DFP-F19")
def test_to_fp32_float_path_equals_integer_algorithm(seed):
    """>= 10^5 random (acc, es), es over the whole es_out range [-1024, 1085] and beyond."""
    rng = random.Random(seed)
    for k in range(100_000):
        width = rng.choice([1, 2, 8, 16, 24, 25, 31, 32, 40, 47, 48])
        acc = rng.randrange(-(1 << width), 1 << width)
        if k % 7 == 0:                                   # near rounding ties
            acc = (rng.randrange(1 << 24) << rng.randrange(1, 24)) | (1 << rng.randrange(0, 4))
        es = rng.randrange(-1200, 1200) if k % 2 else rng.randrange(-200, 160)
        assert to_fp32(acc, es) == to_fp32_int(acc, es), (acc, es)


@pytest.mark.req("DFP-F19")
def test_to_fp32_against_float64_reference(seed):
    """Independent reference: float64 value (exact for |acc| < 2^53) rounded by numpy to
    float32, then FTZ applied on the exact value."""
    rng = random.Random(seed)
    for _ in range(20000):
        acc = rng.randrange(-(1 << 47), 1 << 47)
        es = rng.randrange(-190, 140)
        exact = math.ldexp(acc, es)
        if acc == 0:
            expect = 0
        elif abs(exact) < 2.0 ** -126:
            expect = 0x80000000 if acc < 0 else 0
        else:
            with np.errstate(over="ignore"):
                expect = int(np.float32(exact).view(np.uint32))
        assert to_fp32(acc, es) == expect


@pytest.mark.req("DFP-GV14", "DFP-F20", "DFP-E9")
@pytest.mark.parametrize("x,y,bits", gv.GV14)
def test_fadd32_gv14(x, y, bits):
    assert fadd32(x, y) == bits
    assert fadd32(y, x) == bits


@pytest.mark.req("DFP-F20")
def test_fadd32_against_exact_sum(seed):
    """Random normal FP32 pairs: the exact sum (fractions) rounded RNE to binary32 by an
    independent integer rounding, with the FTZ and zero-sign rules."""
    from fractions import Fraction
    rng = random.Random(seed)

    def value(bits):
        e = (bits >> 23) & 0xFF
        m = bits & 0x7FFFFF
        v = Fraction((1 << 23) | m, 1 << 23) * Fraction(2) ** (e - 127) if e else Fraction(0)
        return -v if bits >> 31 else v

    def rne32(v):
        if v == 0:
            return 0
        sign = 1 if v < 0 else 0
        a = abs(v)
        e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
        while Fraction(2) ** e > a:
            e -= 1
        while Fraction(2) ** (e + 1) <= a:
            e += 1
        if e < -126:
            return sign << 31
        scaled = a / Fraction(2) ** (e - 23)
        q = scaled.numerator // scaled.denominator
        rest = scaled - q
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and q & 1):
            q += 1
        if q == 1 << 24:
            q >>= 1
            e += 1
        if e > 127:
            return sign << 31 | 0x7F800000
        return sign << 31 | (e + 127) << 23 | (q - (1 << 23))

    for k in range(5000):
        ex = rng.randrange(1, 255)
        x = rng.getrandbits(1) << 31 | ex << 23 | rng.getrandbits(23)
        ey = max(1, min(254, ex + rng.randrange(-30, 31))) if k % 3 else ex
        y = rng.getrandbits(1) << 31 | ey << 23 | rng.getrandbits(23)
        s = value(x) + value(y)
        expect = 0 if s == 0 else rne32(s)
        assert fadd32(x, y) == expect, (hex(x), hex(y))


@pytest.mark.req("DFP-GV2", "DFP-GV12", "DFP-F16", "DFP-F17", "DFP-F18", "DFP-E11")
@pytest.mark.parametrize("i,sf_b,bits", gv.GV2 + gv.GV12)
def test_dequant_vectors(i, sf_b, bits):
    assert dequant_lzd(i, sf_b) == bits
    assert dequant(i, sf_b) == bits


@pytest.mark.req("DFP-V8", "DFP-F16", "DFP-F17")
@pytest.mark.parametrize("sf_b", [0, 1, 14, 15, 16, 135, 254])
def test_dequant_lzd_exhaustive(sf_b):
    """dequant_lzd equals to_fp32(I, sf_b - 141) for every I in [-32767, 32767]."""
    for i in range(-32767, 32768):
        assert dequant_lzd(i, sf_b) == to_fp32(i, sf_b - 141), (i, sf_b)


@pytest.mark.req("DFP-F16")
def test_dequant_value_is_exact(seed):
    rng = random.Random(seed)
    for _ in range(5000):
        i = rng.randrange(-32767, 32768)
        sf_b = rng.randrange(15, 255)
        assert bits_f32(dequant_lzd(i, sf_b)) == math.ldexp(i, sf_b - 141)


@pytest.mark.req("DFP-F50")
def test_dfp_add_aligns_to_larger_exponent(seed):
    rng = random.Random(seed)
    for _ in range(5000):
        ia, ib = rng.randrange(-32767, 32768), rng.randrange(-32767, 32768)
        ea, eb = rng.randrange(-20, 20), rng.randrange(-20, 20)
        i, e = dfp_add(ia, ea, ib, eb)
        assert e == max(ea, eb) and abs(i) <= 65534
        big, small, es_small = (ia, ib, eb) if ea >= eb else (ib, ia, ea)
        # the exact sum minus the result is the truncated part of the smaller operand
        err = math.ldexp(big, e) + math.ldexp(small, es_small) - math.ldexp(i, e)
        assert abs(err) < math.ldexp(1, e)
