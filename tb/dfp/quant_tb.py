"""cocotb testbench of hw.dfp.quantizer.DfpQuantizer against golden.dfp.quant.QuantizerModel.

Every test drives ``i_fp`` with a :class:`StreamDriver` (random valid gaps), takes ``o_q`` with a
:class:`StreamMonitor` (random back-pressure), checks both streams with
:class:`StreamProtocolChecker`, and compares every output beat, whole, with the golden streaming
model on a :class:`Scoreboard`; the counters are compared with the model's ``stats`` at the end.
``cfg`` is driven per beat: the block's configuration on a block's first beat (as the DUT
segments blocks, cut at BLK_MAX included), random junk on every other beat and while idle, so
sampling anywhere else would show.

* ``golden_vectors``: DFP-GV1, GV3 (all round columns; the BIAS_BITS = 2 column on that build),
  GV5, GV6..GV11, GV29 a..f against the spec tables and the golden model.
* ``random_blocks``: random blocks (exponent spread, denormals, zeros, Inf/NaN, mixed signs,
  lengths 1..BLK_MAX and oversized, random cfg and e_ext per block); DFP-V3 on the RTL output.
* ``backpressure``: >= 10^4 beats with ready low 40 % of the cycles (DFP-V11).
* ``round_trip``: DFP-V5 on k·2^Es blocks in every round mode.
* ``error_paths``: DFP-E5 (round_mode 3, sticky cfg_err), DFP-E7 (oversized blocks), DFP-E8.
* ``stats_clr_wins``: a clear in the cycle of a counted event wins (DFP-F46).
* ``reset_mid_block``: DFP-E12.
* ``throughput``: DFP-P6 cycles per block size, ping-pong rate over 100 blocks of BLK_MAX,
  and the input-side buffer depth when the output stalls (DFP-I9).

The block-bench helpers here are shared with ``tb.dfp.down_tb``.
"""

import struct

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from golden.common.stream import RandomGate
from golden.dfp.formats import (BIASED, CONFIG_FIELDS, QUANT_STATS, RNE, TRUNC, Config,
                                quant_in_fields, quant_out_fields, stats_fields)
from golden.dfp.quant import QuantizerModel, dequant_lzd
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, read_int

CFG_MASK = (1 << CONFIG_FIELDS.width) - 1
# beats held outside the two block buffers as documented (docs/dfp.md, DFP-I9): the memory
# read register, the four pass-2 stages and the output register, and the down-converter's
# input register
QUANT_HELD_BEATS = 6
DOWN_HELD_BEATS = 7


# ------------------------------------------------------------------------------------------------
# Shared block-stream bench (quantizer and down-converter)
# ------------------------------------------------------------------------------------------------

class BlockBench:
    """Driver, monitor, checkers, scoreboard and per-beat ``cfg`` for a block-stream part.

    ``golden_beat(payload, cfg)`` feeds one input beat to the golden model and returns the
    output beats it releases (a list of dicts). Beats are queued with :meth:`send_block`; the
    expected outputs are computed at once, in the order the DUT will accept the beats.
    """

    def __init__(self, dut, in_prefix, in_fields, out_fields, stats_names, depth, golden_beat,
                 model, gap_prob=0.2, ready_prob=0.7, burst=1.0, rng_base=0):
        self.dut = dut
        self.clk = dut.clk
        self.in_prefix = in_prefix
        self.out_fields = out_fields
        self.stats_names = stats_names
        self.stats_fields = stats_fields(stats_names)
        self.depth = depth
        self.golden_beat = golden_beat
        self.model = model
        self.rng = env.rng(rng_base + 1)
        self.sb = Scoreboard(f"{dut._name} o_q")
        self.check_in = StreamProtocolChecker(dut, in_prefix, self.clk)
        self.check_out = StreamProtocolChecker(dut, "o_q", self.clk)
        self.driver = StreamDriver(dut, in_prefix, self.clk, fields=in_fields,
                                   rng=env.rng(rng_base + 2), gap_prob=gap_prob, burst=burst)
        self.monitor = StreamMonitor(dut, "o_q", self.clk, fields=out_fields,
                                     rng=env.rng(rng_base + 3), ready_prob=ready_prob, burst=burst,
                                     callback=lambda t: self.sb.observe(t.fields, t.cycle))
        self.valid = getattr(dut, f"{in_prefix}__valid")
        self.cfg_items = []          # cfg word driven with input item k (None: junk)
        self.first_cfgs = []         # per DUT block, the Config sampled on its first beat
        self.nb = 0                  # beats in the DUT's current block
        self.beats = 0
        self._cfg_task = cocotb.start_soon(self._drive_cfg())

    async def _drive_cfg(self):
        while True:
            await RisingEdge(self.clk)
            await Timer(1, unit="ns")          # after the driver has presented this cycle's item
            idx = self.driver.sent
            word = None
            if read_int(self.valid) == 1 and idx < len(self.cfg_items):
                word = self.cfg_items[idx]
            self.dut.cfg.value = word if word is not None else self.rng.getrandbits(
                CONFIG_FIELDS.width)

    def send_block(self, payloads, cfg):
        """Queue the beats of one producer block (``last`` already set in the payloads).

        The DUT may cut it at BLK_MAX (DFP-E7); its continuation then samples ``cfg`` again.
        """
        for payload in payloads:
            first = self.nb == 0
            word = cfg.pack() if first else None
            if first:
                self.first_cfgs.append(cfg)
            used = cfg if first else Config.unpack(self.rng.getrandbits(CONFIG_FIELDS.width))
            self.cfg_items.append(word)
            self.driver.append(payload)
            self.sb.expect_all(self.golden_beat(payload, used))
            self.beats += 1
            self.nb += 1
            if payload["last"] or self.nb == self.depth:
                self.nb = 0

    def set_rates(self, gap_prob, ready_prob, burst=1.0):
        self.driver.gate = RandomGate(1.0 - gap_prob, env.rng(91), burst)
        self.monitor.gate = RandomGate(ready_prob, env.rng(92), burst)

    async def drain(self, timeout_cycles=200_000):
        await self.driver.idle(timeout_cycles)
        await self.monitor.wait_for(self.sb.expected, timeout_cycles)
        for _ in range(8):
            await RisingEdge(self.clk)
        await ReadOnly()

    def stats(self):
        return self.stats_fields.unpack(int(self.dut.stats.value))

    def blocks_out(self):
        """Output transfers grouped into blocks (lists of field dicts)."""
        blocks, cur = [], []
        for t in self.monitor.transfers:
            cur.append(t.fields)
            if t.fields["last"]:
                blocks.append(cur)
                cur = []
        return blocks

    async def finish(self, check_stats=True):
        """Drain, then: scoreboard complete, protocol clean, counters equal the model's."""
        await self.drain()
        self.sb.check_done()
        self.check_in.check()
        self.check_out.check()
        assert self.check_in.transfers == self.beats, (self.check_in.transfers, self.beats)
        if check_stats:
            got = self.stats()
            assert got == self.model.stats, f"stats: RTL {got}, golden {self.model.stats}"
        self.dut._log.info("%s; %d input beats; in stalls %d, out stalls %d", self.sb.summary(),
                           self.beats, self.check_in.rules.stall_cycles,
                           self.check_out.rules.stall_cycles)

    async def reset_in_open_block(self, payloads):
        """Send ``payloads`` (an unfinished block: ``last`` = 0), check that nothing of it comes
        out, then reset (DFP-E12): counters zero, no output valid. Stops this bench; the
        caller starts a fresh one."""
        outputs = self.monitor.count
        for payload in payloads:
            await self.driver.send(payload)
        for _ in range(10):
            await RisingEdge(self.clk)
        assert self.monitor.count == outputs, "output from an unfinished block"
        self.stop()
        await RisingEdge(self.clk)
        self.valid.value = 0
        await reset(self.dut)
        await ReadOnly()
        assert self.stats() == {k: 0 for k in self.stats_names}, f"counters after reset {self.stats()}"
        assert read_int(self.dut.o_q__valid) == 0
        await RisingEdge(self.clk)

    def stop(self):
        for part in (self.driver, self.monitor, self.check_in, self.check_out):
            part.stop()
        self._cfg_task.cancel()


async def start(dut, in_prefix):
    """Idle inputs, clock, reset."""
    getattr(dut, f"{in_prefix}__valid").value = 0
    dut.o_q__ready.value = 0
    dut.stats_clr.value = 0
    dut.cfg.value = Config().pack()
    start_clock(dut)
    await reset(dut)


def chunk_beats(elements, q_lanes, make_beat):
    """Beats of one producer block: ``elements`` padded to a multiple of q_lanes with 0
    (+0.0 for the quantizer), ``make_beat(lanes, last)`` builds each payload dict."""
    elements = list(elements)
    while len(elements) % q_lanes:
        elements.append(0)
    count = len(elements) // q_lanes
    return [make_beat(elements[k * q_lanes:(k + 1) * q_lanes], int(k == count - 1))
            for k in range(count)]


def block_elements(block, key="i"):
    return [x for beat in block for x in beat[key]]


# ------------------------------------------------------------------------------------------------
# Quantizer
# ------------------------------------------------------------------------------------------------

def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


class QuantBench(BlockBench):
    def __init__(self, dut, **kw):
        p = env.params()
        self.q_lanes, self.blk_max, self.bias_bits = p["q_lanes"], p["blk_max"], p["bias_bits"]
        model = QuantizerModel(self.q_lanes, self.blk_max, self.bias_bits)

        def golden_beat(payload, cfg):
            return model.beat(payload["w"], payload["last"], payload["e_ext"], cfg)

        super().__init__(dut, "i_fp", quant_in_fields(self.q_lanes),
                         quant_out_fields(self.q_lanes), QUANT_STATS,
                         self.blk_max // self.q_lanes, golden_beat, model, **kw)

    def send(self, words, cfg=Config(), e_ext=0):
        beats = chunk_beats(words, self.q_lanes,
                            lambda lanes, last: {"w": lanes, "last": last, "e_ext": e_ext})
        self.send_block(beats, cfg)
        return len(beats)


def rand_word(rng, e):
    """A random FP32 word with exponent field e and a random sign; mantissas include the
    patterns that round or saturate at the edges (all ones, ties, single bits)."""
    pick = rng.random()
    if pick < 0.15:
        mant = 0x7FFFFF
    elif pick < 0.3:
        mant = rng.choice([0, 1 << rng.randrange(23), (1 << rng.randrange(1, 23)) - 1])
    elif pick < 0.4:
        mant = (rng.getrandbits(14) << 9) | rng.choice([0x100, 0x080, 0x0FF, 0x180, 0x040])
    else:
        mant = rng.getrandbits(23)
    return rng.getrandbits(1) << 31 | (e & 0xFF) << 23 | mant


def rand_quant_block(rng, n, allow_special=True):
    """Words of a random block of n elements: an exponent centre and spread, denormals,
    zeros, occasionally Inf/NaN."""
    kind = rng.random()
    if kind < 0.04:
        centre = rng.choice([1, 2, 254, 253])
    elif kind < 0.08:                                   # zeros and denormals only
        return [rng.choice([0, 0x80000000, rng.getrandbits(1) << 31 | rng.randrange(1, 1 << 23)])
                for _ in range(n)]
    else:
        centre = rng.randrange(1, 255)
    spread = rng.choice([0, 1, 2, 5, 9, 16, 17, 30, 60, 300])
    words = []
    for _ in range(n):
        r = rng.random()
        if r < 0.05:
            words.append(rng.choice([0, 0x80000000]))
        elif r < 0.10:
            words.append(rng.getrandbits(1) << 31 | rng.randrange(1, 1 << 23))   # denormal
        else:
            words.append(rand_word(rng, max(0, centre - rng.randrange(spread + 1))))
    if allow_special and rng.random() < 0.06:
        words[rng.randrange(n)] = rng.choice([0x7F800000, 0xFF800000, 0x7FC00000,
                                              0x7F800001, 0xFFFFFFFF])
    return words


def rand_quant_cfg(rng, words):
    mode = rng.choice([TRUNC, BIASED, RNE, TRUNC, BIASED, RNE, 3])
    q_ext = int(rng.random() < 0.3)
    big = max((w >> 23) & 0xFF for w in words)
    r = rng.random()
    if r < 0.08:
        e_ext = rng.choice([0, 255])
    elif r < 0.6:
        e_ext = min(254, max(1, big + rng.randrange(-3, 4)))
    else:
        e_ext = rng.randrange(256)
    return Config(round_mode=mode, q_ext=q_ext), e_ext


def check_normalized(blocks, cfgs, sf_key="sf_b"):
    """DFP-V3 on RTL output blocks: two-pass valid non-zero blocks have max|I| in
    [2^14, 32767]; no element is -32768."""
    problems = []
    for k, (block, cfg) in enumerate(zip(blocks, cfgs)):
        elements = block_elements(block)
        tail = block[-1]
        if -32768 in elements:
            problems.append(f"block {k}: -32768 emitted")
        if cfg.q_ext == 0 and not tail["inv"] and not tail["zero"]:
            top = max(abs(x) for x in elements)
            if not 1 << 14 <= top <= 32767:
                problems.append(f"block {k}: max|I| = {top} not normalized ({tail})")
    assert not problems, "\n".join(problems[:20])


# DFP-GV tables (spec dfp.md §5): (name, words, cfg overrides, e_ext, expected per round mode)
GV3_WORDS = [0x3F800000, 0x37800000, 0x38000000, 0x38C00000, 0x39200000, 0xB9200000,
             0x37400000, 0x37000000, 0x38400000, 0x37A00000]
GV3_I = {TRUNC: [16384, 0, 0, 1, 2, -2, 0, 0, 0, 0],
         BIASED: [16384, 1, 1, 2, 3, -3, 0, 0, 1, 1],
         RNE: [16384, 0, 0, 2, 2, -2, 0, 0, 1, 0],
         "B2": [16384, 1, 1, 2, 3, -3, 1, 1, 1, 1]}


def quant_vectors(bias_bits):
    """(label, words, Config, e_ext, expected dict or None) for every directed vector.

    expected holds 'I' and any last-beat fields the spec table gives; None (a BIASED column
    on the BIAS_BITS = 2 build that the table does not cover) means golden comparison only.
    """
    b1 = bias_bits == 1
    vec = []
    gv1 = [0x439F0000, 0x405DE000]
    for mode, i in ((TRUNC, [20352, 221]), (BIASED, [20352, 222]), (RNE, [20352, 222])):
        vec.append((f"GV1 {mode}", gv1, Config(round_mode=mode), 0, {"I": i, "sf_b": 135}))
    for mode in (TRUNC, BIASED, RNE):
        exp = GV3_I["B2" if (mode == BIASED and not b1) else mode]
        vec.append((f"GV3 {mode}", GV3_WORDS, Config(round_mode=mode), 0,
                    {"I": exp, "sf_b": 127}))
    gv5 = [0x3FFFFFFF, 0x3FFFFE7F, 0x3FFFFF80, 0x3FFFFF00, 0x3FFFFE80]
    for mode, n_sat in ((TRUNC, 0), (BIASED, 4), (RNE, 3)):
        exp = {"I": [32767] * 5, "sf_b": 127, "n_sat": n_sat, "bl": 15}
        vec.append((f"GV5 {mode}", gv5, Config(round_mode=mode), 0,
                    exp if (b1 or mode != BIASED) else None))
    bi = Config(round_mode=BIASED)
    vec += [
        ("GV6", [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF], bi, 0,
         {"I": [0, 0, 0, 0], "sf_b": 0, "zero": 1, "n_ftz": 2, "bl": 0, "inv": 0}),
        ("GV7a", [0x3F800000, 0x7F800000], bi, 0, {"I": [0, 0], "sf_b": 255, "inv": 1}),
        ("GV7b", [0x3F800000, 0x7FC00000], bi, 0, {"I": [0, 0], "sf_b": 255, "inv": 1}),
        ("GV7c", [0x00000000, 0xFF800000], bi, 0, {"I": [0, 0], "sf_b": 255, "inv": 1}),
        ("GV8", [f32(-318.0), 0x405DE000, 0xC05DE000], bi, 0,
         {"I": [-20352, 222, -222], "sf_b": 135}),
        ("GV9", [0x3F800000, 0x00400000], bi, 0, {"I": [16384, 0], "sf_b": 127, "n_ftz": 1}),
    ]
    gv10 = [f32(65536.0), f32(1.0), f32(1.5), f32(0.5)]
    vec.append(("GV10 B", gv10, bi, 0, {"I": [16384, 1, 1, 0], "sf_b": 143} if b1 else None))
    for mode in (TRUNC, RNE):
        vec.append((f"GV10 {mode}", gv10, Config(round_mode=mode), 0,
                    {"I": [16384, 0, 0, 0], "sf_b": 143}))
    vec += [
        ("GV11a", [0x00800000, 0x00FFFFFF, 0x80800001], bi, 0,
         {"I": [16384, 32767, -16384], "sf_b": 1, "n_sat": 1}),
        ("GV11b", [0x7F7FFFFF, 0x7F000000], bi, 0, {"I": [32767, 16384], "sf_b": 254, "n_sat": 1}),
    ]
    qx = Config(round_mode=BIASED, q_ext=1)
    one, half = f32(1.0), f32(0.5)
    vec += [
        ("GV29a", [one, half], qx, 130,
         {"I": [2048, 1024], "sf_b": 130, "bl": 12, "zero": 0, "meta": 0x0C82}),
        ("GV29b", [one, half], qx, 127, {"I": [16384, 8192], "sf_b": 127, "bl": 15, "meta": 0x0F7F}),
        ("GV29c", [f32(3.0), one], qx, 127,
         {"I": [32767, 16384], "sf_b": 127, "bl": 15, "n_sat": 1, "meta": 0x4F7F}),
        ("GV29d", [0x00000000, 0x00000001, 0x80000000], qx, 127,
         {"I": [0, 0, 0], "sf_b": 127, "bl": 0, "zero": 0, "n_ftz": 1, "meta": 0x007F}),
        ("GV29e", [one, 0x7F800000], qx, 0,
         {"I": [0, 0], "sf_b": 255, "bl": 0, "inv": 1, "blk_err": 1, "meta": 0x10FF}),
        ("GV29f", [one, f32(2.0)], qx, 255,
         {"I": [0, 0], "sf_b": 255, "bl": 0, "inv": 1, "blk_err": 1, "meta": 0x10FF}),
    ]
    return vec


def check_block_against(label, block, exp):
    """Compare one RTL output block with a spec-table expectation; returns problems."""
    problems = []
    elements = block_elements(block)
    n = len(exp["I"])
    if elements[:n] != exp["I"] or any(elements[n:]):
        problems.append(f"{label}: I = {elements}, spec {exp['I']}")
    tail = block[-1]
    for key, value in exp.items():
        if key == "I":
            continue
        if key in ("sf_b", "es16", "R"):
            got = {beat[key] for beat in block}
            if got != {value}:
                problems.append(f"{label}: {key} per beat {sorted(got)}, spec {value}")
        elif tail[key] != value:
            problems.append(f"{label}: {key} = {tail[key]}, spec {value}")
    return problems


# ------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------

@cocotb.test(timeout_time=20, timeout_unit="ms")
async def golden_vectors(dut):
    """DFP-GV1, GV3, GV5, GV6..GV11, GV29 against the spec tables and the golden model."""
    await start(dut, "i_fp")
    bench = QuantBench(dut)
    vectors = quant_vectors(bench.bias_bits)
    for _, words, cfg, e_ext, _ in vectors:
        bench.send(words, cfg, e_ext)
    await bench.finish()
    blocks = bench.blocks_out()
    assert len(blocks) == len(vectors), (len(blocks), len(vectors))
    problems, checked = [], 0
    for (label, words, cfg, e_ext, exp), block in zip(vectors, blocks):
        if exp is not None:
            problems += check_block_against(label, block, exp)
            checked += 1
    assert not problems, "\n".join(problems)
    dut._log.info("%d vectors, %d against spec tables", len(vectors), checked)


async def _random_run(dut, n_blocks, gap_prob, ready_prob, phases=None, max_len=None):
    await start(dut, "i_fp")
    bench = QuantBench(dut, gap_prob=gap_prob, ready_prob=ready_prob)
    rng = env.rng(7)
    depth = bench.depth
    phases = phases or [(gap_prob, ready_prob, 1.0)]
    per_phase = (n_blocks + len(phases) - 1) // len(phases)
    sent = 0
    for gap, ready, burst in phases:
        bench.set_rates(gap, ready, burst)
        for _ in range(per_phase):
            r = rng.random()
            if r < 0.05:                                       # oversized: cut at BLK_MAX
                beats = depth + rng.randrange(1, depth + 2)
            elif r < 0.15:
                beats = depth
            else:
                beats = rng.randrange(1, (max_len or depth) + 1)
            words = rand_quant_block(rng, beats * bench.q_lanes)
            cfg, e_ext = rand_quant_cfg(rng, words)
            bench.send(words, cfg, e_ext)
            sent += 1
        await bench.drain()
    await bench.finish()
    check_normalized(bench.blocks_out(), bench.first_cfgs)
    return bench


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def random_blocks(dut):
    """Random blocks and cfg under random gaps and back-pressure; DFP-V1, V3, counters."""
    bench = await _random_run(dut, 240, 0.25, 0.7,
                              phases=[(0.25, 0.7, 1.0), (0.0, 1.0, 1.0), (0.5, 0.5, 4.0)])
    dut._log.info("stats %s", bench.stats())


@cocotb.test(timeout_time=1000, timeout_unit="ms")
async def backpressure(dut):
    """>= 10^4 input beats, ready low 40 % of cycles (and a bursty phase): DFP-V11."""
    p = env.params()
    depth = p["blk_max"] // p["q_lanes"]
    n_blocks = max(40, 10_500 * 2 // (depth + 1))
    bench = await _random_run(dut, n_blocks, 0.1, 0.6, phases=[(0.1, 0.6, 1.0), (0.05, 0.6, 8.0)])
    assert bench.beats >= 10_000, bench.beats
    low = bench.check_out.rules.stall_cycles
    dut._log.info("%d input beats, %d output beats, %d output stall cycles", bench.beats,
                  bench.monitor.count, low)


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def round_trip(dut):
    """DFP-V5: blocks of k·2^Es (normal, absmax fixing E_amax) quantize to exactly k in every
    round mode and dequantize back to the input words; the sf_b = 1 example flushes 2^-140."""
    await start(dut, "i_fp")
    bench = QuantBench(dut)
    rng = env.rng(11)
    cases = []
    for _ in range(60):
        sf_b = rng.randrange(15, 255)
        n = rng.randrange(1, bench.blk_max + 1)
        ks = [rng.randrange(-32767, 32768) for _ in range(n)]
        ks[rng.randrange(n)] = rng.choice([-1, 1]) * rng.randrange(1 << 14, 1 << 15)
        es = sf_b - 141
        words = [0 if k == 0 else f32(k * 2.0 ** es) for k in ks]
        for w, k in zip(words, ks):                           # exact, normal
            assert k == 0 or dequant_lzd(k, sf_b) == w
        mode = rng.choice([TRUNC, BIASED, RNE])
        bench.send(words, Config(round_mode=mode))
        cases.append((ks, sf_b, words))
    flush = [f32(2.0 ** -126), f32(2.0 ** -140)]            # spec DFP-V5 example, sf_b = 1
    bench.send(flush, Config(round_mode=BIASED))
    cases.append(([16384, 0], 1, None))
    await bench.finish()
    problems = []
    for (ks, sf_b, words), block in zip(cases, bench.blocks_out()):
        got = block_elements(block)[:len(ks)]
        if got != ks or block[-1]["sf_b"] != sf_b:
            problems.append(f"sf_b {sf_b}: I {got[:8]}..., expected {ks[:8]}...")
        elif words is not None and [dequant_lzd(i, sf_b) for i in got] != words:
            problems.append(f"sf_b {sf_b}: dequant(quant(x)) != x")
    assert not problems, "\n".join(problems[:10])


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def error_paths(dut):
    """DFP-E5 (round_mode 3 = BIASED, sticky cfg_err), DFP-E7 (blocks over BLK_MAX end with
    blk_err and nothing is lost), DFP-E8 (Inf/NaN invalidates only its block)."""
    await start(dut, "i_fp")
    bench = QuantBench(dut)
    q, depth = bench.q_lanes, bench.depth
    assert bench.stats()["cfg_err"] == 0
    # E5: the same block under round_mode 3 and BIASED gives the same output
    gv3 = GV3_WORDS
    bench.send(gv3, Config(round_mode=3))
    bench.send(gv3, Config(round_mode=BIASED))
    # E7: depth + 3 beats without last before the last beat: two blocks, the first cut
    rng = env.rng(5)
    words = [rand_word(rng, 120 + rng.randrange(4)) for _ in range((depth + 3) * q)]
    bench.send(words, Config(round_mode=RNE))
    # E7 at exactly BLK_MAX elements with last: a normal block, no blk_err
    bench.send([rand_word(rng, 100) for _ in range(depth * q)], Config(round_mode=TRUNC))
    # E8: Inf then NaN blocks followed by normal blocks
    bench.send([f32(1.0), 0x7F800000, f32(2.0)], Config(round_mode=BIASED))
    bench.send([0xFFC00001, f32(1.0)], Config(round_mode=RNE))
    bench.send([f32(1.0), f32(-3.0)], Config(round_mode=RNE))
    await bench.finish()
    blocks = bench.blocks_out()
    assert len(blocks) == 8, len(blocks)
    assert block_elements(blocks[0]) == block_elements(blocks[1]), "round_mode 3 != BIASED"
    assert blocks[0][-1] == blocks[1][-1]
    assert bench.stats()["cfg_err"] == 1, "cfg_err not set by round_mode 3"
    cut, rest = blocks[2], blocks[3]
    assert len(cut) == depth and cut[-1]["blk_err"] == 1 and cut[-1]["last"] == 1
    assert len(rest) == 3 and rest[-1]["blk_err"] == 0
    assert len(block_elements(cut)) + len(block_elements(rest)) == len(words)
    assert blocks[4][-1]["blk_err"] == 0 and len(blocks[4]) == depth
    assert blocks[5][-1]["inv"] == 1 and blocks[6][-1]["inv"] == 1
    assert blocks[7][-1]["inv"] == 0 and block_elements(blocks[7])[:2] == [8192, -24576]
    # cfg_err is sticky until stats_clr
    bench.send([f32(1.0)], Config(round_mode=TRUNC))
    await bench.drain()
    assert bench.stats()["cfg_err"] == 1
    await RisingEdge(dut.clk)
    dut.stats_clr.value = 1
    await RisingEdge(dut.clk)
    dut.stats_clr.value = 0
    bench.model.stats_clr()
    await ReadOnly()
    assert bench.stats() == {k: 0 for k in QUANT_STATS}, bench.stats()


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def stats_clr_wins(dut):
    """A stats_clr in the cycle a block's last beat leaves (the counted event) wins: the block
    is not counted; a round_mode 3 first beat sampled with stats_clr leaves cfg_err 0."""
    await start(dut, "i_fp")
    bench = QuantBench(dut, gap_prob=0.0, ready_prob=0.0)
    bench.send([f32(1.0), 0x00000001, f32(3.0)], Config(round_mode=BIASED))   # n_ftz 1
    bench.send([0x7F800000], Config(round_mode=BIASED))                          # inv
    await bench.driver.idle(1000)
    for _ in range(12):
        await RisingEdge(dut.clk)
    bench.monitor.passive = True                    # drive o_q.ready by hand
    counted = 0
    while counted < 2:
        await RisingEdge(dut.clk)
        dut.o_q__ready.value = 0
        dut.stats_clr.value = 0
        await ReadOnly()                            # ready low: this beat stays next cycle
        if read_int(dut.o_q__valid) != 1:
            continue
        is_last = bench.out_fields.unpack(int(dut.o_q__payload.value))["last"]
        await RisingEdge(dut.clk)
        dut.o_q__ready.value = 1                    # take it, clearing in the same cycle
        dut.stats_clr.value = is_last
        counted += is_last
    await RisingEdge(dut.clk)
    dut.o_q__ready.value = 0
    dut.stats_clr.value = 0
    await ReadOnly()
    assert bench.stats() == {k: 0 for k in QUANT_STATS}, bench.stats()
    # the clear cycles dropped both blocks' counts; the model agrees once cleared after them
    bench.model.stats_clr()
    await RisingEdge(dut.clk)
    # cfg_err: a round_mode 3 block whose first beat is accepted in a stats_clr cycle
    bench.monitor.passive = False
    bench.monitor.set_ready_prob(1.0)
    bench.set_rates(0.0, 1.0)
    while read_int(dut.i_fp__ready) != 1:
        await RisingEdge(dut.clk)
    bench.send([f32(2.0)], Config(round_mode=3))
    dut.stats_clr.value = 1
    while bench.driver.sent < bench.beats:
        await RisingEdge(dut.clk)
    dut.stats_clr.value = 0
    await bench.drain()
    got = bench.stats()
    # the block's own count comes later (at its output), the cfg_err event was cleared
    assert got["cfg_err"] == 0, got
    assert got["quant_blocks"] == 1, got
    bench.sb.check_done()
    bench.check_in.check()
    bench.check_out.check()


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def reset_mid_block(dut):
    """DFP-E12: reset while a block is open drops it without output and zeroes the counters;
    the next blocks come out as from a fresh model."""
    await start(dut, "i_fp")
    bench = QuantBench(dut, gap_prob=0.1, ready_prob=0.8)
    rng = env.rng(21)
    for _ in range(4):
        words = rand_quant_block(rng, bench.q_lanes * rng.randrange(1, bench.depth + 1), False)
        bench.send(words, Config(round_mode=3))
    await bench.finish()
    assert bench.stats()["quant_blocks"] == 4 and bench.stats()["cfg_err"] == 1
    # an open block: all but the last beat of a block are accepted, then reset
    n = max(2, bench.depth)
    words = [rand_word(rng, 130) for _ in range(n * bench.q_lanes)]
    beats = chunk_beats(words, bench.q_lanes,
                        lambda lanes, last: {"w": lanes, "last": 0, "e_ext": 0})[:n - 1]
    await bench.reset_in_open_block(beats)
    fresh = QuantBench(dut, gap_prob=0.2, ready_prob=0.7, rng_base=100)
    for _ in range(4):
        words = rand_quant_block(rng, bench.q_lanes * rng.randrange(1, bench.depth + 1))
        cfg, e_ext = rand_quant_cfg(rng, words)
        fresh.send(words, cfg, e_ext)
    await fresh.finish()          # nothing of the dropped block, counters as a fresh model


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def throughput(dut):
    """DFP-P6: with o_q.ready high and beats back to back, a block of n beats is fully output
    within 2n + 8 cycles of its first accepted beat; 100 back-to-back BLK_MAX blocks stream at
    >= 0.95 beats/cycle (asserted for Q_LANES 1, BLK_MAX 64); with o_q stalled the input takes
    two blocks, plus up to six beats when blocks are short (the memory read register, the four
    pass-2 stages and the output register hold one beat each), before its ready falls (DFP-I9)."""
    await block_throughput(dut, "i_fp", QUANT_HELD_BEATS,
                           lambda: QuantBench(dut, gap_prob=0.0, ready_prob=1.0),
                           lambda bench, rng, n: bench.send(
                               [rand_word(rng, 100 + rng.randrange(8))
                                for _ in range(n * bench.q_lanes)], Config(), 0))


async def block_throughput(dut, in_prefix, held, make_bench, send_block):
    """Shared P6 / ping-pong / stall-depth measurement of a block-stream part; ``held`` is the
    documented number of beats held outside the two block buffers (DFP-I9)."""
    await start(dut, in_prefix)
    bench = make_bench()
    rng = env.rng(31)
    depth = bench.depth
    p = env.params()
    figures = []
    for n in sorted({1, 2, 3, max(1, depth // 2), depth}):
        start_in = len(bench.driver.transfers)
        start_out = bench.monitor.count
        send_block(bench, rng, n)
        await bench.drain()
        c_in = bench.driver.transfers[start_in].cycle
        c_end = bench.monitor.transfers[-1].cycle
        assert bench.monitor.count - start_out == n
        span = c_end - c_in
        figures.append((n, span))
        assert span <= 2 * n + 8, f"block of {n} beats fully out {span} cycles after its first " \
                                  f"beat (limit {2 * n + 8})"
    dut._log.info("DFP-P6: beats n -> cycles from first input beat to last output beat: %s",
                  ", ".join(f"{n}: {s} (limit {2 * n + 8})" for n, s in figures))
    # ping-pong: 100 back-to-back blocks of BLK_MAX elements
    start_in = len(bench.driver.transfers)
    for _ in range(100):
        send_block(bench, rng, depth)
    await bench.drain()
    cycles = [t.cycle for t in bench.driver.transfers[start_in:]]
    rate = len(cycles) / (cycles[-1] - cycles[0] + 1)
    dut._log.info("ping-pong: %d beats (100 blocks of %d beats) in %d cycles: %.4f beats/cycle",
                  len(cycles), depth, cycles[-1] - cycles[0] + 1, rate)
    if p["q_lanes"] == 1 and p["blk_max"] == 64:
        assert rate >= 0.95, f"ping-pong rate {rate:.4f} < 0.95"
    # stall: o_q.ready low, input always valid: the input takes two blocks, then ready falls
    bench.monitor.set_ready_prob(0.0)
    await RisingEdge(dut.clk)
    start_in = len(bench.driver.transfers)
    for _ in range(4):
        send_block(bench, rng, depth)
    for _ in range(6 * depth + 20):
        await RisingEdge(dut.clk)
    taken = len(bench.driver.transfers) - start_in
    dut._log.info("output stalled: input accepted %d beats (two blocks of %d, at most %d held "
                  "outside the buffers) before ready fell", taken, depth, held)
    assert taken <= 2 * depth + held, f"took {taken} beats with the output stalled"
    assert taken >= 2 * depth, f"only {taken} beats buffered; two blocks expected"
    bench.monitor.set_ready_prob(1.0)
    await bench.finish()
    bench.figures = {"p6": figures, "pingpong_rate": rate, "stall_beats": taken}
