"""cocotb testbench of ``DfpDotUnit`` (hw.dfp.dot) against ``golden.dfp.dot.DotUnit``.

Every testcase runs the unit through :class:`tb.dfp.dot_env.DotHarness`: every result field of
every chain is compared bit-exactly with the golden model (scoreboard, DFP-V1), the debug port's
accumulator after every beat with the golden ``acc_trace``, protocol checkers watch ``i_op`` and
``o_res``, and the DFP-V2 shadow sums check overflow. Testcases whose golden vector needs a given
LANES / ACC_W log and return on other builds. Cycle testcases (DFP-P1..P4) live in
``tb.dfp.dot_perf``.
"""

import cocotb
from cocotb.triggers import RisingEdge

from golden.dfp import vectors as V
from golden.dfp.formats import ADAPTIVE, CHUNK, NONE, PRESHIFT, Config
from hw.dfp.dot_post import QUEUE_DEPTH
from tb.common import env
from tb.common.stream import read_int
from tb.dfp.dot_env import DotHarness
from tb.dfp.dot_perf import p1_throughput, p2_chunk, p3_fig20, p4_latency
from tb.dfp.dot_stim import ChainGen, beat, chain_items, stream_items

T = dict(timeout_time=200, timeout_unit="ms")


def _build(*want):
    p = env.params()
    return (p["lanes"], p["acc_w"]) in want or (p["lanes"], None) in want


async def _run_one(h, items):
    """Queue a chain, wait for its result, return the results it produced."""
    n = len(h.observed)
    h.queue(items)
    await h.drain()
    return [t.fields for t in h.observed[n:]]


def _check_fields(res, want, what):
    bad = {k: (res[k], v) for k, v in want.items() if res[k] != v}
    assert not bad, f"{what}: (dut, spec) differ: {bad}"


def _rows(lanes, values):
    """One beat per value, value in lane 0 and zero padding lanes."""
    return [[v] + [0] * (lanes - 1) for v in values]


# ---------------------------------------------------------------- random / back-pressure --

@cocotb.test(**T)
async def random_stream(dut):
    """DFP-V1/V2: random chains in all modes and policies, random cfg per chain (junk cfg on
    non-first beats), blk beats, clr strobes, E3/E4 cuts, −32768, honest and violated metadata,
    random gaps and back-pressure; stats against the golden model at the end."""
    h = DotHarness(dut, gap_prob=0.2, ready_prob=0.7)
    await h.start()
    gen = ChainGen(h.lanes, h.acc_w, env.rng(1))
    n = 300 if h.lanes <= 4 else 160
    for burst in (1.0, 4.0):
        h.set_gap(0.2, burst)
        h.set_ready(0.7, burst)
        h.queue(stream_items(gen, n // 2))
        await h.drain()
    h.queue([("idle", 5)])
    await h.drain()
    h.check()
    stats = h.check_stats_golden()
    dut._log.info("%s; %d beats; stats %s", h.sb.summary(), len(h.accepted), stats)


@cocotb.test(**T)
async def back_pressure(dut):
    """DFP-V11/I9: >= 10^4 beats, o_res.ready low 30 % of cycles, random valid gaps: nothing
    lost or duplicated, order kept, results identical to the golden model."""
    h = DotHarness(dut, gap_prob=0.1, ready_prob=0.7)
    await h.start()
    gen = ChainGen(h.lanes, h.acc_w, env.rng(2))
    # stall phase: o_res.ready low, single-beat chains offered every cycle: i_op.ready must
    # fall before the result buffer (head register, queue, o_res register) overflows
    h.set_ready(0.0)
    h.set_gap(0.0)
    h.queue([it for _ in range(60) for it in gen.chain(beats=1, eop=0)])
    for _ in range(200):
        await RisingEdge(dut.clk)
    inside = len(h.accepted)
    assert 0 < inside <= QUEUE_DEPTH + 2, f"{inside} chains accepted while o_res stalled"
    assert read_int(dut.i_op__ready) == 0
    dut._log.info("o_res stalled: i_op.ready fell after %d single-beat chains", inside)
    h.set_ready(0.7)
    h.set_gap(0.1)
    await h.drain()
    while sum(1 for it in h.items if it[0] == "beat") + len(h.accepted) < 10_000:
        h.queue(stream_items(gen, 50, clr_prob=0.02, proto_prob=0.03, idle_prob=0.0))
    await h.drain(timeout=400_000)
    h.check()
    assert len(h.accepted) >= 10_000
    low = h.check_o.rules.stall_cycles
    dut._log.info("%s; %d beats, %d o_res stall cycles, %d i_op stall cycles", h.sb.summary(),
                  len(h.accepted), low, h.check_i.rules.stall_cycles)


@cocotb.test(**T)
async def stats_clr_priority(dut):
    """DFP-F46: stats_clr zeroes every counter and wins over events of the same cycle; checked
    against an event-level model of the stats port, with strobes placed on beat and result
    transfer cycles."""
    h = DotHarness(dut, gap_prob=0.1, ready_prob=0.8)
    await h.start()
    gen = ChainGen(h.lanes, h.acc_w, env.rng(3))
    h.queue(stream_items(gen, 60, stats_clr_prob=0.2))
    await h.drain()
    # strobes on transfer cycles: ready high, strobe at random while beats go in and results
    # come out
    h.set_ready(1.0)
    rng = env.rng(4)
    h.stats_clr_hook = lambda: (len(h.observed) < len(h.expected) or h.items) \
        and rng.random() < 0.15
    h.queue(stream_items(gen, 40, stats_clr_prob=0.0, idle_prob=0.0, proto_prob=0.0))
    await h.drain()
    h.stats_clr_hook = None
    h.check()
    clr_cycles = {c for c, k, _ in h.stat_events if k == "stats_clr"}
    hits = {k for c, k, _ in h.stat_events if c in clr_cycles and k in ("beat", "res")}
    assert hits == {"beat", "res"}, f"no same-cycle beat/result event was hit: {hits}"
    got, want = h.read_stats(), h.expected_stats_events()
    assert got == want, f"stats: got {got}, expected {want}"
    dut._log.info("stats_clr strobes %d, same-cycle events %s; stats %s", len(clr_cycles),
                  sorted(hits), got)


# ------------------------------------------------------------------- golden vectors ------

@cocotb.test(**T)
async def gv15(dut):
    """DFP-GV15: NONE at full scale, WRAP and SAT (LANES 1, ACC_W 32)."""
    if not _build((1, 32)):
        return dut._log.info("GV15 needs LANES 1, ACC_W 32")
    h = DotHarness(dut)
    await h.start()
    for k, sat, acc, ovf, sat_cnt, headroom, fp32 in V.GV15:
        cfg = Config(mode=NONE, ovf_sat=sat)
        (res,) = await _run_one(h, chain_items(1, [[32767]] * k, [[32767]] * k, cfg))
        _check_fields(res, {"acc": acc, "ovf": ovf, "sat_cnt": sat_cnt, "headroom": headroom,
                            "fp32": fp32}, f"GV15 K={k} sat={sat}")
    h.check()


@cocotb.test(**T)
async def gv16(dut):
    """DFP-GV16: managed modes at K = 3 full scale (LANES 1, both ACC_W) and the ADAPTIVE
    trace of the debug port."""
    if not _build((1, 32), (1, 48)):
        return dut._log.info("GV16 needs LANES 1")
    h = DotHarness(dut)
    await h.start()
    for acc_w, changes, acc, r, shifts, es_out, chunks, headroom, fp32 in V.GV16:
        if acc_w != h.acc_w:
            continue
        cfg = Config(**changes)
        n = len(h.trace_dut)
        (res,) = await _run_one(h, chain_items(1, [[32767]] * 3, [[32767]] * 3, cfg, k_log2=2))
        _check_fields(res, {"acc": acc, "r": r, "shifts": shifts, "es_out": es_out,
                            "chunks": chunks, "headroom": headroom, "fp32": fp32, "ovf": 0},
                      f"GV16 {changes}")
        if changes["mode"] == ADAPTIVE and acc_w == 32:
            assert [a for _, a, _ in h.trace_dut[n:]] == V.GV16_ADAPTIVE_TRACE
    h.check()


@cocotb.test(**T)
async def gv17(dut):
    """DFP-GV17: LANES 16, three all-32767 beats, every mode (both ACC_W), and the single
    ADAPTIVE beat at ACC_W 32."""
    if not _build((16, 32), (16, 48)):
        return dut._log.info("GV17 needs LANES 16")
    h = DotHarness(dut)
    await h.start()
    full = [[32767] * 16] * 3
    for acc_w, changes, k_log2, acc, r, shifts, ovf, sat_cnt, headroom, chunks, fp32 in V.GV17:
        if acc_w != h.acc_w:
            continue
        cfg = Config(**changes)
        (res,) = await _run_one(h, chain_items(16, full, full, cfg, k_log2=k_log2))
        _check_fields(res, {"acc": acc, "r": r, "es_out": r, "shifts": shifts, "ovf": ovf,
                            "sat_cnt": sat_cnt, "headroom": headroom, "chunks": chunks,
                            "fp32": fp32}, f"GV17 {changes}")
    if h.acc_w == 32:
        acc, r, headroom, fp32 = V.GV17_SINGLE
        (res,) = await _run_one(h, chain_items(16, full[:1], full[:1], Config(mode=ADAPTIVE)))
        _check_fields(res, {"acc": acc, "r": r, "headroom": headroom, "fp32": fp32},
                      "GV17 single beat")
    h.check()


@cocotb.test(**T)
async def gv18(dut):
    """DFP-GV18: the worked-example dot in every mode (LANES 1, ACC_W 32)."""
    if not _build((1, 32)):
        return dut._log.info("GV18 needs LANES 1, ACC_W 32")
    h = DotHarness(dut)
    await h.start()
    for changes, acc, es_out, headroom, chunks, fp32 in V.GV18:
        items = chain_items(1, [[x] for x in V.GV18_A], [[x] for x in V.GV18_B],
                            Config(**changes), es_a=-6, es_b=-6, k_log2=1)
        (res,) = await _run_one(h, items)
        _check_fields(res, {"acc": acc, "es_out": es_out, "headroom": headroom,
                            "chunks": chunks, "fp32": fp32}, f"GV18 {changes}")
    h.check()


async def _detector_edges(h, rows):
    for a, b, acc, r, headroom, fp32 in rows:
        items = chain_items(h.lanes, [[x] + [0] * (h.lanes - 1) for x in a],
                            [[x] + [0] * (h.lanes - 1) for x in b], Config(mode=ADAPTIVE))
        (res,) = await _run_one(h, items)
        _check_fields(res, {"acc": acc, "r": r, "headroom": headroom, "fp32": fp32},
                      f"detector edge a={a} b={b}")


@cocotb.test(**T)
async def gv19(dut):
    """DFP-GV19: ADAPTIVE leading-bit detector edges ±2**30 (LANES 1, ACC_W 32)."""
    if not _build((1, 32)):
        return dut._log.info("GV19 needs LANES 1, ACC_W 32")
    h = DotHarness(dut)
    await h.start()
    await _detector_edges(h, V.GV19)
    h.check()


def _row_for_sum(value, lanes=16):
    """A beat (a, b) with sum a*b = value >= 0: greedy lanes of x * 32767, the rest in lane 15."""
    a, b, rest = [], [], value
    for _ in range(lanes - 1):
        x = min(32767, rest // 32767)
        a.append(x)
        b.append(32767)
        rest -= x * 32767
    assert 0 <= rest <= 32767, value
    return a + [rest], b + [1]


@cocotb.test(**T)
async def detector_edge_acc48(dut):
    """DFP-V14 (GV19 at ACC_W 48): s = +2**46 and -2**46 exactly must shift, 2**46 - 3 must
    not (LANES 16): ~4100 beats of full-scale sums, then three beats landing exactly on the
    edge."""
    if not _build((16, 48)):
        return dut._log.info("needs LANES 16, ACC_W 48")
    h = DotHarness(dut)
    await h.start()
    edge = 1 << 46
    t_full = 16 * 32767 * 32767
    k = edge // t_full - 1
    rest = edge - k * t_full
    parts = [rest // 3, rest // 3, rest - 2 * (rest // 3)]
    for sign, minus, shift in ((1, 0, 1), (-1, 0, 1), (1, 3, 0)):
        rows = [([32767] * 16, [32767] * 16)] * k
        rows += [_row_for_sum(p - (minus if j == 2 else 0)) for j, p in enumerate(parts)]
        a_rows = [[sign * x for x in a] for a, _ in rows]
        items = chain_items(16, a_rows, [b for _, b in rows], Config(mode=ADAPTIVE))
        (res,) = await _run_one(h, items)
        want_acc = sign * (edge >> 1) if shift else sign * (edge - minus)
        _check_fields(res, {"r": shift, "shifts": shift, "acc": want_acc},
                      f"ACC_W 48 detector edge sign {sign} minus {minus}")
    h.check()


@cocotb.test(**T)
async def gv20(dut):
    """DFP-GV20 / V12: Fig 20 sequences A, B, C, A with clr, D: r_start, acc, r, headroom per
    chain and r_cnt after every chain (chains run one at a time), then the same sequences back
    to back (the update must reach the very next chain)."""
    if not _build((1, 32)):
        return dut._log.info("GV20 needs LANES 1, ACC_W 32")
    h = DotHarness(dut)
    await h.start()
    for name, seq in V.GV20.items():
        h.queue([("clr",)])
        for entry in seq:
            if entry == "clr":
                h.queue([("clr",)])
                continue
            changes, values, eop, r_start, acc, r, headroom, r_cnt = entry
            items = chain_items(1, [[v] for v in values], [[v] for v in values],
                                Config(**changes), eop=eop)
            (res,) = await _run_one(h, items)
            want = {"acc": acc, "r": r, "headroom": headroom}
            if r_start is not None:
                assert res["r"] - res["shifts"] == r_start, f"GV20 {name}: r_start {res}"
            _check_fields(res, want, f"GV20 {name} chain {values}")
            got_cnt = h.read_stats()["r_cnt"]
            assert got_cnt == r_cnt, f"GV20 {name}: r_cnt after chain {got_cnt}, spec {r_cnt}"
    for name, seq in V.GV20.items():          # back to back: golden comparison + spec fields
        n = len(h.observed)
        h.queue([("clr",)] + [it for entry in seq for it in (
            [("clr",)] if entry == "clr" else chain_items(
                1, [[v] for v in entry[1]], [[v] for v in entry[1]], Config(**entry[0]),
                eop=entry[2]))])
        await h.drain()
        chains = [e for e in seq if e != "clr"]
        for res, entry in zip([t.fields for t in h.observed[n:]], chains):
            _check_fields(res, {"acc": entry[4], "r": entry[5], "headroom": entry[6]},
                          f"GV20 {name} back to back")
    h.check()


@cocotb.test(**T)
async def gv22(dut):
    """DFP-GV22 error-path vectors (op_err, meta_err incl. padding lanes, DFP-E3, DFP-E4)."""
    h = DotHarness(dut)
    await h.start()
    lanes = h.lanes
    if h.acc_w == 32:
        (res,) = await _run_one(h, chain_items(lanes, _rows(lanes, [-32768]),
                                               _rows(lanes, [-32768]), Config(mode=NONE)))
        _check_fields(res, {"acc": 1073676289, "fp32": 0x4E7FFC00, "op_err": 1}, "GV22 op_err")
        if lanes == 1:
            (res,) = await _run_one(h, chain_items(1, [[32767]] * 3, [[32767]] * 3,
                                                   Config(mode=PRESHIFT, ovf_sat=1), k_log2=1))
            _check_fields(res, {"r": 0, "acc": 2147483647, "ovf": 1, "sat_cnt": 1,
                                "meta_err": 1}, "GV22 meta_err")
    if lanes == 16 and h.acc_w == 32:
        row = [[100, 100, 100] + [0] * 13]
        for k_log2, ex, acc, meta in ((2, 1, 15000, 1), (4, 3, 3750, 0)):
            (res,) = await _run_one(h, chain_items(16, row, row, Config(mode=PRESHIFT),
                                                   k_log2=k_log2))
            _check_fields(res, {"r": ex, "acc": acc, "ovf": 0, "meta_err": meta},
                          f"GV22 padding k_log2 {k_log2}")
    # DFP-E3: first 0, last 1 while idle
    (res,) = await _run_one(h, [("beat", beat(_rows(lanes, [3])[0], _rows(lanes, [5])[0],
                                               first=0, last=1), Config(mode=NONE))])
    _check_fields(res, {"acc": 15, "proto_err": 1}, "GV22 E3")
    # DFP-E4: first beat of [32767], then a first+last beat of [1] (NONE)
    r1, r2 = await _run_one(h, [
        ("beat", beat(_rows(lanes, [32767])[0], _rows(lanes, [32767])[0], first=1),
         Config(mode=NONE)),
        ("beat", beat(_rows(lanes, [1])[0], _rows(lanes, [1])[0], first=1, last=1),
         Config(mode=NONE))])
    _check_fields(r1, {"acc": 1073676289, "proto_err": 1}, "GV22 E4 result 1")
    _check_fields(r2, {"acc": 1, "proto_err": 0}, "GV22 E4 result 2")
    h.check()


@cocotb.test(**T)
async def gv28(dut):
    """DFP-GV28: blocked CHUNK segment boundaries, blk on no beat, beat 2, beat 3 (the last)."""
    if not _build((1, 32)):
        return dut._log.info("GV28 needs LANES 1, ACC_W 32")
    h = DotHarness(dut)
    await h.start()
    cfg = Config(mode=CHUNK, chunk_len=4, chunk_auto=1)
    for blk, acc, es_out, r, chunks, headroom, fp32 in V.GV28:
        items = chain_items(1, [[30000]] * 3, [[30000]] * 3, cfg,
                            blk=None if blk is None else {blk: (1, 0, 15, 15)})
        (res,) = await _run_one(h, items)
        _check_fields(res, {"acc": acc, "es_out": es_out, "r": r, "chunks": chunks,
                            "headroom": headroom, "fp32": fp32}, f"GV28 blk {blk}")
    h.check()


# ------------------------------------------------------------------- error paths ----------

@cocotb.test(**T)
async def errors_e1_e2_e6(dut):
    """DFP-E1 (−32768 in every mode: clamped, op_err, err_chains), DFP-E2 (PRESHIFT and CHUNK
    metadata violated: bl too small, LANES x beats > 2**k_log2; honest metadata gives 0),
    DFP-E6 (CHUNK chunk_len 0 runs as chunk_len 1 and sets the sticky cfg_err; NONE with
    chunk_len 0 does not)."""
    h = DotHarness(dut, gap_prob=0.1, ready_prob=0.8)
    await h.start()
    lanes = h.lanes
    rng = env.rng(5)
    mn = [-32768] * lanes
    for mode in (NONE, PRESHIFT, CHUNK, ADAPTIVE):
        rows = [[rng.choice([-32768, 32767, -5]) for _ in range(lanes)] for _ in range(3)]
        (res,) = await _run_one(h, chain_items(lanes, rows, [mn] * 3, Config(mode=mode),
                                               k_log2=31))
        assert res["op_err"] == 1, res
    assert h.read_stats()["err_chains"] == 4
    for mode in (PRESHIFT, CHUNK):
        big = [[20000] * lanes] * 2
        for bl, k_log2, meta in ((15, 31, 0), (14, 31, 1), (15, 0, int(mode == PRESHIFT))):
            (res,) = await _run_one(h, chain_items(lanes, big, big, Config(mode=mode),
                                                   bl_a=bl, k_log2=k_log2))
            assert res["meta_err"] == meta, (mode, bl, k_log2, res)
    assert h.read_stats()["cfg_err"] == 0
    rows = [[rng.randint(-32767, 32767) for _ in range(lanes)] for _ in range(5)]
    (r_none,) = await _run_one(h, chain_items(lanes, rows, rows, Config(mode=NONE, chunk_len=0)))
    assert h.read_stats()["cfg_err"] == 0, "NONE with chunk_len 0 must not set cfg_err"
    (r0,) = await _run_one(h, chain_items(lanes, rows, rows, Config(mode=CHUNK, chunk_len=0,
                                                                     chunk_auto=0)))
    assert h.read_stats()["cfg_err"] == 1
    (r1,) = await _run_one(h, chain_items(lanes, rows, rows, Config(mode=CHUNK, chunk_len=1,
                                                                     chunk_auto=0)))
    assert r0 == r1 and r0["chunks"] == 5, (r0, r1)
    assert h.read_stats()["cfg_err"] == 1, "cfg_err is sticky"
    h.check()
    h.check_stats_golden()


@cocotb.test(**T)
async def errors_e9(dut):
    """DFP-E9: FP32 overflow gives ±Inf (conversion) and Inf + (−Inf) = 0x7FC00000 (CHUNK
    accumulation); the unit keeps going."""
    h = DotHarness(dut)
    await h.start()
    lanes = h.lanes
    row_p, row_n = _rows(lanes, [30000]), _rows(lanes, [-30000])
    (res,) = await _run_one(h, chain_items(lanes, row_p, row_p, Config(mode=NONE),
                                           es_a=511, es_b=511))
    assert res["fp32"] == 0x7F800000, hex(res["fp32"])
    (res,) = await _run_one(h, chain_items(lanes, row_n, row_p, Config(mode=ADAPTIVE),
                                           es_a=511, es_b=511))
    assert res["fp32"] == 0xFF800000, hex(res["fp32"])
    cfg = Config(mode=CHUNK, chunk_len=1, chunk_auto=0)
    (res,) = await _run_one(h, chain_items(lanes, row_p + row_n, row_p * 2, cfg,
                                           es_a=511, es_b=511))
    assert res["fp32"] == 0x7FC00000 and res["chunks"] == 2, res
    (res,) = await _run_one(h, chain_items(lanes, row_p, row_p, Config(mode=NONE)))
    assert res["fp32"] == 0x4E5693A4, hex(res["fp32"])       # 9e8 after the NaN chain
    h.check()


@cocotb.test(**T)
async def errors_e3_e4_chunk(dut):
    """DFP-E3/E4 in every mode, including a CHUNK chain cut right after a full chunk (no second
    close, the closed partial is the result's acc) and a cut blk segment."""
    h = DotHarness(dut, gap_prob=0.2)
    await h.start()
    lanes = h.lanes
    rng = env.rng(6)
    for mode in (NONE, PRESHIFT, CHUNK, ADAPTIVE):
        for cut in (1, 2, 4, 5, 8):
            rows = [[rng.randint(-32767, 32767) for _ in range(lanes)] for _ in range(cut)]
            items = chain_items(lanes, rows, rows, Config(mode=mode, chunk_len=4, chunk_auto=0),
                                blk={2: (3, -1, 15, 15)} if cut > 3 else None)
            items[-1][1]["last"] = 0                      # left open: the next first cuts it
            items += chain_items(lanes, rows[:1], rows[:1], Config(mode=mode))   # DFP-E4
            results = await _run_one(h, items)
            assert [r["proto_err"] for r in results] == [1, 0], results
            items = chain_items(lanes, rows[:2], rows[:2], Config(mode=mode))
            items[0][1]["first"] = 0                                              # DFP-E3
            (res,) = await _run_one(h, items)
            assert res["proto_err"] == 1, res
    h.check()


@cocotb.test(**T)
async def errors_e12_reset(dut):
    """DFP-E12: reset while a chain is open drops it without a result; counters, r_cnt and the
    pass statistics return to their reset values; the unit then works normally."""
    h = DotHarness(dut)
    await h.start()
    lanes = h.lanes
    full = [[32767] + [0] * (lanes - 1)] * 3
    cfg = Config(mode=ADAPTIVE, fig20_en=1, t_lo=40, t_hi=50)
    await _run_one(h, chain_items(lanes, full, full, cfg, eop=1))
    assert h.read_stats()["r_cnt"] != 0 and h.read_stats()["chains"] == 1
    items = chain_items(lanes, full, full, cfg, eop=0)     # contributes to the open pass
    items += chain_items(lanes, full, full, cfg)[:2]        # open chain, no last
    h.queue(items)
    await h.drain()
    n_results = len(h.observed)
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    h.model.reset()
    h._shadow_cur = None
    await RisingEdge(dut.clk)
    st = h.read_stats()
    assert st == h.model.stats, f"after reset: {st}, golden {h.model.stats}"
    assert st["r_cnt"] == 0 and st["chains"] == 0 and st["h_min"] == h.acc_w - 1
    # a pass of one chain after reset: r_cnt must come from it alone (pass stats dropped)
    (res,) = await _run_one(h, chain_items(lanes, full[:1], full[:1], cfg, eop=1))
    assert len(h.observed) == n_results + 1 and res["proto_err"] == 0
    h.check()
    h.check_stats_golden()


# ------------------------------------------------------------------- performance ---------

def _log(dut):
    return lambda text: dut._log.info("[%s] %s", env.params(), text)


@cocotb.test(**T)
async def perf_p1(dut):
    """DFP-P1: II = 1 in NONE, PRESHIFT, ADAPTIVE (fig20_en 0) for every chain structure."""
    h = DotHarness(dut)
    await h.start()
    await p1_throughput(h, _log(dut))
    h.check()


@cocotb.test(**T)
async def perf_p2(dut):
    """DFP-P2: CHUNK II = 1 with chunks of >= 4 beats, <= 3 bubbles per short final chunk."""
    h = DotHarness(dut)
    await h.start()
    await p2_chunk(h, _log(dut))
    h.check()


@cocotb.test(**T)
async def perf_p3(dut):
    """DFP-P3: <= 4 bubbles per eop chain with fig20_en 1, none without eop."""
    h = DotHarness(dut)
    await h.start()
    await p3_fig20(h, _log(dut))
    h.check()


@cocotb.test(**T)
async def perf_p4(dut):
    """DFP-P4: latency from the last beat to the result (printed; <= 12, CHUNK <= 16)."""
    h = DotHarness(dut)
    await h.start()
    await p4_latency(h, _log(dut))
    h.check()
