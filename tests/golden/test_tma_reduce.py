"""Reduction arithmetic ``golden.tma.reduce`` (spec tma.md §4.9; TMA-F44, TMA-GV37..GV72).

Every reduction vector of §5, then every (op, dtype) pair of RED_OK against references that share
no code with the golden model (which adds floats exactly in integers):

- integers: numpy ``uint32/int32/uint64/int64`` arithmetic (wrapping add, ``np.minimum`` /
  ``np.maximum`` in the signed or unsigned type, bitwise ufuncs, ``np.where`` for INC/DEC);
- F16 add: numpy ``float16`` addition (subnormals kept), NaN -> 0x7FFF;
- F32 add: numpy ``float32`` addition with the flush-to-zero written around it (inputs and
  result with exponent field 0 keep only their sign), NaN -> 0x7FFFFFFF;
- BF16 add: the operands widened to float32 bits (``<< 16``), added in float64, rounded to
  float32 by numpy and to BF16 by the §4.9 integer RNE formula, NaN -> 0x7FFF;
- F16 / BF16 min / max: float64 comparison with -0 < +0 decided on the sign bit, NaN rules;
- the §4.9 definition read literally (Python float64 add, ``struct`` / numpy rounding to the
  format) for F32 and F16.

Operands: fixed edge values (0, ±max, ±min, ±0, ±inf, NaNs, subnormals, INC/DEC wrap
boundaries) in every combination, and random ones drawn with the ``seed`` fixture from a mix of
uniform bit patterns, nearby magnitudes of opposite sign (cancellation), equal exponents and
special values.
"""

import random
import struct

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.formats import ESIZE, LINE, RED_OK, DType, RedOp
from golden.tma.reduce import red_apply, red_line

PAIRS = sorted(RED_OK)
PAIR_IDS = [f"{op.name}-{dt.name}" for op, dt in PAIRS]
NP_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
NP_SINT = {4: np.int32, 8: np.int64}
FLOAT_BITS = {DType.F16: (5, 10), DType.BF16: (8, 7), DType.F32: (8, 23)}


# ---------------------------------------------------------------------------------------------
# §5 reduction vectors
_GV_IDS = sorted(gv.RED, key=lambda k: int(k[2:]))


@pytest.mark.parametrize("gv_id", [pytest.param(k, marks=pytest.mark.req(f"TMA-{k}", "TMA-F44"))
                                   for k in _GV_IDS], ids=_GV_IDS)
def test_reduction_vector(gv_id):
    op, dtype, old, b, result = gv.RED[gv_id]
    es = ESIZE[dtype]
    got = red_apply(op, dtype, old.to_bytes(es, "little"), b.to_bytes(es, "little"))
    assert got == result.to_bytes(es, "little"), f"{gv_id}: {got.hex()} != {result:0{2 * es}x}"


def test_vector_table_covers_gv37_to_gv72():
    assert sorted(int(k[2:]) for k in gv.RED) == list(range(37, 73))
    for op, dtype, *_ in gv.RED.values():
        assert (op, dtype) in RED_OK


# ---------------------------------------------------------------------------------------------
# Operands
def edge_values(dtype):
    """Bit patterns of the edge cases of ``dtype``."""
    es = ESIZE[dtype]
    bits = 8 * es
    top = 1 << bits
    if dtype in FLOAT_BITS:
        ew, fw = FLOAT_BITS[dtype]
        sign = 1 << (ew + fw)
        inf = ((1 << ew) - 1) << fw
        maxf = inf - 1
        minn = 1 << fw
        pos = [0, 1, 2, 3, (1 << fw) - 1, 1 << (fw - 1), minn, minn + 1, minn | 1 << (fw - 1),
               2 * minn, maxf, maxf - 1, inf - minn, inf, inf | 1, inf | 1 << (fw - 1),
               (1 << (ew + fw)) - 1, ((1 << (ew - 1)) - 1) << fw,            # 1.0
               (((1 << (ew - 1)) - 1) << fw) | 1, (((1 << (ew - 1)) - 2) << fw) | ((1 << fw) - 1),
               ((1 << (ew - 1)) - 1 - fw - 1) << fw]                            # 1.0 * 2^-(fw+1)
        return sorted({v for p in pos for v in (p, p | sign)})
    vals = {0, 1, 2, 3, 4, 5, 6, 7, top - 1, top - 2, top >> 1, (top >> 1) - 1, (top >> 1) + 1,
            0x55555555 % top, 0xAAAAAAAA % top, 0xF0F0F0F0F0F0F0F0 % top, 0x0FF00FF0 % top,
            0x100000000 % top, 0xFFFFFFFF % top}
    return sorted(vals)


def random_operands(rng, dtype, n):
    """``n`` (old, b) bit-pattern pairs of ``dtype`` as two numpy unsigned arrays."""
    es = ESIZE[dtype]
    ut = NP_UINT[es]
    bits = 8 * es

    def uni(k):
        return rng.integers(0, 1 << bits, size=k, dtype=np.uint64 if bits == 64 else np.int64) \
            .astype(ut) if bits < 64 else rng.integers(0, 2**64, size=k, dtype=np.uint64)

    a = uni(n)
    b = uni(n)
    kind = rng.integers(0, 6, size=n)
    edges = np.array(edge_values(dtype), dtype=ut)
    # 1: both from the edge list; 2: b from the edge list
    sel = kind == 1
    a[sel] = edges[rng.integers(0, len(edges), size=sel.sum())]
    b[sel] = edges[rng.integers(0, len(edges), size=sel.sum())]
    sel = kind == 2
    b[sel] = edges[rng.integers(0, len(edges), size=sel.sum())]
    if dtype in FLOAT_BITS:
        ew, fw = FLOAT_BITS[dtype]
        sign = ut(1 << (ew + fw))
        # 3: nearby magnitude, opposite sign (massive cancellation)
        sel = np.nonzero(kind == 3)[0]
        delta = rng.integers(0, 1 << min(fw, 6), size=len(sel)).astype(ut)
        b[sel] = (a[sel] ^ sign) + delta
        # 4: same or adjacent exponent, random signs and fractions
        sel = np.nonzero(kind == 4)[0]
        shift = rng.integers(0, 3, size=len(sel)).astype(ut)
        b[sel] = (a[sel] & ut(((1 << ew) - 1) << fw)) + (shift << ut(fw)) \
            + rng.integers(0, 1 << fw, size=len(sel)).astype(ut) \
            + (rng.integers(0, 2, size=len(sel)).astype(ut) << ut(ew + fw))
        # 5: subnormal or tiny operands
        sel = np.nonzero(kind == 5)[0]
        a[sel] = rng.integers(0, 3 << fw, size=len(sel)).astype(ut) \
            | (rng.integers(0, 2, size=len(sel)).astype(ut) << ut(ew + fw))
    else:
        # 3: equal operands; 4: b = old +- 1 (INC/DEC and compare boundaries)
        sel = kind == 3
        b[sel] = a[sel]
        sel = np.nonzero(kind == 4)[0]
        b[sel] = a[sel] + (rng.integers(0, 2, size=len(sel)).astype(ut) * ut(2) - ut(1))
    return a, b


# ---------------------------------------------------------------------------------------------
# Independent references (numpy); inputs and outputs are unsigned bit-pattern arrays
def _f16_nan(x):
    return ((x >> 10) & 0x1F) == 0x1F & ((x & 0x3FF) != 0)


def ref_int(op, dtype, a, b):
    es = ESIZE[dtype]
    ut = NP_UINT[es]
    a, b = a.astype(ut), b.astype(ut)
    if op == RedOp.ADD:
        return a + b
    if op in (RedOp.MIN, RedOp.MAX):
        fn = np.minimum if op == RedOp.MIN else np.maximum
        if dtype in (DType.S32, DType.S64):
            st = NP_SINT[es]
            return fn(a.view(st), b.view(st)).view(ut)
        return fn(a, b)
    if op == RedOp.INC:
        return np.where(a >= b, ut(0), a + ut(1))
    if op == RedOp.DEC:
        return np.where((a == 0) | (a > b), b, a - ut(1))
    return {RedOp.AND: np.bitwise_and, RedOp.OR: np.bitwise_or,
            RedOp.XOR: np.bitwise_xor}[op](a, b)


def _exp_zero(x, ew, fw):
    return ((x >> fw) & ((1 << ew) - 1)) == 0


def _isnan_bits(x, ew, fw):
    emax = (1 << ew) - 1
    return (((x >> fw) & emax) == emax) & ((x & ((1 << fw) - 1)) != 0)


def ref_add_f32(a, b):
    a, b = a.astype(np.uint32), b.astype(np.uint32)
    sign = np.uint32(0x80000000)
    fa = np.where(_exp_zero(a, 8, 23), a & sign, a).view(np.float32)
    fb = np.where(_exp_zero(b, 8, 23), b & sign, b).view(np.float32)
    with np.errstate(all="ignore"):
        s = (fa + fb).view(np.uint32)
    s = np.where(_exp_zero(s, 8, 23), s & sign, s)
    return np.where(_isnan_bits(s, 8, 23), np.uint32(0x7FFFFFFF), s)


def ref_add_f16(a, b):
    with np.errstate(all="ignore"):
        s = (a.astype(np.uint16).view(np.float16) + b.astype(np.uint16).view(np.float16))
    s = s.view(np.uint16)
    return np.where(_isnan_bits(s, 5, 10), np.uint16(0x7FFF), s)


def bf16_round(u):
    """§4.9 BF16 rounding of float32 bits (NaN handled by the caller)."""
    u = u.astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)


def ref_add_bf16(a, b):
    with np.errstate(all="ignore"):
        fa = (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        fb = (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        s32 = (fa + fb).astype(np.float32)
    r = bf16_round(s32.view(np.uint32))
    return np.where(np.isnan(s32), np.uint16(0x7FFF), r)


def _to_f64(x, dtype):
    with np.errstate(all="ignore"):
        if dtype == DType.F16:
            return x.astype(np.uint16).view(np.float16).astype(np.float64)
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def ref_minmax16(op, dtype, a, b):
    a, b = a.astype(np.uint16), b.astype(np.uint16)
    fa, fb = _to_f64(a, dtype), _to_f64(b, dtype)
    na, nb = np.isnan(fa), np.isnan(fb)
    sa, sb = (a >> 15) & 1, (b >> 15) & 1
    if op == RedOp.MIN:
        a_wins = (fa < fb) | ((fa == fb) & (sa >= sb))
    else:
        a_wins = (fa > fb) | ((fa == fb) & (sa <= sb))
    r = np.where(a_wins, a, b)
    r = np.where(na & ~nb, b, r)
    r = np.where(nb & ~na, a, r)
    return np.where(na & nb, np.uint16(0x7FFF), r)


def reference(op, dtype, a, b):
    """The independent reference for one (op, dtype) pair, elementwise over arrays."""
    if dtype in FLOAT_BITS:
        if op == RedOp.ADD:
            return {DType.F32: ref_add_f32, DType.F16: ref_add_f16,
                    DType.BF16: ref_add_bf16}[dtype](a, b)
        return ref_minmax16(op, dtype, a, b)
    return ref_int(op, dtype, a, b)


def golden_array(op, dtype, a, b):
    es = ESIZE[dtype]
    out = [int.from_bytes(red_apply(op, dtype, int(x).to_bytes(es, "little"),
                                    int(y).to_bytes(es, "little")), "little")
           for x, y in zip(a, b)]
    return np.array(out, dtype=NP_UINT[es])


def _compare(op, dtype, a, b):
    got = golden_array(op, dtype, a, b)
    want = reference(op, dtype, a, b).astype(NP_UINT[ESIZE[dtype]])
    bad = np.nonzero(got != want)[0]
    if len(bad):
        w = 2 * ESIZE[dtype]
        rows = [f"old {int(a[k]):0{w}x} b {int(b[k]):0{w}x}: golden {int(got[k]):0{w}x} "
                f"reference {int(want[k]):0{w}x}" for k in bad[:10]]
        pytest.fail(f"{op.name} {dtype.name}: {len(bad)} of {len(a)} differ\n  " + "\n  ".join(rows))


# ---------------------------------------------------------------------------------------------
@pytest.mark.req("TMA-F44", "TMA-V12")
@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_edge_cases_against_reference(pair):
    """Every combination of two edge values of the dtype."""
    op, dtype = pair
    edges = edge_values(dtype)
    ut = NP_UINT[ESIZE[dtype]]
    a = np.array([x for x in edges for _ in edges], dtype=ut)
    b = np.array([y for _ in edges for y in edges], dtype=ut)
    _compare(op, dtype, a, b)


@pytest.mark.req("TMA-F44", "TMA-V12")
@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_random_operands_against_reference(pair, seed):
    op, dtype = pair
    rng = np.random.default_rng([seed, int(op), int(dtype)])
    a, b = random_operands(rng, dtype, 12_000)
    _compare(op, dtype, a, b)


def _spec_literal(op, dtype, x, y):
    """§4.9 read literally with Python float64 (F32 and F16 add)."""
    if dtype == DType.F32:
        def ftz(v):
            return v & 0x80000000 if not (v >> 23) & 0xFF else v
        fx, fy = (struct.unpack("<f", struct.pack("<I", ftz(v)))[0] for v in (x, y))
        s = fx + fy                                       # float64, correctly rounded
        if s != s:
            return 0x7FFFFFFF
        try:
            r = struct.unpack("<I", struct.pack("<f", s))[0]      # RNE to binary32
        except OverflowError:                                     # struct refuses to overflow
            r = 0x7F800000 | (0x80000000 if s < 0 else 0)
        return ftz(r)
    fx, fy = (float(np.uint16(v).view(np.float16)) for v in (x, y))
    s = fx + fy
    if s != s:
        return 0x7FFF
    with np.errstate(all="ignore"):
        return int(np.float64(s).astype(np.float16).view(np.uint16))


@pytest.mark.req("TMA-F44")
@pytest.mark.parametrize("dtype", [DType.F32, DType.F16])
def test_float_add_equals_float64_route(dtype, seed):
    rng = np.random.default_rng([seed, 64, int(dtype)])
    a, b = random_operands(rng, dtype, 4000)
    edges = edge_values(dtype)
    pairs = [(int(x), int(y)) for x, y in zip(a, b)] + [(x, y) for x in edges for y in edges]
    es = ESIZE[dtype]
    for x, y in pairs:
        got = int.from_bytes(red_apply(RedOp.ADD, dtype, x.to_bytes(es, "little"),
                                       y.to_bytes(es, "little")), "little")
        want = _spec_literal(RedOp.ADD, dtype, x, y)
        assert got == want, f"{dtype.name} {x:#x} + {y:#x}: {got:#x} != {want:#x}"


@pytest.mark.req("TMA-F44")
def test_float_edge_rules():
    """Named rules of §4.9: FTZ sign, exact-zero signs, inf arithmetic, canonical NaNs."""
    def f(op, dt, x, y):
        es = ESIZE[dt]
        return int.from_bytes(red_apply(op, dt, x.to_bytes(es, "little"),
                                        y.to_bytes(es, "little")), "little")
    A, MIN, MAX = RedOp.ADD, RedOp.MIN, RedOp.MAX
    # F32: subnormal inputs are signed zeros; a subnormal result keeps only its sign
    assert f(A, DType.F32, 0x80400000, 0x00000000) == 0x00000000     # -0 + +0 = +0
    assert f(A, DType.F32, 0x80400000, 0x80000001) == 0x80000000     # -0 + -0 = -0
    assert f(A, DType.F32, 0x80C00000, 0x00800000) == 0x80000000     # -2^-127 flushed to -0
    assert f(A, DType.F32, 0x3F800000, 0xBF800000) == 0x00000000     # x - x = +0
    assert f(A, DType.F32, 0xFF800000, 0x7F7FFFFF) == 0xFF800000
    assert f(A, DType.F32, 0x7FC00000, 0x3F800000) == 0x7FFFFFFF
    assert f(A, DType.F32, 0xFFFFFFFF, 0xFF800000) == 0x7FFFFFFF
    assert f(A, DType.F32, 0xFF7FFFFF, 0xF3800000) == 0xFF800000     # rounds up past max
    assert f(A, DType.F32, 0x7F7FFFFF, 0x72FFFFFF) == 0x7F7FFFFF     # just below the tie
    assert f(A, DType.F32, 0x7F7FFFFF, 0x73000000) == 0x7F800000     # tie to even: 2^128
    # F16 / BF16: subnormals are kept, exact zeros take the IEEE sign
    assert f(A, DType.F16, 0x8001, 0x8001) == 0x8002
    assert f(A, DType.F16, 0x03FF, 0x0001) == 0x0400                 # subnormal -> normal
    assert f(A, DType.F16, 0x8000, 0x8000) == 0x8000
    assert f(A, DType.F16, 0x8000, 0x0000) == 0x0000
    assert f(A, DType.F16, 0x3C00, 0xBC00) == 0x0000
    assert f(A, DType.F16, 0x7C00, 0xFC00) == 0x7FFF
    assert f(A, DType.F16, 0xFC00, 0xFC00) == 0xFC00
    assert f(A, DType.F16, 0xFE00, 0x0000) == 0x7FFF
    assert f(A, DType.BF16, 0x8001, 0x0001) == 0x0000
    assert f(A, DType.BF16, 0x007F, 0x0001) == 0x0080
    assert f(A, DType.BF16, 0xFF80, 0x7FC1) == 0x7FFF
    for dt in (DType.F16, DType.BF16):
        assert f(MIN, dt, 0x8000, 0x0000) == 0x8000 and f(MIN, dt, 0x0000, 0x8000) == 0x8000
        assert f(MAX, dt, 0x8000, 0x0000) == 0x0000 and f(MAX, dt, 0x0000, 0x8000) == 0x0000
        assert f(MIN, dt, 0xFFFF, 0x8001) == 0x8001 and f(MAX, dt, 0x0001, 0x7FFF) == 0x0001
        assert f(MIN, dt, 0x7FFF, 0xFFFF) == 0x7FFF and f(MAX, dt, 0xFFC1, 0x7FC1) == 0x7FFF
        inf = 0x7C00 if dt == DType.F16 else 0x7F80
        assert f(MIN, dt, inf | 0x8000, 0x0001) == inf | 0x8000 and f(MAX, dt, inf, 0x7B00) == inf


@pytest.mark.req("TMA-F44")
def test_inc_dec_wrap_boundaries():
    def f(op, x, y):
        return int.from_bytes(red_apply(op, DType.U32, x.to_bytes(4, "little"),
                                        y.to_bytes(4, "little")), "little")
    M = 0xFFFFFFFF
    assert [f(RedOp.INC, x, M) for x in (0, M - 2, M - 1, M)] == [1, M - 1, M, 0]
    assert [f(RedOp.INC, x, 0) for x in (0, 1, M)] == [0, 0, 0]
    assert [f(RedOp.DEC, x, 0) for x in (0, 1, M)] == [0, 0, 0]
    assert [f(RedOp.DEC, x, M) for x in (0, 1, M)] == [M, 0, M - 1]
    # INC counts 0 .. b and wraps to 0; DEC counts b .. 0 and wraps to b
    x = 0
    seen = []
    for _ in range(8):
        x = f(RedOp.INC, x, 3)
        seen.append(x)
    assert seen == [1, 2, 3, 0, 1, 2, 3, 0]
    seen = []
    for _ in range(8):
        x = f(RedOp.DEC, x, 3)
        seen.append(x)
    assert seen == [3, 2, 1, 0, 3, 2, 1, 0]


# ---------------------------------------------------------------------------------------------
# red_line
@pytest.mark.req("TMA-F42", "TMA-F44")
@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_red_line_applies_enabled_elements(pair, seed):
    op, dtype = pair
    es = ESIZE[dtype]
    n = LINE // es
    rng = np.random.default_rng([seed, 7, int(op), int(dtype)])
    ut = NP_UINT[es]
    for _ in range(20):
        a, b = random_operands(rng, dtype, n)
        enabled = rng.random(n) < rng.random()
        be = sum(((1 << es) - 1) << (es * k) for k in range(n) if enabled[k])
        old_line, data = a.astype(ut).tobytes(), b.astype(ut).tobytes()
        got = np.frombuffer(red_line(op, dtype, old_line, data, be), dtype=ut)
        want = np.where(enabled, reference(op, dtype, a, b).astype(ut), a.astype(ut))
        assert np.array_equal(got, want)


@pytest.mark.req("TMA-F44")
def test_red_line_partial_element_writes_enabled_bytes():
    old = bytes(range(LINE))
    data = bytes([1] * LINE)
    out = red_line(RedOp.ADD, DType.U32, old, data, 0b0110)
    full = red_apply(RedOp.ADD, DType.U32, old[:4], data[:4])
    assert out[:4] == bytes([old[0], full[1], full[2], old[3]]) and out[4:] == old[4:]


def test_pairs_outside_red_ok_are_rejected():
    for op in RedOp:
        for dt in DType:
            if (op, dt) in RED_OK:
                continue
            es = ESIZE[dt]
            with pytest.raises(ValueError, match="RED_OK"):
                red_apply(op, dt, bytes(es), bytes(es))
            with pytest.raises(ValueError, match="RED_OK"):
                red_line(op, dt, bytes(LINE), bytes(LINE), 0)
    with pytest.raises(ValueError):
        red_apply(8, DType.U32, bytes(4), bytes(4))
    with pytest.raises(ValueError):
        red_apply(RedOp.ADD, 13, bytes(4), bytes(4))
    with pytest.raises(ValueError, match="4 bytes"):
        red_apply(RedOp.ADD, DType.U32, bytes(8), bytes(4))
    with pytest.raises(ValueError, match="128"):
        red_line(RedOp.ADD, DType.U32, bytes(64), bytes(LINE), 1)
    assert len(PAIRS) == 32


def test_red_ok_table_matches_spec():
    """§4.9 RED_OK table, row by row."""
    U32, S32, U64, S64, F16, F32, BF16 = (DType.U32, DType.S32, DType.U64, DType.S64, DType.F16,
                                          DType.F32, DType.BF16)
    table = {RedOp.ADD: {U32, S32, U64, F32, F16, BF16},
             RedOp.MIN: {U32, S32, U64, S64, F16, BF16}, RedOp.MAX: {U32, S32, U64, S64, F16, BF16},
             RedOp.INC: {U32}, RedOp.DEC: {U32},
             RedOp.AND: {U32, S32, U64, S64}, RedOp.OR: {U32, S32, U64, S64},
             RedOp.XOR: {U32, S32, U64, S64}}
    assert RED_OK == {(op, dt) for op, dts in table.items() for dt in dts}


def test_random_operand_generator_hits_the_special_classes():
    """The random mix reaches cancellation, subnormal and NaN operands for every float type."""
    rng = np.random.default_rng(random.Random(1).getrandbits(32))
    for dt, (ew, fw) in FLOAT_BITS.items():
        a, b = random_operands(rng, dt, 6000)
        for x in (a, b):
            assert _isnan_bits(x, ew, fw).any() and (_exp_zero(x, ew, fw) & (x != 0)).any()
        s = reference(RedOp.ADD, dt, a, b)
        assert (_exp_zero(s, ew, fw) & ((s & ((1 << fw) - 1)) != 0)).any() or dt == DType.F32
