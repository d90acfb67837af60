"""cocotb testbench of hw.dfp.downconvert.DfpDownConverter against
golden.dfp.downconvert.DownConverterModel.

Same bench as ``tb.dfp.quant_tb`` (:class:`BlockBench`): StreamDriver with random gaps ->
DUT -> StreamMonitor with random back-pressure, protocol checkers on ``i_v`` and ``o_q``, every
output beat compared whole with the golden streaming model, counters compared at the end, and
``cfg`` valid only on each block's first beat (junk elsewhere).

* ``golden_vectors``: DFP-GV21 a..h in T/B/R (and i on an IN_W 48 build), metadata records.
* ``random_blocks``: random magnitudes (every bit length, -2^(IN_W-1) included), per-beat
  exponent spreads up to the full 12-bit range, es16 near the exp_ovf / exp_unf borders and the
  2047 clamp, random round mode (3 included), random lengths and oversized blocks; DFP-V3 and
  es16 = es_max + R on the RTL output.
* ``backpressure``: >= 10^4 beats, ready low 40 % of cycles (DFP-V11).
* ``identity``: DFP-V5, R = 0 with one es per block returns the input.
* ``error_paths``: DFP-E5, DFP-E7, DFP-E10; ``stats_clr_wins``; ``reset_mid_block`` (DFP-E12).
* ``throughput``: DFP-P6 figures, ping-pong rate, stall depth (DFP-I9).
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.dfp.formats import (BIASED, DOWN_STATS, RNE, TRUNC, Config, down_in_fields,
                                down_out_fields)
from golden.dfp.downconvert import DownConverterModel
from tb.common import env
from tb.common.stream import read_int
from tb.dfp.quant_tb import (DOWN_HELD_BEATS, BlockBench, block_throughput, check_block_against,
                             chunk_beats, start)


class DownBench(BlockBench):
    def __init__(self, dut, **kw):
        p = env.params()
        self.q_lanes, self.blk_max = p["q_lanes"], p["blk_max"]
        self.in_w, self.bias_bits = p["in_w"], p["bias_bits"]
        model = DownConverterModel(self.q_lanes, self.blk_max, self.in_w, self.bias_bits)

        def golden_beat(payload, cfg):
            return model.beat(payload["v"], payload["es"], payload["last"], cfg)

        super().__init__(dut, "i_v", down_in_fields(self.q_lanes, self.in_w),
                         down_out_fields(self.q_lanes), DOWN_STATS,
                         self.blk_max // self.q_lanes, golden_beat, model, **kw)

    def send_beats(self, beats, cfg=Config()):
        """``beats``: list of (lane values, es); the last one closes the block."""
        payloads = []
        for k, (lanes, es) in enumerate(beats):
            lanes = list(lanes) + [0] * (self.q_lanes - len(lanes))
            payloads.append({"v": lanes, "es": es, "last": int(k == len(beats) - 1)})
        self.send_block(payloads, cfg)

    def send(self, values, es, cfg=Config()):
        """One block with a single es, packed q_lanes per beat."""
        beats = chunk_beats(values, self.q_lanes,
                            lambda lanes, last: {"v": lanes, "es": es, "last": last})
        self.send_block(beats, cfg)


def lane0(block):
    """Lane 0 of every beat (vectors are sent one element per beat)."""
    return [beat["i"][0] for beat in block]


def gv21(in_w):
    """(label, [(v, es) per element], mode, expected) of DFP-GV21 (spec dfp.md §5)."""
    a = list(zip([414203904, 4518144, 49284, -4518144], [-12] * 4))
    b = list(zip([65535, -65535, 1, 3], [0] * 4))
    c = list(zip([1000, 1000, -1001, 5], [0, 2, 0, 2]))
    vec = []
    for mode, i in ((TRUNC, [25281, 275, 3, -275]), (BIASED, [25281, 276, 3, -276]),
                    (RNE, [25281, 276, 3, -276])):
        exp = {"I": i, "R": 14, "es16": 2, "sf_b": 143}
        if mode == BIASED:
            exp["meta"] = 0x0F8F
        vec.append((f"a {mode}", a, mode, exp))
    for mode, i, n_sat in ((TRUNC, [32767, -32767, 0, 1], 0), (BIASED, [32767, -32767, 1, 2], 2),
                           (RNE, [32767, -32767, 0, 2], 2)):
        exp = {"I": i, "R": 1, "es16": 1, "sf_b": 142, "n_sat": n_sat}
        if mode == BIASED:
            exp["meta"] = 0x4F8E
        vec.append((f"b {mode}", b, mode, exp))
    for mode in (TRUNC, BIASED, RNE):
        vec.append((f"c {mode}", c, mode, {"I": [250, 1000, -250, 5], "R": 0, "es16": 2,
                                           "sf_b": 143}))
    vec += [
        ("d", [(100, 5), (-7, 5)], BIASED, {"I": [100, -7], "R": 0, "es16": 5, "sf_b": 146}),
        ("e", [(0, 3), (0, 3)], BIASED, {"I": [0, 0], "R": 0, "es16": 3, "sf_b": 0, "zero": 1,
                                         "meta": 0x2000}),
        ("f", [(2 ** 31 - 1, 100)], BIASED, {"I": [0], "R": 16, "es16": 116, "sf_b": 255,
                                              "exp_ovf": 1, "n_sat": 0, "meta": 0x10FF}),
        ("g", [(2 ** 31 - 1, 97)], BIASED, {"I": [32767], "R": 16, "es16": 113, "sf_b": 254,
                                             "n_sat": 1, "meta": 0x4FFE}),
        ("h", [(5, -150)], BIASED, {"I": [0], "R": 0, "es16": -150, "sf_b": 0, "exp_unf": 1,
                                    "zero": 0, "meta": 0x0000}),
    ]
    if in_w >= 41:
        vec.append(("i", [(2 ** 40 + 2 ** 39, 0)], BIASED,
                    {"I": [24576], "R": 26, "es16": 26, "sf_b": 167, "meta": 0x0FA7}))
    return vec


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def golden_vectors(dut):
    """DFP-GV21 a..h (i with IN_W >= 41) in every round column, against spec and golden."""
    await start(dut, "i_v")
    bench = DownBench(dut)
    vectors = gv21(bench.in_w)
    for _, elems, mode, _ in vectors:
        bench.send_beats([([v], es) for v, es in elems], Config(round_mode=mode))
    await bench.finish()
    blocks = bench.blocks_out()
    assert len(blocks) == len(vectors)
    problems = []
    for (label, elems, mode, exp), block in zip(vectors, blocks):
        if any(x for beat in block for x in beat["i"][1:]):
            problems.append(f"GV21 {label}: padding lanes not 0")
        flat = [{**beat, "i": [beat["i"][0]]} for beat in block]
        problems += check_block_against(f"GV21 {label}", flat, exp)
        if lane0(block) != exp["I"]:
            problems.append(f"GV21 {label}: I {lane0(block)}, spec {exp['I']}")
    assert not problems, "\n".join(problems)
    dut._log.info("%d GV21 vectors checked against the spec table and the golden model",
                  len(vectors))


def rand_value(rng, in_w, bits=None):
    """A signed in_w-bit value of random bit length (extremes included)."""
    top = 1 << (in_w - 1)
    r = rng.random()
    if r < 0.03:
        return -top
    if r < 0.06:
        return top - 1
    if r < 0.1:
        return 0
    bits = rng.randrange(0, in_w) if bits is None else bits
    mag = rng.getrandbits(bits) | (1 << bits >> 1) if bits else 0
    if r < 0.2 and bits:                                  # ties and round edges
        mag = (mag >> 3 << 3) | rng.choice([0, 4, 2, 6, 7, 1])
    mag = min(mag, top - 1)
    return -mag if rng.getrandbits(1) else mag


def rand_down_block(rng, in_w, q_lanes, beats):
    """(lanes, es) beats: a block-wide bit length and exponent, a per-beat exponent spread."""
    bits = rng.choice([rng.randrange(0, in_w + 1), in_w, in_w - 1, 15, 16, 17, 1, 0])
    r = rng.random()
    if r < 0.25:                                # es16 near the exp_ovf / exp_unf borders
        target = rng.choice([113, 114, 112, -140, -141, -139])
        base = target - max(0, bits - 15) + rng.randrange(-1, 2)
    elif r < 0.32:
        base = rng.choice([-2048, 2047, 2047 - rng.randrange(40), -2048 + rng.randrange(40)])
    else:
        base = rng.randrange(-160, 130)
    spread = rng.choice([0, 0, 1, 3, 8, 20, 64, 4095])
    out = []
    for _ in range(beats):
        es = max(-2048, min(2047, base - rng.randrange(spread + 1)))
        lanes = [rand_value(rng, in_w, rng.randrange(0, bits + 1) if rng.random() < 0.5 else
                            bits) for _ in range(q_lanes)]
        out.append((lanes, es))
    return out


def check_down_properties(blocks):
    """DFP-V3 (R > 0 and not zeroed: max|I| in [2^14, 32767]; no -32768) and DFP-V6
    (es16 = es_max + R is checked by the golden comparison; here es16 is the same on every
    beat and R <= IN_W - 15)."""
    problems = []
    for k, block in enumerate(blocks):
        elements = [x for beat in block for x in beat["i"]]
        tail = block[-1]
        if -32768 in elements:
            problems.append(f"block {k}: -32768 emitted")
        if tail["R"] > 0 and not (tail["exp_ovf"] or tail["exp_unf"]):
            top = max(abs(x) for x in elements)
            if not 1 << 14 <= top <= 32767:
                problems.append(f"block {k}: R {tail['R']} but max|I| = {top}")
        if len({(b["es16"], b["R"], b["sf_b"]) for b in block}) != 1:
            problems.append(f"block {k}: es16/R/sf_b differ between beats")
    assert not problems, "\n".join(problems[:20])


async def _random_run(dut, n_blocks, phases):
    await start(dut, "i_v")
    gap, ready, burst = phases[0]
    bench = DownBench(dut, gap_prob=gap, ready_prob=ready)
    rng = env.rng(7)
    depth = bench.depth
    per_phase = (n_blocks + len(phases) - 1) // len(phases)
    for gap, ready, burst in phases:
        bench.set_rates(gap, ready, burst)
        for _ in range(per_phase):
            r = rng.random()
            if r < 0.05:
                beats = depth + rng.randrange(1, depth + 2)
            elif r < 0.15:
                beats = depth
            else:
                beats = rng.randrange(1, depth + 1)
            mode = rng.choice([TRUNC, BIASED, RNE, TRUNC, BIASED, RNE, 3])
            bench.send_beats(rand_down_block(rng, bench.in_w, bench.q_lanes, beats),
                             Config(round_mode=mode))
        await bench.drain()
    await bench.finish()
    check_down_properties(bench.blocks_out())
    return bench


@cocotb.test(timeout_time=300, timeout_unit="ms")
async def random_blocks(dut):
    """Random blocks and round modes under random gaps and back-pressure: DFP-V1, V3."""
    bench = await _random_run(dut, 240, [(0.25, 0.7, 1.0), (0.0, 1.0, 1.0), (0.5, 0.5, 4.0)])
    dut._log.info("stats %s", bench.stats())


@cocotb.test(timeout_time=1000, timeout_unit="ms")
async def backpressure(dut):
    """>= 10^4 input beats with ready low 40 % of the cycles: DFP-V11."""
    p = env.params()
    depth = p["blk_max"] // p["q_lanes"]
    n_blocks = max(40, 10_500 * 2 // (depth + 1))
    bench = await _random_run(dut, n_blocks, [(0.1, 0.6, 1.0), (0.05, 0.6, 8.0)])
    assert bench.beats >= 10_000, bench.beats


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def identity(dut):
    """DFP-V5: a block with one es and max|v| < 2^15 (R = 0) comes out unchanged, every mode."""
    await start(dut, "i_v")
    bench = DownBench(dut)
    rng = env.rng(13)
    cases = []
    for _ in range(60):
        n = rng.randrange(1, bench.blk_max + 1)
        bits = rng.randrange(1, 16)
        vals = [rng.randrange(-(1 << bits) + 1, 1 << bits) for _ in range(n)]
        es = rng.randrange(-140, 114)
        bench.send(vals, es, Config(round_mode=rng.choice([TRUNC, BIASED, RNE])))
        cases.append((vals, es))
    await bench.finish()
    problems = []
    for (vals, es), block in zip(cases, bench.blocks_out()):
        got = [x for beat in block for x in beat["i"]][:len(vals)]
        tail = block[-1]
        if any(vals) and (got != vals or tail["R"] != 0 or tail["es16"] != es
                          or tail["sf_b"] != es + 141):
            problems.append(f"es {es}: {got[:6]}... R {tail['R']}, expected {vals[:6]}...")
    assert not problems, "\n".join(problems[:10])


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def error_paths(dut):
    """DFP-E5 (round_mode 3 = BIASED, sticky cfg_err), DFP-E7 (cut at BLK_MAX, nothing lost),
    DFP-E10 (exp_ovf / exp_unf zero the block; the next blocks are normal)."""
    await start(dut, "i_v")
    bench = DownBench(dut)
    depth = bench.depth
    a = [([v], es) for v, es in zip([414203904, 4518144, 49284, -4518144], [-12] * 4)]
    bench.send_beats(a, Config(round_mode=3))
    bench.send_beats(a, Config(round_mode=BIASED))
    rng = env.rng(3)
    long = [(lanes, rng.randrange(-20, 1)) for lanes, _ in
            rand_down_block(rng, bench.in_w, bench.q_lanes, depth + 2)]   # in range
    bench.send_beats(long, Config(round_mode=RNE))
    bench.send_beats([([2 ** 30], 120)], Config(round_mode=TRUNC))        # exp_ovf
    bench.send_beats([([-3], -2048), ([7], -2000)], Config(round_mode=TRUNC))   # exp_unf
    bench.send_beats([([123], 0)], Config(round_mode=TRUNC))
    await bench.finish()
    blocks = bench.blocks_out()
    assert len(blocks) == 7, len(blocks)
    assert blocks[0] == blocks[1], "round_mode 3 differs from BIASED"
    assert bench.stats()["cfg_err"] == 1
    assert len(blocks[2]) == depth and blocks[2][-1]["blk_err"] == 1
    assert len(blocks[3]) == 2 and blocks[3][-1]["blk_err"] == 0
    ovf, unf, ok = blocks[4][-1], blocks[5][-1], blocks[6][-1]
    assert ovf["exp_ovf"] == 1 and ovf["sf_b"] == 255 and ovf["i"] == [0] * bench.q_lanes
    assert unf["exp_unf"] == 1 and unf["sf_b"] == 0 and unf["zero"] == 0
    assert all(x == 0 for beat in blocks[5] for x in beat["i"])
    assert ok["i"][0] == 123 and ok["sf_b"] == 141 and not (ok["exp_ovf"] or ok["exp_unf"])
    assert bench.stats()["dc_exp_ovf"] == 1 and bench.stats()["dc_exp_unf"] == 1
    await RisingEdge(dut.clk)
    dut.stats_clr.value = 1
    await RisingEdge(dut.clk)
    dut.stats_clr.value = 0
    await ReadOnly()
    assert bench.stats() == {k: 0 for k in DOWN_STATS}, bench.stats()


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def stats_clr_wins(dut):
    """stats_clr in the cycle a block's last beat leaves: that block is not counted."""
    await start(dut, "i_v")
    bench = DownBench(dut, gap_prob=0.0, ready_prob=0.0)
    bench.send_beats([([65535], 0), ([-65535], 0)], Config(round_mode=BIASED))   # n_sat 2
    bench.send_beats([([2 ** 30], 120)], Config(round_mode=BIASED))               # exp_ovf
    await bench.driver.idle(1000)
    for _ in range(12):
        await RisingEdge(dut.clk)
    bench.monitor.passive = True
    counted = 0
    while counted < 2:
        await RisingEdge(dut.clk)
        dut.o_q__ready.value = 0
        dut.stats_clr.value = 0
        await ReadOnly()
        if read_int(dut.o_q__valid) != 1:
            continue
        is_last = bench.out_fields.unpack(int(dut.o_q__payload.value))["last"]
        await RisingEdge(dut.clk)
        dut.o_q__ready.value = 1
        dut.stats_clr.value = is_last
        counted += is_last
    await RisingEdge(dut.clk)
    dut.o_q__ready.value = 0
    dut.stats_clr.value = 0
    await ReadOnly()
    assert bench.stats() == {k: 0 for k in DOWN_STATS}, bench.stats()
    bench.sb.check_done()
    bench.check_in.check()
    bench.check_out.check()


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def reset_mid_block(dut):
    """DFP-E12: reset with a block open drops it without output and zeroes the counters."""
    await start(dut, "i_v")
    bench = DownBench(dut, gap_prob=0.1, ready_prob=0.8)
    rng = env.rng(21)
    for _ in range(4):
        bench.send_beats(rand_down_block(rng, bench.in_w, bench.q_lanes,
                                         rng.randrange(1, bench.depth + 1)), Config(round_mode=3))
    await bench.finish()
    assert bench.stats()["dc_blocks"] == 4 and bench.stats()["cfg_err"] == 1
    n = max(2, bench.depth)
    await bench.reset_in_open_block(
        [{"v": lanes, "es": es, "last": 0}
         for lanes, es in rand_down_block(rng, bench.in_w, bench.q_lanes, n - 1)])
    fresh = DownBench(dut, gap_prob=0.2, ready_prob=0.7, rng_base=100)
    for _ in range(4):
        fresh.send_beats(rand_down_block(rng, bench.in_w, bench.q_lanes,
                                         rng.randrange(1, bench.depth + 1)),
                         Config(round_mode=rng.choice([TRUNC, BIASED, RNE])))
    await fresh.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def throughput(dut):
    """DFP-P6 block latency, ping-pong rate over 100 BLK_MAX blocks, stall depth (DFP-I9)."""
    await block_throughput(dut, "i_v", DOWN_HELD_BEATS,
                           lambda: DownBench(dut, gap_prob=0.0, ready_prob=1.0),
                           lambda bench, rng, n: bench.send_beats(
                               rand_down_block(rng, bench.in_w, bench.q_lanes, n)))
