"""Golden quantizer (Alg Q) and down-converter against the spec's vectors and properties:
element error bounds, normalization, round trips, stream-level block handling."""

import math
import random

import pytest

from golden.dfp import vectors as gv
from golden.dfp.downconvert import DownConverterModel, downconvert
from golden.dfp.formats import BIASED, RNE, TRUNC, Config
from golden.dfp.numerics import bitlen, bits_f32, to_fp32
from golden.dfp.quant import QuantizerModel, dequant, quant_block

MODES = (TRUNC, BIASED, RNE)


def _random_block(rng, n, spread=20, specials=False):
    """FP32 words: normals with exponents spread around a random centre, plus zeros,
    denormals and (optionally) Inf/NaN."""
    centre = rng.randrange(1 + spread, 254 - spread)
    words = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.05:
            words.append(rng.getrandbits(1) << 31)
        elif kind < 0.08:
            words.append(rng.getrandbits(1) << 31 | rng.randrange(1, 1 << 23))
        elif specials and kind < 0.09:
            words.append(rng.choice([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001]))
        else:
            e = max(1, min(254, centre + rng.randrange(-spread, 1)))
            words.append(rng.getrandbits(1) << 31 | e << 23 | rng.getrandbits(23))
    return words


@pytest.mark.req("DFP-GV1", "DFP-V7", "DFP-F4", "DFP-F5")
@pytest.mark.parametrize("words,mode,ints,sf_b", gv.GV1)
def test_worked_example_gv1(words, mode, ints, sf_b):
    q = quant_block(words, mode)
    assert q.I == ints and q.sf_b == sf_b and q.bl == 15


@pytest.mark.req("DFP-GV3", "DFP-F6", "DFP-F7", "DFP-F8", "DFP-C6")
@pytest.mark.parametrize("mode,bias_bits", list(gv.GV3))
def test_rounding_boundaries_gv3(mode, bias_bits):
    q = quant_block(gv.GV3_WORDS, mode, bias_bits)
    assert q.sf_b == 127 and q.I == gv.GV3[(mode, bias_bits)]


@pytest.mark.req("DFP-GV5", "DFP-F9")
@pytest.mark.parametrize("mode", MODES)
def test_saturation_gv5(mode):
    ints, n_sat = gv.GV5[mode]
    q = quant_block(gv.GV5_WORDS, mode)
    assert (q.I, q.n_sat, q.sf_b) == (ints, n_sat, 127)


@pytest.mark.req("DFP-GV6", "DFP-GV7", "DFP-GV8", "DFP-GV9", "DFP-GV11", "DFP-F10", "DFP-F11",
                 "DFP-F12", "DFP-E8", "DFP-F2")
@pytest.mark.parametrize("name", list(gv.GV6_11))
def test_special_blocks(name):
    words, ints, sf_b, flags = gv.GV6_11[name]
    q = quant_block(words, BIASED)
    assert q.I == ints and q.sf_b == sf_b
    for key, value in flags.items():
        assert getattr(q, key) == value, key
    if q.inv:
        assert q.n_sat == q.n_ftz == 0 and q.bl == 0


@pytest.mark.req("DFP-GV10")
@pytest.mark.parametrize("mode", MODES)
def test_shift_edges_gv10(mode):
    q = quant_block(gv.GV10_WORDS, mode)
    assert q.sf_b == 143 and q.I == gv.GV10[mode]


@pytest.mark.req("DFP-GV29", "DFP-F15", "DFP-F14", "DFP-F11", "DFP-F47")
@pytest.mark.parametrize("case", list(gv.GV29))
def test_single_pass_gv29(case):
    e_ext, words, ints, sf_b, bl, flags, meta = gv.GV29[case]
    q = quant_block(words, BIASED, e_ext=e_ext)
    assert (q.I, q.sf_b, q.bl, q.meta) == (ints, sf_b, bl, meta)
    for key, value in flags.items():
        assert getattr(q, key) == value, key


@pytest.mark.req("DFP-F4", "DFP-F5", "DFP-F13", "DFP-F14", "DFP-V3", "DFP-V4", "DFP-F1")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bias_bits", [1, 2])
def test_element_error_and_normalization(mode, bias_bits, seed):
    """Independent check: |I·ε − x| against the exact value of x (float64 holds FP32 exactly),
    in units of ε = 2^(sf_b − 141): < 1 TRUNC, ≤ 1 − 2^−(BIAS_BITS+1) BIASED, ≤ 0.5 RNE; < 1
    for saturated elements. Two-pass blocks are normalized (max|I| in [2^14, 32767])."""
    rng = random.Random(seed)
    bound = {TRUNC: 1.0, BIASED: 1.0 - 2.0 ** -(bias_bits + 1), RNE: 0.5}[mode]
    for _ in range(400):
        words = _random_block(rng, rng.randrange(1, 65), spread=rng.choice([2, 10, 30]))
        q = quant_block(words, mode, bias_bits)
        if q.zero:
            assert all(((w >> 23) & 0xFF) == 0 for w in words)
            continue
        assert q.sf_b == max((w >> 23) & 0xFF for w in words)
        assert 1 << 14 <= max(abs(i) for i in q.I) <= 32767
        assert q.bl == 15 and -32768 not in q.I
        eps = 2.0 ** (q.sf_b - 141)
        for w, i in zip(words, q.I):
            x = bits_f32(w)
            if (w >> 23) & 0xFF == 0:
                assert i == 0
                continue
            err = abs(i * eps - x) / eps
            assert err < 1.0 if abs(i) == 32767 else err <= bound, (hex(w), i, err)


@pytest.mark.req("DFP-V5", "DFP-F16", "DFP-F2")
@pytest.mark.parametrize("mode", MODES)
def test_round_trip_exact_multiples(mode, seed):
    """dequant(quant(x)) = x for blocks of multiples k·2^Es (|k| ≤ 32767, normal values, the
    absmax fixing E_amax); quant(dequant(block)) = block for normalized blocks."""
    rng = random.Random(seed)
    for _ in range(300):
        sf_b = rng.randrange(15, 255)
        n = rng.randrange(1, 33)
        ks = [rng.randrange(-32767, 32768) for _ in range(n)]
        ks[rng.randrange(n)] = rng.choice([1, -1]) * rng.randrange(16384, 32768)  # fixes E_amax
        words = [to_fp32(k, sf_b - 141) for k in ks]
        q = quant_block(words, mode)
        assert q.sf_b == sf_b and q.I == ks
        assert [dequant(i, q.sf_b) for i in q.I] == words
    # sf_b < 15: 2^-140 is a denormal input, flushed (DFP-V5 example)
    q = quant_block([to_fp32(1, -126), 0x00000000 | (1 << 9)], mode)   # 2^-126, 2^-140
    assert q.sf_b == 1 and q.I == [16384, 0] and q.n_ftz == 1


@pytest.mark.req("DFP-E7", "DFP-F13", "DFP-I6", "DFP-E5", "DFP-F46")
def test_quantizer_stream_model_blocks_and_counters(seed):
    rng = random.Random(seed)
    model = QuantizerModel(q_lanes=2, blk_max=8)
    cfg = Config(round_mode=3)                      # reserved: acts as BIASED, cfg_err
    words = [0x3F800000] * 10                       # 5 beats without last: cut at 8 elements
    out = []
    for k in range(5):
        out += model.beat(words[2 * k:2 * k + 2], last=int(k == 4), e_ext=0, cfg=cfg)
    assert [b["last"] for b in out] == [0, 0, 0, 1, 1]
    assert out[3]["blk_err"] == 1 and out[4]["blk_err"] == 0
    assert all(b["i"] == [16384, 16384] for b in out)
    assert model.stats["quant_blocks"] == 2 and model.stats["cfg_err"] == 1
    assert all(b["meta"] == 0 for b in out if not b["last"])
    model.stats_clr()
    assert all(v == 0 for v in model.stats.values())
    # a random stream against quant_block on the same blocks
    for _ in range(50):
        n = rng.randrange(1, 5)
        words = _random_block(rng, 2 * n, specials=True)
        got = []
        for k in range(n):
            got += model.beat(words[2 * k:2 * k + 2], last=int(k == n - 1), e_ext=0, cfg=Config())
        q = quant_block(words, BIASED)
        assert sum((b["i"] for b in got), []) == q.I
        assert got[-1]["meta"] == q.meta and got[-1]["n_sat"] == q.n_sat


@pytest.mark.req("DFP-GV21", "DFP-F42", "DFP-F43", "DFP-F44", "DFP-F45", "DFP-F47", "DFP-E10",
                 "DFP-V7")
@pytest.mark.parametrize("case", list(gv.GV21))
def test_downconvert_gv21(case):
    v, es, in_w, big_r, es16, sf_b, ints, n_sat, flags, meta = gv.GV21[case]
    for mode, expect in ints.items():
        d = downconvert(v, es, mode)
        assert (d.R, d.es16, d.sf_b, d.I) == (big_r, es16, sf_b, expect), mode
        if n_sat is not None:
            assert d.n_sat == n_sat[mode]
        for key, value in flags.items():
            assert getattr(d, key) == value
        if mode == BIASED and meta is not None:
            assert d.meta == meta
    assert dequant(25281, 143) == to_fp32(318 * 318, 0)        # the check under GV21


@pytest.mark.req("DFP-F42", "DFP-F43", "DFP-V3", "DFP-V6", "DFP-V5", "DFP-F1")
def test_downconvert_properties(seed):
    """R = max(0, bitlen − 15) of the aligned max; blocks with R > 0 are normalized; es16 =
    es_max + R; R = 0 with equal es is the identity; the value error is < 2^R·(1 + 1) units
    of the input LSB at es_max (alignment truncation plus rounding)."""
    rng = random.Random(seed)
    for _ in range(2000):
        n = rng.randrange(1, 17)
        width = rng.randrange(2, 48)
        v = [rng.randrange(-(1 << width) + 1, 1 << width) for _ in range(n)]
        base = rng.randrange(-60, 60)
        es = [base + rng.choice([0, 0, 0, -1, -3]) for _ in range(n)]
        mode = rng.choice(MODES)
        d = downconvert(v, es, mode)
        es_max = max(es)
        aligned = [(-1 if x < 0 else 1) * (abs(x) >> (es_max - e)) for x, e in zip(v, es)]
        m = max(abs(x) for x in aligned)
        assert d.R == max(0, bitlen(m) - 15)
        assert d.es16 == es_max + d.R
        assert -32768 not in d.I
        if d.exp_ovf or d.exp_unf or m == 0:
            continue
        if d.R > 0:
            assert 1 << 14 <= max(abs(i) for i in d.I) <= 32767
        else:
            assert d.I == aligned
        for x, i in zip(aligned, d.I):
            assert abs(math.ldexp(i, d.R) - x) <= 2 ** d.R


@pytest.mark.req("DFP-E7", "DFP-I8", "DFP-F46")
def test_downconverter_stream_model():
    model = DownConverterModel(q_lanes=4, blk_max=8, in_w=32)
    out = []
    for k in range(3):                                       # 12 elements, no last: cut at 8
        out += model.beat([1000, -5, 7, 3], es=k, last=int(k == 2), cfg=Config())
    assert len(out) == 3 and out[1]["blk_err"] == 1 and out[1]["last"] == 1
    d = downconvert([1000, -5, 7, 3, 1000, -5, 7, 3], [0] * 4 + [1] * 4, BIASED)
    assert out[0]["i"] + out[1]["i"] == d.I and out[0]["es16"] == d.es16
    assert model.stats["dc_blocks"] == 2
