"""cocotb testbench of hw.dfp.dequantizer.DfpDequantizer against golden.dfp.quant.dequant_lzd.

StreamDriver (random gaps) -> DUT -> StreamMonitor (random back-pressure), protocol checkers on
``i_q`` and ``o_fp``, every output beat compared whole with the golden beat
{w: [dequant_lzd(I, sf_b)], last} on a Scoreboard.

* ``golden_vectors``: DFP-GV12 and GV2 (spec tables), DFP-E11 (sf_b 255 gives NaN).
* ``random_beats``: random I (every bit length, -32768 included) and sf_b (0, 1, 14, 15, 16,
  254, 255 and random) under gaps and back-pressure, also cross-checked with to_fp32.
* ``backpressure``: >= 10^4 beats, ready low 40 % of cycles (DFP-V11).
* ``round_trip``: DFP-V5, quant(dequant(block)) = block for normalized blocks with
  15 <= sf_b <= 254 (the RTL dequantizes, the golden quantizer re-quantizes).
* ``latency``: DFP-P5, one beat per cycle sustained and the latency in cycles.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.dfp.formats import BIASED, RNE, TRUNC, dequant_in_fields, dequant_out_fields
from golden.dfp.quant import dequant, dequant_lzd, quant_block
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor

GV12 = [(16384, 1, 0x00800000), (32767, 1, 0x00FFFE00), (-16384, 1, 0x80800000),
        (1, 15, 0x00800000), (-1, 15, 0x80800000), (16384, 15, 0x07800000),
        (1, 14, 0x00000000), (-1, 14, 0x80000000), (2, 14, 0x00800000),
        (32767, 254, 0x7F7FFE00), (0, 255, 0x7FC00000), (12345, 255, 0x7FC00000),
        (-32767, 255, 0x7FC00000)]
GV2 = [(20352, 135, 0x439F0000), (222, 135, 0x405E0000), (221, 135, 0x405D0000)]


class DequantBench:
    def __init__(self, dut, gap_prob=0.2, ready_prob=0.7, burst=1.0):
        self.dut = dut
        self.q = env.params()["q_lanes"]
        clk = dut.clk
        self.sb = Scoreboard("o_fp")
        self.check_in = StreamProtocolChecker(dut, "i_q", clk)
        self.check_out = StreamProtocolChecker(dut, "o_fp", clk)
        self.driver = StreamDriver(dut, "i_q", clk, fields=dequant_in_fields(self.q),
                                   rng=env.rng(2), gap_prob=gap_prob, burst=burst)
        self.monitor = StreamMonitor(dut, "o_fp", clk, fields=dequant_out_fields(self.q),
                                     rng=env.rng(3), ready_prob=ready_prob, burst=burst,
                                     callback=lambda t: self.sb.observe(t.fields, t.cycle))
        self.beats = 0

    def send(self, values, sf_b, last):
        values = list(values) + [0] * (self.q - len(values))
        self.driver.append({"i": values, "sf_b": sf_b, "last": last})
        self.sb.expect({"w": [dequant_lzd(v, sf_b) for v in values], "last": last})
        self.beats += 1

    def set_rates(self, gap_prob, ready_prob, burst=1.0):
        self.driver.gate = RandomGate(1.0 - gap_prob, env.rng(91), burst)
        self.monitor.gate = RandomGate(ready_prob, env.rng(92), burst)

    async def finish(self):
        await self.driver.idle(200_000)
        await self.monitor.wait_for(self.sb.expected, 200_000)
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        await ReadOnly()
        self.sb.check_done()
        self.check_in.check()
        self.check_out.check()
        assert self.check_in.transfers == self.beats == self.check_out.transfers
        self.dut._log.info("%s; stalls in %d out %d", self.sb.summary(),
                           self.check_in.rules.stall_cycles, self.check_out.rules.stall_cycles)


async def start(dut):
    dut.i_q__valid.value = 0
    dut.o_fp__ready.value = 0
    start_clock(dut)
    await reset(dut)


def rand_i(rng):
    r = rng.random()
    if r < 0.03:
        return -32768
    if r < 0.08:
        return rng.choice([0, 1, -1, 32767, -32767, 16384, -16384])
    bits = rng.randrange(1, 16)
    v = rng.randrange(1 << (bits - 1), 1 << bits)
    return -v if rng.getrandbits(1) else v


def rand_sf_b(rng):
    if rng.random() < 0.4:
        return rng.choice([0, 1, 2, 13, 14, 15, 16, 135, 253, 254, 255])
    return rng.randrange(256)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def golden_vectors(dut):
    """DFP-GV12 and GV2 against the spec tables (and dequant_lzd), every lane position."""
    await start(dut)
    bench = DequantBench(dut)
    table = GV12 + GV2
    for lane in range(bench.q):
        for k, (value, sf_b, _) in enumerate(table):
            values = [0] * bench.q
            values[lane] = value
            bench.send(values, sf_b, int(k == len(table) - 1))
    await bench.finish()
    problems = []
    for n, t in enumerate(bench.monitor.transfers):
        lane, k = divmod(n, len(table))
        value, sf_b, want = table[k]
        got = t.fields["w"][lane]
        if got != want:
            problems.append(f"I {value} sf_b {sf_b}: {got:#010x}, spec {want:#010x}")
    assert not problems, "\n".join(problems)


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def random_beats(dut):
    """Random I and sf_b, random gaps and back-pressure phases; golden dequant_lzd per element
    (and dequant = to_fp32(I, sf_b - 141) as an independent reference)."""
    await start(dut)
    bench = DequantBench(dut)
    rng = env.rng(7)
    for gap, ready, burst in [(0.3, 0.7, 1.0), (0.0, 1.0, 1.0), (0.5, 0.5, 5.0)]:
        bench.set_rates(gap, ready, burst)
        for _ in range(1500):
            values = [rand_i(rng) for _ in range(bench.q)]
            sf_b = rand_sf_b(rng)
            for v in values:
                assert dequant_lzd(v, sf_b) == dequant(v, sf_b)
            bench.send(values, sf_b, int(rng.random() < 0.2))
        await bench.monitor.wait_for(bench.sb.expected, 100_000)
    await bench.finish()


@cocotb.test(timeout_time=500, timeout_unit="ms")
async def backpressure(dut):
    """>= 10^4 beats with ready low 40 % of the cycles (DFP-V11)."""
    await start(dut)
    bench = DequantBench(dut, gap_prob=0.1, ready_prob=0.6)
    rng = env.rng(8)
    for _ in range(10_500):
        bench.send([rand_i(rng) for _ in range(bench.q)], rand_sf_b(rng), int(rng.random() < 0.1))
    await bench.finish()
    assert bench.beats >= 10_000


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def round_trip(dut):
    """DFP-V5: quant(dequant(block)) = block for normalized blocks, 15 <= sf_b <= 254."""
    await start(dut)
    bench = DequantBench(dut)
    rng = env.rng(9)
    blocks = []
    for _ in range(80):
        n = rng.randrange(1, 17) * bench.q
        block = [rng.randrange(-32767, 32768) for _ in range(n)]
        block[rng.randrange(n)] = rng.choice([-1, 1]) * rng.randrange(1 << 14, 1 << 15)
        sf_b = rng.randrange(15, 255)
        blocks.append((block, sf_b))
        beats = [block[k:k + bench.q] for k in range(0, n, bench.q)]
        for k, beat in enumerate(beats):
            bench.send(beat, sf_b, int(k == len(beats) - 1))
    await bench.finish()
    words = [w for t in bench.monitor.transfers for w in t.fields["w"]]
    pos = 0
    problems = []
    for block, sf_b in blocks:
        fp = words[pos:pos + len(block)]
        pos += len(block)
        for mode in (TRUNC, BIASED, RNE):
            q = quant_block(fp, mode)
            if q.I != block or q.sf_b != sf_b:
                problems.append(f"sf_b {sf_b} mode {mode}: requantized {q.I[:6]}... sf_b "
                                f"{q.sf_b}, block {block[:6]}...")
    assert not problems, "\n".join(problems[:10])


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def latency(dut):
    """DFP-P5: valid and ready held high: one beat per cycle on both sides, latency <= 4."""
    await start(dut)
    bench = DequantBench(dut, gap_prob=0.0, ready_prob=1.0)
    inputs = StreamMonitor(dut, "i_q", dut.clk, passive=True)
    rng = env.rng(10)
    n = 200
    for k in range(n):
        bench.send([rand_i(rng) for _ in range(bench.q)], rand_sf_b(rng), int(k % 7 == 6))
    await bench.finish()
    c_in = [t.cycle for t in inputs.transfers]
    c_out = [t.cycle for t in bench.monitor.transfers]
    assert c_in == list(range(c_in[0], c_in[0] + n)), "input not one beat per cycle"
    assert c_out == list(range(c_out[0], c_out[0] + n)), "output not one beat per cycle"
    lat = {o - i for i, o in zip(c_in, c_out)}
    assert len(lat) == 1 and max(lat) <= 4, f"latency {sorted(lat)} cycles (limit 4)"
    dut._log.info("DFP-P5: %d beats in %d cycles in, %d out; latency %d cycle(s)", n,
                  c_in[-1] - c_in[0] + 1, c_out[-1] - c_out[0] + 1, max(lat))
