"""cocotb testbench of hw.common.mwfifo.MultiWriteFifo, cycle by cycle against a Python model.

Every cycle the bench drives ``w_en_k``/``w_data_k`` on every port and ``r_en`` right after the
rising edge, then in the ReadOnly phase compares ``w_ok_k`` (every port), ``r_rdy``, ``r_data``
(while ``r_rdy``) and ``level`` with :class:`FifoModel` before the edge, then steps the model.
A mismatch fails at once with the seed and the last cycles of the trace.

* ``ports``: port widths (``w_data_k`` and ``r_data`` ``width`` bits, ``level``
  ``bit_length(depth)`` bits).
* ``random_traffic``: 12,700 cycles through phases of random writes (random data on every port,
  also on disabled ones) and random reads: balanced, high write pressure (the FIFO fills and
  writes are refused), every port writing and reading every cycle, no reads at all (full, every
  write refused), high read rate (empty, ``r_en`` while empty), several writers per cycle with
  fast reads (part of a cycle's writes taken), every port writing in the same sparse cycles
  into a FIFO drained every cycle, bursty writes and reads. Coverage is asserted:
  full, empty, refusals, several refusals in a cycle and a cycle with some writes taken and some
  refused (ports > 1), read and write at full, ``r_en`` while empty, ``min(depth, ports)``
  writes taken in one cycle.
* ``fill_in_one_cycle``: every port writes into the empty FIFO in one cycle (``r_en`` high
  too, which must not count while empty): the first ``min(depth, ports)`` are taken, the rest
  refused; writes continue until full, then the FIFO drains in port order.
* ``full_read_and_write``: a full FIFO with a read and every port writing: the freed slot
  goes to port 0 only; with port 0 idle it goes to the first enabled port; with no read every
  write is refused; the contents come out in order.
* ``reset_empties``: a synchronous reset with writes pending empties the FIFO.
"""

from collections import deque, namedtuple

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.stream import read_int, sim_cycle

TRACE_LINES = 16

Observed = namedtuple("Observed", "w_ok r_rdy r_data level")   # the DUT's outputs in a cycle

# (name, writes per cycle (spread evenly over the ports, at most 1 per port; ALL = every port
# every cycle), read probability, burst length of the on/off patterns, cycles, together: one
# gate for all ports, so every port writes in the same cycles)
ALL = float("inf")
PHASES = [
    ("balanced", 0.6, 0.6, 1.0, 2000, False),
    ("write pressure", 1.5, 0.5, 1.0, 2000, False),
    ("saturate", ALL, 1.0, 1.0, 500, False),
    ("no reads", ALL, 0.0, 1.0, 200, False),
    ("read rate", 0.4, 0.95, 1.0, 2000, False),
    ("many writers", 2.0, 0.9, 1.0, 2000, False),
    ("all at once", 0.15, 1.0, 1.0, 1000, True),
    ("bursty", 0.5, 0.5, 8.0, 3000, False),
]


class FifoModel:
    """The documented behaviour of MultiWriteFifo, one cycle at a time."""

    def __init__(self, depth, ports):
        self.depth = depth
        self.ports = ports
        self.q = []

    def outputs(self, w_en, r_en):
        """(w_ok list, r_rdy, r_data or None, level) in a cycle with these inputs."""
        level = len(self.q)
        r_rdy = int(level > 0)
        used = level - (1 if r_en and r_rdy else 0)
        w_ok, taken = [], 0
        for en in w_en:
            ok = int(bool(en) and used + taken < self.depth)
            w_ok.append(ok)
            taken += ok
        return w_ok, r_rdy, (self.q[0] if r_rdy else None), level

    def step(self, w_en, w_data, r_en):
        """Apply one clock edge; returns the outputs seen before it."""
        out = w_ok, r_rdy, _, _ = self.outputs(w_en, r_en)
        if r_en and r_rdy:
            self.q.pop(0)
        self.q += [d for ok, d in zip(w_ok, w_data) if ok]
        return out

    def reset(self):
        self.q = []


class Bench:
    """Drives and checks the DUT against :class:`FifoModel`; keeps a trace for failures."""

    def __init__(self, dut):
        self.dut = dut
        p = env.params()
        self.width, self.depth, self.ports = p["width"], p["depth"], p["ports"]
        self.mask = (1 << self.width) - 1
        self.w_en = [getattr(dut, f"w_en_{k}") for k in range(self.ports)]
        self.w_data = [getattr(dut, f"w_data_{k}") for k in range(self.ports)]
        self.w_ok = [getattr(dut, f"w_ok_{k}") for k in range(self.ports)]
        self.model = FifoModel(self.depth, self.ports)
        self.trace = deque(maxlen=TRACE_LINES)
        self.cycles = 0
        self.cov = dict(full=0, empty=0, refused=0, refused_after_refused=0, partial=0, multi=0, full_rw=0,
                        empty_r_en=0, max_taken=0, reads=0, writes=0)

    async def start(self):
        for k in range(self.ports):
            self.w_en[k].value = 0
            self.w_data[k].value = 0
        self.dut.r_en.value = 0
        start_clock(self.dut)
        await reset(self.dut)
        self.model.reset()

    def fail(self, what):
        lines = "\n".join(self.trace)
        raise AssertionError(
            f"{what}\nseed {env.seed()}, params {env.params()}; last cycles "
            f"(cycle: model queue before | w_en w_data r_en -> w_ok r_rdy r_data level):\n{lines}")

    async def step(self, w_en, w_data, r_en):
        """One cycle (call right after a rising edge): drive, check before the edge, step the
        model, wait for the edge. Returns what the DUT showed before the edge."""
        w_data = [d & self.mask for d in w_data]
        for k in range(self.ports):
            self.w_en[k].value = int(bool(w_en[k]))
            self.w_data[k].value = w_data[k]
        self.dut.r_en.value = int(bool(r_en))
        await ReadOnly()
        got_ok = [read_int(s) for s in self.w_ok]
        got_rdy = read_int(self.dut.r_rdy)
        got_data = read_int(self.dut.r_data)
        got_level = read_int(self.dut.level)
        before = list(self.model.q)
        w_ok, r_rdy, r_data, level = self.model.step(w_en, w_data, r_en)
        cycle = sim_cycle()
        self.trace.append(
            f"  {cycle}: {[hex(x) for x in before]} | en={[int(bool(e)) for e in w_en]} "
            f"data={[hex(d) for d in w_data]} r_en={int(bool(r_en))} -> "
            f"w_ok={got_ok} r_rdy={got_rdy} r_data={got_data if got_data is None else hex(got_data)} "
            f"level={got_level}")
        problems = []
        if got_ok != w_ok:
            problems.append(f"w_ok {got_ok}, expected {w_ok}")
        if got_rdy != r_rdy:
            problems.append(f"r_rdy {got_rdy}, expected {r_rdy}")
        if r_rdy and got_data != r_data:
            problems.append(f"r_data {got_data if got_data is None else hex(got_data)}, "
                            f"expected {r_data:#x}")
        if got_level != level:
            problems.append(f"level {got_level}, expected {level}")
        if problems:
            self.fail(f"cycle {cycle}: " + "; ".join(problems))
        self._cover(w_en, w_ok, r_en, r_rdy, level)
        self.cycles += 1
        await RisingEdge(self.dut.clk)
        return Observed(got_ok, got_rdy, got_data, got_level)

    def _cover(self, w_en, w_ok, r_en, r_rdy, level):
        cov = self.cov
        cov["full"] += level == self.depth
        cov["empty"] += level == 0
        cov["empty_r_en"] += level == 0 and bool(r_en)
        refused = [bool(e) and not ok for e, ok in zip(w_en, w_ok)]
        cov["refused"] += sum(refused)
        taken = sum(w_ok)
        cov["refused_after_refused"] += sum(refused) > 1
        cov["partial"] += taken > 0 and any(refused)
        cov["multi"] += taken > 1
        cov["writes"] += taken
        cov["reads"] += bool(r_en) and bool(r_rdy)
        cov["max_taken"] = max(cov["max_taken"], taken)
        cov["full_rw"] += level == self.depth and bool(r_en) and taken > 0

    def words(self, rng, n):
        return [rng.getrandbits(self.width) for _ in range(n)]

    def distinct(self, n, start=1):
        """n data words, distinct where the width allows."""
        return [(start + i) & self.mask for i in range(n)]


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def ports(dut):
    """w_data_k / r_data are width bits, level bit_length(depth) bits, w_en/w_ok/r_en/r_rdy 1."""
    b = Bench(dut)
    widths = {"r_data": b.width, "level": b.depth.bit_length(), "r_en": 1, "r_rdy": 1}
    for k in range(b.ports):
        widths.update({f"w_en_{k}": 1, f"w_data_{k}": b.width, f"w_ok_{k}": 1})
    got = {name: len(getattr(dut, name)) for name in widths}
    assert got == widths, f"port widths {got}, expected {widths}"
    assert not hasattr(dut, f"w_en_{b.ports}"), f"more than {b.ports} write ports"


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def random_traffic(dut):
    """Random writes on every port and random reads through eight phases, every cycle checked."""
    b = Bench(dut)
    dut._log.info("seed %d, params %s", env.seed(), env.params())
    await b.start()
    data_rng = env.rng(1)
    gate_rng = env.rng(2)
    for name, writes, r_prob, burst, cycles, together in PHASES:
        if together:
            w_gate = RandomGate(writes, gate_rng, burst)
        else:
            p = min(1.0, writes / b.ports)
            w_gates = [RandomGate(p, gate_rng, burst) for _ in range(b.ports)]
        r_gate = RandomGate(r_prob, gate_rng, burst)
        start = dict(b.cov)
        for _ in range(cycles):
            w_en = [w_gate.next()] * b.ports if together else [g.next() for g in w_gates]
            await b.step(w_en, b.words(data_rng, b.ports), r_gate.next())
        delta = {k: b.cov[k] - start[k]
                 for k in ("full", "empty", "refused", "partial", "writes", "reads")}
        dut._log.info("phase %-14s %5d cycles: %s", name, cycles, delta)
    cov = b.cov
    dut._log.info("%d cycles checked; coverage %s", b.cycles, cov)
    missing = [k for k in ("full", "empty", "refused", "full_rw", "empty_r_en") if not cov[k]]
    if b.ports > 1:
        missing += [k for k in ("refused_after_refused", "partial") if not cov[k]]
    if min(b.ports, b.depth) > 1 and cov["max_taken"] < min(b.ports, b.depth):
        missing.append(f"max_taken={min(b.ports, b.depth)}")
    assert not missing, f"stimulus never reached {missing} (seed {env.seed()}): {cov}"


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def fill_in_one_cycle(dut):
    """All ports write into the empty FIFO at once: the first min(depth, ports) are taken."""
    b = Bench(dut)
    await b.start()
    n, depth = b.ports, b.depth
    data = b.distinct(n)
    # r_en high while empty must not count as a read (no room is "freed")
    obs = await b.step([1] * n, data, 1)
    first = min(depth, n)
    assert obs.level == 0 and obs.r_rdy == 0
    assert obs.w_ok == [1] * first + [0] * (n - first), \
        f"empty FIFO, {n} writes: w_ok {obs.w_ok}, expected the first {first} taken"
    expected = data[:first]
    # keep every port writing, no reads, until full
    start = n + 1
    while len(expected) < depth:
        data = b.distinct(n, start)
        start += n
        obs = await b.step([1] * n, data, 0)
        take = min(n, depth - len(expected))
        assert obs.level == len(expected)
        assert obs.w_ok == [1] * take + [0] * (n - take), \
            f"filling at level {obs.level}: w_ok {obs.w_ok}, expected {take} taken"
        expected += data[:take]
    obs = await b.step([1] * n, b.distinct(n, start), 0)
    assert obs.level == depth and obs.w_ok == [0] * n, \
        f"full, no read: level {obs.level}, w_ok {obs.w_ok}, expected every write refused"
    # drain in order, no writes
    out = []
    for _ in range(depth):
        obs = await b.step([0] * n, [0] * n, 1)
        out.append(obs.r_data)
    assert out == expected, f"drained {out}, wrote {expected}"
    obs = await b.step([0] * n, [0] * n, 1)
    assert obs.r_rdy == 0 and obs.level == 0


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def full_read_and_write(dut):
    """Full FIFO: a read frees one slot, taken by the first enabled port only."""
    b = Bench(dut)
    await b.start()
    n, depth = b.ports, b.depth
    rng = env.rng(20)
    idle = [0] * n
    # fill through port 0, one word per cycle
    expected = b.words(rng, depth)
    for word in expected:
        await b.step([1] + idle[1:], [word] + b.words(rng, n - 1), 0)

    # read + every port writing: port 0 gets the freed slot
    data = b.words(rng, n)
    obs = await b.step([1] * n, data, 1)
    assert obs.level == depth and obs.r_data == expected[0]
    assert obs.w_ok == [1] + [0] * (n - 1), f"full + read + {n} writes: w_ok {obs.w_ok}"
    expected = expected[1:] + [data[0]]

    if n > 1:
        # port 0 idle: the freed slot goes to port 1, the ports after it are refused
        data = b.words(rng, n)
        obs = await b.step([0] + [1] * (n - 1), data, 1)
        assert obs.level == depth, "level changed by a read with a write at full"
        assert obs.r_data == expected[0]
        assert obs.w_ok == [0, 1] + [0] * (n - 2), f"full + read, port 0 idle: w_ok {obs.w_ok}"
        expected = expected[1:] + [data[1]]

    # no read: everything refused, the contents stay
    obs = await b.step([1] * n, b.words(rng, n), 0)
    assert obs.level == depth and obs.w_ok == [0] * n, f"full, no read: w_ok {obs.w_ok}"
    # a read alone frees one slot for the next cycle
    obs = await b.step(idle, b.words(rng, n), 1)
    assert obs.level == depth and obs.r_data == expected[0]
    expected = expected[1:]
    data = b.words(rng, n)
    obs = await b.step([1] * n, data, 0)
    assert obs.level == depth - 1
    assert obs.w_ok == [1] + [0] * (n - 1), f"one free slot, {n} writes: w_ok {obs.w_ok}"
    expected += [data[0]]

    out = []
    for _ in range(depth + 1):
        obs = await b.step(idle, b.words(rng, n), 1)
        if obs.r_rdy:
            out.append(obs.r_data)
    assert obs.r_rdy == 0 and out == expected, f"drained {out}, expected {expected}"


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def reset_empties(dut):
    """A synchronous reset (with writes and a read pending) empties the FIFO."""
    b = Bench(dut)
    await b.start()
    n = b.ports
    rng = env.rng(30)
    for _ in range(b.depth):
        await b.step([1] * n, b.words(rng, n), 0)
    for k in range(n):
        b.w_en[k].value = 1
    dut.r_en.value = 1
    await reset(dut, cycles=1)
    b.model.reset()
    obs = await b.step([0] * n, [0] * n, 1)       # the model expects level 0, r_rdy 0
    assert obs.level == 0 and obs.r_rdy == 0
    await b.step([1] * n, b.words(rng, n), 0)     # writes work again after the reset
    obs = await b.step([0] * n, [0] * n, 0)
    assert obs.level == min(n, b.depth)
