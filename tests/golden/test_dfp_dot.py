"""Golden dot unit (DotUnit) against the spec's vectors and properties: modes, precision
manager, Fig 20 update, protocol errors, statistics; and the vectorized engine (DFP-V8)."""

import random

import numpy as np
import pytest

from golden.dfp import vectors as gv
from golden.dfp.dot import DotUnit, chunk_setup, preshift_setup, r0_min
from golden.dfp.formats import ADAPTIVE, CHUNK, NONE, PRESHIFT, Config
from golden.dfp.numerics import bitlen, clog2
from golden.dfp.vector import dfp_matmul

MODES = (NONE, PRESHIFT, CHUNK, ADAPTIVE)


def _cfg(**changes):
    return Config().replace(**changes)


@pytest.mark.req("DFP-GV15", "DFP-F26", "DFP-F27", "DFP-F28", "DFP-F29", "DFP-F41", "DFP-V7")
@pytest.mark.parametrize("k,ovf_sat,acc,ovf,sat_cnt,headroom,fp32", gv.GV15)
def test_none_mode_full_scale_gv15(k, ovf_sat, acc, ovf, sat_cnt, headroom, fp32):
    r = DotUnit(1, 32).chain([32767] * k, [32767] * k, 0, 0, _cfg(mode=NONE, ovf_sat=ovf_sat))
    assert (r["acc"], r["ovf"], r["sat_cnt"], r["headroom"], r["fp32"]) == \
        (acc, ovf, sat_cnt, headroom, fp32)


@pytest.mark.req("DFP-GV16", "DFP-F30", "DFP-F32", "DFP-F33", "DFP-F34", "DFP-F35", "DFP-F36",
                 "DFP-F24", "DFP-V7")
@pytest.mark.parametrize("acc_w,cfg,acc,r,shifts,es_out,chunks,headroom,fp32", gv.GV16)
def test_managed_modes_gv16(acc_w, cfg, acc, r, shifts, es_out, chunks, headroom, fp32):
    unit = DotUnit(1, acc_w)
    res = unit.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(**cfg), bl_a=15, bl_b=15, k_log2=2)
    assert (res["acc"], res["r"], res["shifts"], res["es_out"], res["chunks"], res["headroom"],
            res["fp32"], res["ovf"]) == (acc, r, shifts, es_out, chunks, headroom, fp32, 0)
    if cfg["mode"] == ADAPTIVE and acc_w == 32:
        assert unit.acc_trace == gv.GV16_ADAPTIVE_TRACE


@pytest.mark.req("DFP-GV17", "DFP-F21", "DFP-F22", "DFP-F35", "DFP-V7")
@pytest.mark.parametrize("acc_w,cfg,k_log2,acc,r,shifts,ovf,sat_cnt,headroom,chunks,fp32", gv.GV17)
def test_lanes16_full_scale_gv17(acc_w, cfg, k_log2, acc, r, shifts, ovf, sat_cnt, headroom,
                                 chunks, fp32):
    res = DotUnit(16, acc_w).chain([32767] * 48, [32767] * 48, 0, 0, _cfg(**cfg), bl_a=15,
                                   bl_b=15, k_log2=k_log2)
    assert (res["acc"], res["r"], res["shifts"], res["ovf"], res["sat_cnt"], res["headroom"],
            res["chunks"], res["fp32"]) == (acc, r, shifts, ovf, sat_cnt, headroom, chunks, fp32)
    single = DotUnit(16, 32).chain([32767] * 16, [32767] * 16, 0, 0, _cfg(mode=ADAPTIVE))
    assert (single["acc"], single["r"], single["headroom"], single["fp32"]) == gv.GV17_SINGLE


@pytest.mark.req("DFP-GV18", "DFP-F24", "DFP-F40", "DFP-V7")
@pytest.mark.parametrize("cfg,acc,es_out,headroom,chunks,fp32", gv.GV18)
def test_worked_example_dot_gv18(cfg, acc, es_out, headroom, chunks, fp32):
    res = DotUnit(1, 32).chain(gv.GV18_A, gv.GV18_B, -6, -6, _cfg(**cfg), bl_a=15, bl_b=15,
                               k_log2=1)
    assert (res["acc"], res["es_out"], res["headroom"], res["chunks"], res["fp32"]) == \
        (acc, es_out, headroom, chunks, fp32)


@pytest.mark.req("DFP-GV19", "DFP-F36", "DFP-V14")
@pytest.mark.parametrize("a,b,acc,r,headroom,fp32", gv.GV19)
def test_detector_edges_gv19(a, b, acc, r, headroom, fp32):
    res = DotUnit(1, 32).chain(a, b, 0, 0, _cfg(mode=ADAPTIVE))
    assert (res["acc"], res["r"], res["headroom"], res["fp32"]) == (acc, r, headroom, fp32)


def run_fig20_sequence(unit, steps):
    """Feed a GV20 sequence; returns [(r_start, acc, r, headroom, r_cnt after)]."""
    rows = []
    for step in steps:
        if step == "clr":
            unit.clr()
            continue
        cfg, ops, eop = _cfg(**step[0]), step[1], step[2]
        res = unit.chain(ops, ops, 0, 0, cfg, eop=eop)
        r_start = res["r"] - res["shifts"] if cfg.mode == ADAPTIVE else None
        rows.append((r_start, res["acc"], res["r"], res["headroom"], unit.r_cnt))
    return rows


@pytest.mark.req("DFP-GV20", "DFP-F38", "DFP-F39", "DFP-F35", "DFP-V12", "DFP-C12", "DFP-C13")
@pytest.mark.parametrize("name", list(gv.GV20))
def test_fig20_sequences_gv20(name):
    steps = gv.GV20[name]
    expect = [tuple(s[3:]) for s in steps if s != "clr"]
    assert run_fig20_sequence(DotUnit(1, 32), steps) == expect


@pytest.mark.req("DFP-GV22", "DFP-E1", "DFP-E2", "DFP-E3", "DFP-E4", "DFP-F25", "DFP-F31")
def test_error_paths_gv22():
    u = DotUnit(1, 32)
    r = u.chain([-32768], [-32768], 0, 0, _cfg(mode=NONE))
    assert (r["acc"], r["fp32"], r["op_err"]) == (1073676289, 0x4E7FFC00, 1)
    r = u.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=PRESHIFT, ovf_sat=1), bl_a=15, bl_b=15,
                k_log2=1)
    assert (r["r"], r["acc"], r["ovf"], r["sat_cnt"], r["meta_err"]) == (0, 2147483647, 1, 1, 1)
    u16 = DotUnit(16, 32)
    ops = [100, 100, 100] + [0] * 13
    r = u16.chain(ops, ops, 0, 0, _cfg(mode=PRESHIFT), bl_a=15, bl_b=15, k_log2=2)
    assert (r["r"], r["acc"], r["ovf"], r["meta_err"]) == (1, 15000, 0, 1)
    r = u16.chain(ops, ops, 0, 0, _cfg(mode=PRESHIFT), bl_a=15, bl_b=15, k_log2=4)
    assert (r["r"], r["acc"], r["ovf"], r["meta_err"]) == (3, 3750, 0, 0)
    # E3: a beat with first 0 while idle starts a chain flagged proto_err
    u = DotUnit(1, 32)
    beat = {"a": [5], "b": [7], "first": 0, "last": 1, "eop": 1}
    (res,) = u.beat(beat, _cfg(mode=NONE))
    assert res["proto_err"] == 1 and res["acc"] == 35
    # E4: first=1 while a chain is open closes it (eop 0) with proto_err, then starts anew
    assert u.beat({"a": [32767], "b": [32767], "first": 1, "last": 0}, _cfg(mode=NONE)) == []
    out = u.beat({"a": [1], "b": [1], "first": 1, "last": 1, "eop": 1}, _cfg(mode=NONE))
    assert [(r["acc"], r["proto_err"]) for r in out] == [(1073676289, 1), (1, 0)]
    assert u.stats["err_chains"] == 2 and u.stats["chains"] == 3


@pytest.mark.req("DFP-E4", "DFP-F33")
def test_e4_in_chunk_mode_ends_as_if_last():
    """A CHUNK chain cut by a first beat right after a chunk closed keeps that chunk's partial
    in acc, exactly as if the previous beat had carried last = 1."""
    cfg = _cfg(mode=CHUNK, chunk_len=2, chunk_auto=0)
    cut, whole = DotUnit(1, 32), DotUnit(1, 32)
    beats = [{"a": [x], "b": [3], "first": int(k == 0), "last": 0, "bl_a": 15, "bl_b": 15}
             for k, x in enumerate([1000, 2000, 3000, 4000])]
    for beat in beats:
        assert cut.beat(beat, cfg) == []
    (got, _) = cut.beat({"a": [1], "b": [1], "first": 1, "last": 1, "eop": 1}, cfg)
    expect = whole.chain([1000, 2000, 3000, 4000], [3] * 4, 0, 0, cfg, bl_a=15, bl_b=15, eop=0)
    assert got == {**expect, "proto_err": 1}
    assert got["acc"] == 3 * 7000 and got["chunks"] == 2


@pytest.mark.req("DFP-E6", "DFP-F46")
def test_chunk_len_zero_is_one_with_cfg_err():
    u = DotUnit(1, 32)
    r0 = u.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=CHUNK, chunk_len=0, chunk_auto=0))
    assert u.stats["cfg_err"] == 1
    r1 = DotUnit(1, 32).chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=CHUNK, chunk_len=1,
                                                                     chunk_auto=0))
    assert r0 == r1
    u2 = DotUnit(1, 32)
    u2.chain([1], [1], 0, 0, _cfg(mode=ADAPTIVE, chunk_len=0, round_mode=3))
    assert u2.stats["cfg_err"] == 0          # not CHUNK, and round_mode is not the dot unit's


@pytest.mark.req("DFP-GV28", "DFP-F48")
@pytest.mark.parametrize("blk_beat,acc,es_out,r,chunks,headroom,fp32", gv.GV28)
def test_blocked_chunk_gv28(blk_beat, acc, es_out, r, chunks, headroom, fp32):
    blk = {} if blk_beat is None else {blk_beat: (1, 0, 15, 15)}
    res = DotUnit(1, 32).chain([30000] * 3, [30000] * 3, 0, 0, _cfg(mode=CHUNK), bl_a=15, bl_b=15,
                               blk=blk)
    assert (res["acc"], res["es_out"], res["r"], res["chunks"], res["headroom"], res["fp32"]) == \
        (acc, es_out, r, chunks, headroom, fp32)


@pytest.mark.req("DFP-GV23")
def test_headroom_capacities_gv23():
    for s, (cap32, cap48) in gv.GV23.items():
        p = ((1 << (15 - s)) - 1) ** 2
        assert ((1 << 31) - 1) // p == cap32 and ((1 << 47) - 1) // p == cap48
        # NONE mode really holds cap products of pre-shifted full scale without overflow
        for acc_w, cap in ((32, cap32),):
            u = DotUnit(1, acc_w)
            x = (1 << (15 - s)) - 1
            assert u.chain([x] * cap, [x] * cap, 0, 0, _cfg(mode=NONE))["ovf"] == 0
            assert u.chain([x] * (cap + 1), [x] * (cap + 1), 0, 0, _cfg(mode=NONE))["ovf"] == 1
    full = 32767 ** 2
    for acc_w, n in gv.GV23_GUARD.items():
        assert ((1 << (acc_w - 2)) - 1) // full == n


@pytest.mark.req("DFP-GV24", "DFP-GV25", "DFP-F30", "DFP-F32", "DFP-F35")
def test_setup_values_gv24_gv25():
    for lanes, (tree, r32, r48, wb, len1, len4, at48) in gv.GV24.items():
        assert 31 + clog2(lanes) == tree and bitlen(lanes * 32767 ** 2) <= tree
        assert (r0_min(lanes, 32), r0_min(lanes, 48)) == (r32, r48)
        assert chunk_setup(15, 15, lanes, 32, 1, 1)[0] == wb
        assert chunk_setup(15, 15, lanes, 32, 1, 1)[1:] == len1
        assert chunk_setup(15, 15, lanes, 32, 4, 1)[1:] == len4
        assert chunk_setup(15, 15, lanes, 48, 4, 1)[1:] == at48
    for k, (k_log2, ex32, (sa, sb), ex48) in gv.GV25.items():
        assert clog2(k) == k_log2
        assert preshift_setup(15, 15, k_log2, 32) == (ex32, sa, sb)
        assert preshift_setup(15, 15, k_log2, 48)[0] == ex48


def _random_operands(rng, n):
    scale = rng.choice([1, 2 ** 4, 2 ** 10, 2 ** 14, 32767])
    ops = [rng.randrange(-scale, scale + 1) for _ in range(n)]
    if rng.random() < 0.3:
        ops = [rng.choice([32767, -32767]) for _ in range(n)]
    if rng.random() < 0.05:
        ops[rng.randrange(n)] = -32768
    return [max(-32768, min(32767, x)) for x in ops]


@pytest.mark.req("DFP-V2", "DFP-V6", "DFP-F27", "DFP-F31", "DFP-F36", "DFP-F37", "DFP-F34",
                 "DFP-F41")
@pytest.mark.parametrize("lanes,acc_w", [(1, 32), (4, 32), (16, 32), (8, 48), (16, 48)])
def test_no_silent_overflow_and_exponents(lanes, acc_w, seed):
    """Exact shadow sums: NONE flags ovf exactly when a beat prefix leaves the range; managed
    modes with honest metadata never overflow; ADAPTIVE keeps |acc| < 2^(ACC_W-2) after every
    beat, r monotonic with shifts = r − r_start; es_out = es_a + es_b + r everywhere."""
    rng = random.Random(seed)
    lo, hi = -(1 << (acc_w - 1)), (1 << (acc_w - 1)) - 1
    for _ in range(150):
        beats = rng.choice([1, 2, 3, 5, 17, 64])
        a, b = _random_operands(rng, lanes * beats), _random_operands(rng, lanes * beats)
        mode = rng.choice(MODES)
        cfg = _cfg(mode=mode, ovf_sat=rng.getrandbits(1), chunk_len=rng.choice([1, 2, 4, 9]),
                   chunk_auto=rng.getrandbits(1), r0=rng.choice([0, 0, 3, 7]))
        es_a, es_b = rng.randrange(-280, 120), rng.randrange(-280, 120)
        unit = DotUnit(lanes, acc_w)
        res = unit.chain(a, b, es_a, es_b, cfg)
        assert res["es_out"] == es_a + es_b + res["r"]
        ca = [-32767 if x == -32768 else x for x in a]
        cb = [-32767 if x == -32768 else x for x in b]
        assert res["op_err"] == int(ca != a or cb != b)
        if mode == NONE:
            prefix, leaves = 0, False
            for k in range(beats):
                prefix += sum(x * y for x, y in zip(ca[k * lanes:(k + 1) * lanes],
                                                    cb[k * lanes:(k + 1) * lanes]))
                leaves |= not lo <= prefix <= hi
            assert res["ovf"] == int(leaves)
        elif res["meta_err"] == 0:
            assert res["ovf"] == 0
        if mode == ADAPTIVE:
            assert all(abs(x) < 1 << (acc_w - 2) for x in unit.acc_trace)
            r_start = max(cfg.r0, r0_min(lanes, acc_w))
            assert res["r"] >= r_start and res["shifts"] == res["r"] - r_start
            assert res["r"] <= max(r_start, 30 + clog2(lanes))


@pytest.mark.req("DFP-V8", "DFP-I11", "DFP-I10")
@pytest.mark.parametrize("mode", MODES)
def test_dfp_matmul_equals_scalar_chains(mode, seed):
    """>= 1000 random (i, j) samples per mode: the vectorized dfp_matmul equals DotUnit.chain."""
    rng = np.random.default_rng(seed)
    checked = 0
    for lanes, acc_w, k in [(16, 32, 64), (16, 32, 10), (1, 32, 37), (4, 48, 100), (8, 32, 33)]:
        a = (rng.standard_normal((12, k)) * np.exp(rng.standard_normal((12, 1)) * 4)).astype(np.float32)
        b = (rng.standard_normal((k, 20)) * rng.choice([1e-3, 1.0, 1e3])).astype(np.float32)
        cfg = Config(mode=mode, ovf_sat=int(rng.integers(2)), chunk_len=int(rng.integers(1, 6)),
                     chunk_auto=int(rng.integers(2)))
        full = dfp_matmul(a, b, mode, lanes, acc_w, cfg=cfg, full=True)
        unit = DotUnit(lanes, acc_w)
        for i in range(12):
            for j in range(20):
                res = unit.chain(full["ia"][i], full["ib"][:, j], int(full["sf_a"][i]) - 141,
                                 int(full["sf_b"][j]) - 141, cfg, bl_a=int(full["bl_a"][i]),
                                 bl_b=int(full["bl_b"][j]))
                for key in ("acc", "es_out", "r", "shifts", "ovf", "sat_cnt", "headroom",
                            "chunks", "fp32", "mode"):
                    assert int(full[key][i, j]) == res[key], (lanes, acc_w, k, i, j, key)
                checked += 1
    assert checked >= 1000


@pytest.mark.req("DFP-F46", "DFP-I10")
def test_stats_counters_and_clear():
    u = DotUnit(1, 32)
    u.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=NONE, ovf_sat=1))
    u.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=ADAPTIVE))
    u.chain([32767] * 3, [32767] * 3, 0, 0, _cfg(mode=CHUNK, chunk_len=1, chunk_auto=0))
    s = u.stats
    assert (s["chains"], s["beats"], s["ovf_chains"], s["sat_events"], s["adaptive_shifts"],
            s["chunk_closes"], s["err_chains"], s["r_max"], s["h_min"]) == (3, 9, 1, 1, 2, 3, 0, 2, 0)
    u.stats_clr()
    assert u.stats["h_min"] == 31 and u.stats["chains"] == 0 and u.stats["r_max"] == 0
    with pytest.raises(ValueError, match="lanes"):
        DotUnit(3, 32)
    with pytest.raises(ValueError, match="acc_w"):
        DotUnit(16, 50)
