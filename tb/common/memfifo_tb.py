"""cocotb testbench of hw.common.memfifo.MemFifo, cycle by cycle against a Python model.

Every cycle the bench drives ``w_en``/``w_data``/``r_en``/``clear`` right after the rising edge
(a write only below ``depth`` entries and a read only of a present head: the FIFO's contract),
then in the ReadOnly phase compares ``r_rdy``, ``r_data`` (while ``r_rdy``) and ``level`` with
the model. The model is :class:`tb.common.mwfifo_tb.FifoModel` with one write port, emptied by
``clear`` (which drops a write of the same cycle) and by reset.

* ``random_traffic``: about 13,000 cycles through phases of balanced traffic, write pressure,
  a fill with no reads and churn at full, read pressure (it drains; ``r_en`` held while empty is never issued since the
  contract forbids it), bursts, and rare ``clear`` with a write in the same cycle; a
  synchronous reset mid-run with entries inside. Coverage: full, empty, a read and a write
  at full and at one entry, a write into the empty FIFO read in the next cycle (the
  transparent read), clear with a write, reset with entries.
* ``write_then_read_next_cycle``: a word written into the empty FIFO is on ``r_data`` in the
  next cycle, and so on for a stream read every cycle while it is written (level stays 1).
"""

from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.mwfifo_tb import FifoModel
from tb.common.stream import read_int, sim_cycle

TRACE_LINES = 16

# (name, write probability, read probability, burst length, cycles (None: depth + 200),
# clear probability)
PHASES = [
    ("balanced", 0.5, 0.5, 1.0, 3000, 0.002),
    ("write pressure", 0.8, 0.3, 1.0, 2000, 0.002),
    ("fill", 1.0, 0.0, 1.0, None, 0.0),
    ("churn at full", 1.0, 0.5, 1.0, 500, 0.0),
    ("read pressure", 0.3, 0.9, 1.0, 2000, 0.002),
    ("both every cycle", 1.0, 1.0, 1.0, 1000, 0.002),
    ("bursty", 0.5, 0.5, 8.0, 4000, 0.002),
]


class Bench:
    """Drives and checks the DUT against the model; keeps a trace for failures."""

    def __init__(self, dut):
        self.dut = dut
        p = env.params()
        self.width, self.depth = p["width"], p["depth"]
        self.model = FifoModel(self.depth, 1)
        self.trace = deque(maxlen=TRACE_LINES)
        self.cycles = 0
        self.cov = dict(full=0, empty=0, full_rw=0, one_rw=0, write_read_next=0, clear_write=0,
                        reset_nonempty=0)
        self.last_write_into_empty = False

    async def start(self):
        for name in ("w_en", "w_data", "r_en", "clear"):
            getattr(self.dut, name).value = 0
        start_clock(self.dut)
        await reset(self.dut)
        self.model.reset()

    async def reset(self):
        """A synchronous reset in the middle of a run: the FIFO is empty afterwards."""
        self.cov["reset_nonempty"] += bool(self.model.q)
        for name in ("w_en", "r_en", "clear"):
            getattr(self.dut, name).value = 0
        await reset(self.dut)
        self.model.reset()
        self.last_write_into_empty = False

    def fail(self, what):
        lines = "\n".join(self.trace)
        raise AssertionError(f"{what}\nseed {env.seed()}, params {env.params()}; last cycles "
                             f"(cycle: model queue | w_en w_data r_en clear -> r_rdy r_data "
                             f"level):\n{lines}")

    async def step(self, w_en, w_data, r_en, clear=0):
        """One cycle (call right after a rising edge). Returns (r_rdy, r_data, level) seen."""
        dut = self.dut
        w_data &= (1 << self.width) - 1
        dut.w_en.value, dut.w_data.value = int(w_en), w_data
        dut.r_en.value, dut.clear.value = int(r_en), int(clear)
        await ReadOnly()
        got = (read_int(dut.r_rdy), read_int(dut.r_data), read_int(dut.level))
        before = list(self.model.q)
        _, r_rdy, r_data, level = self.model.outputs([w_en], r_en)
        self.trace.append(f"  {sim_cycle()}: {[hex(x) for x in before]} | {int(w_en)} "
                          f"{w_data:#x} {int(r_en)} {int(clear)} -> {got[0]} {got[1]:#x} {got[2]}")
        if got[0] != r_rdy or got[2] != level or (r_rdy and got[1] != r_data):
            self.fail(f"cycle {sim_cycle()}: r_rdy/r_data/level {got[0]} {got[1]:#x} {got[2]}, "
                      f"expected {r_rdy} {r_data if r_data is None else hex(r_data)} {level}")
        self._cover(w_en, r_en, clear, level)
        if clear:
            self.model.reset()
        else:
            self.model.step([w_en], [w_data], r_en)
        self.cycles += 1
        await RisingEdge(dut.clk)
        return got

    def _cover(self, w_en, r_en, clear, level):
        cov = self.cov
        cov["full"] += level == self.depth
        cov["empty"] += level == 0
        cov["full_rw"] += level == self.depth and w_en and r_en
        cov["one_rw"] += level == 1 and w_en and r_en
        cov["write_read_next"] += self.last_write_into_empty and level == 1 and bool(r_en)
        cov["clear_write"] += bool(clear) and bool(w_en)
        self.last_write_into_empty = level == 0 and bool(w_en) and not clear


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def random_traffic(dut):
    """Random writes, reads and clears through five phases and a reset, every cycle checked."""
    b = Bench(dut)
    dut._log.info("seed %d, params %s", env.seed(), env.params())
    await b.start()
    data_rng, gate_rng = env.rng(1), env.rng(2)
    for index, (name, w_prob, r_prob, burst, cycles, clear_prob) in enumerate(PHASES):
        w_gate, r_gate = RandomGate(w_prob, gate_rng, burst), RandomGate(r_prob, gate_rng, burst)
        for _ in range(b.depth + 200 if cycles is None else cycles):
            level = len(b.model.q)
            r_en = bool(r_gate.next()) and level > 0
            w_en = bool(w_gate.next()) and (level < b.depth or r_en)
            clear = gate_rng.random() < clear_prob
            await b.step(w_en, data_rng.getrandbits(b.width), r_en, clear)
        if index == 1:
            if not b.model.q:
                # the reset must find entries inside (``reset_nonempty``); the write-pressure
                # phase can end empty after a clear or a run of reads (seed 1186206290, depth 2)
                await b.step(True, data_rng.getrandbits(b.width), False, False)
            await b.reset()
        dut._log.info("after phase %-16s coverage %s", name, b.cov)
    missing = [k for k, v in b.cov.items() if not v]
    assert not missing, f"stimulus never reached {missing} (seed {env.seed()}): {b.cov}"
    dut._log.info("%d cycles checked", b.cycles)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def write_then_read_next_cycle(dut):
    """A word written into the empty FIFO is the head in the next cycle (no added latency)."""
    b = Bench(dut)
    await b.start()
    words = [(0x5A + 3 * i) & ((1 << b.width) - 1) for i in range(2 * b.depth)]
    got = await b.step(1, words[0], 0)
    assert got[0] == 0 and got[2] == 0
    for i in range(1, len(words)):
        got = await b.step(1, words[i], 1)      # read the previous word, write the next
        assert got[0] == 1 and got[2] == 1 and got[1] == words[i - 1], (i, got)
    got = await b.step(0, 0, 1)
    assert got == (1, words[-1], 1), got
    got = await b.step(0, 0, 0)
    assert got[0] == 0 and got[2] == 0
