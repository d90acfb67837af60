"""cocotb testbench of hw.common.skid.SkidBuffer.

* ``random_traffic``: random payloads StreamDriver -> DUT -> StreamMonitor through phases of
  random valid gaps and random (also bursty) back-pressure; protocol checkers on ``i`` and
  ``o``; scoreboard against the pass-through golden model; occupancy <= 2 and latency >= 1
  per item; at the end nothing lost, duplicated or left inside.
* ``full_throughput``: valid and ready always high: one transfer per cycle on both sides
  after the first, latency exactly 1 cycle (measured from the transfer cycles).
* ``no_combinational_paths``: within a cycle, toggling ``o.ready`` never moves ``i.ready``,
  and toggling ``i.valid``/``i.payload`` never moves ``o.valid``/``o.payload``; they change
  only at clock edges.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from golden.common.stream import RandomGate, pass_through
from tb.common import env
from tb.common.clock import PERIOD_NS, reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, read_int

# (gap_prob, ready_prob, burst): free flow, heavy back-pressure, bursty stalls, sparse input,
# full rate
PHASES = [(0.3, 0.7, 1.0), (0.0, 0.25, 1.0), (0.1, 0.5, 6.0), (0.7, 0.9, 1.0), (0.0, 1.0, 1.0)]
ITEMS_PER_PHASE = 120


async def _start(dut):
    dut.i__valid.value = 0
    dut.o__ready.value = 0
    start_clock(dut)
    await reset(dut)


def _check_pairs(sent, received):
    """Per item (order is preserved): latency >= 1 cycle, and at most 2 items inside."""
    problems = []
    for k, (t_in, t_out) in enumerate(zip(sent, received)):
        if t_out.cycle - t_in.cycle < 1:
            problems.append(f"item {k} left in cycle {t_out.cycle}, entered in {t_in.cycle}")
    # occupancy after the edge ending cycle c = inputs with cycle <= c - outputs with cycle <= c
    events = sorted([(t.cycle, +1) for t in sent] + [(t.cycle, -1) for t in received])
    occupancy, peak = 0, 0
    for index, (cycle, delta) in enumerate(events):
        occupancy += delta
        if index + 1 == len(events) or events[index + 1][0] != cycle:
            peak = max(peak, occupancy)
            if occupancy > 2:
                problems.append(f"{occupancy} items inside after cycle {cycle} (capacity 2)")
    return problems[:20], peak


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def random_traffic(dut):
    """Random payloads, gaps and back-pressure; scoreboard, protocol, nothing lost/duplicated."""
    await _start(dut)
    width = len(dut.i__payload)
    rng = env.rng(1)
    clk = dut.clk
    sb = Scoreboard("skid o")
    check_i = StreamProtocolChecker(dut, "i", clk)
    check_o = StreamProtocolChecker(dut, "o", clk)
    driver = StreamDriver(dut, "i", clk, rng=env.rng(2))
    monitor = StreamMonitor(dut, "o", clk, rng=env.rng(3),
                            callback=lambda t: sb.observe(t.value, t.cycle))
    sent = []
    for gap_prob, ready_prob, burst in PHASES:
        driver.gate = RandomGate(1.0 - gap_prob, env.rng(4), burst)
        monitor.gate = RandomGate(ready_prob, env.rng(5), burst)
        items = [rng.getrandbits(width) for _ in range(ITEMS_PER_PHASE)]
        for item in pass_through(items):
            sb.expect(item)
        driver.extend(items)
        sent += items
        await driver.idle(50 * ITEMS_PER_PHASE)
        await monitor.wait_for(len(sent), 50 * ITEMS_PER_PHASE)
    for _ in range(3):                       # send() returns once its item has transferred
        item = rng.getrandbits(width)
        sb.expect(item)
        sent.append(item)
        before = driver.sent
        await driver.send(item)
        assert driver.sent == before + 1 and driver.transfers[-1].value == item
    await monitor.wait_for(len(sent), 100)
    for _ in range(5):                       # anything left would show up (or be stuck) here
        await RisingEdge(clk)
    await ReadOnly()
    leftover = read_int(dut.o__valid)
    sb.check_done()
    check_i.check()
    check_o.check()
    assert leftover == 0, "o.valid still high after every item came out (a duplicate inside)"
    assert monitor.items() == sent, "output sequence differs from input sequence"
    assert check_i.transfers == len(sent) and check_o.transfers == len(sent), \
        (check_i.transfers, check_o.transfers, len(sent))
    problems, peak = _check_pairs(driver.transfers, monitor.transfers)
    assert not problems, "\n".join(problems)
    dut._log.info("%s; peak occupancy %d; %d/%d stall cycles on i/o", sb.summary(), peak,
                  check_i.rules.stall_cycles, check_o.rules.stall_cycles)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def full_throughput(dut):
    """Always valid, always ready: one transfer per cycle, latency 1."""
    await _start(dut)
    width = len(dut.i__payload)
    rng = env.rng(10)
    clk = dut.clk
    n = 64
    items = [rng.getrandbits(width) for _ in range(n)]
    inputs = StreamMonitor(dut, "i", clk, passive=True)
    monitor = StreamMonitor(dut, "o", clk, ready_prob=1.0)
    check_i = StreamProtocolChecker(dut, "i", clk)
    check_o = StreamProtocolChecker(dut, "o", clk)
    driver = StreamDriver(dut, "i", clk, gap_prob=0.0)
    driver.extend(items)
    await driver.idle(10 * n)
    await monitor.wait_for(n, 10 * n)
    in_cycles = [t.cycle for t in inputs.transfers]
    out_cycles = [t.cycle for t in monitor.transfers]
    assert monitor.items() == items
    assert in_cycles == list(range(in_cycles[0], in_cycles[0] + n)), \
        f"input side not one transfer per cycle: {in_cycles}"
    assert out_cycles == list(range(out_cycles[0], out_cycles[0] + n)), \
        f"output side not one transfer per cycle: {out_cycles}"
    latency = out_cycles[0] - in_cycles[0]
    assert latency == 1, f"latency {latency} cycles, expected 1"
    check_i.check()
    check_o.check()
    dut._log.info("%d transfers in %d cycles, latency %d", n, out_cycles[-1] - out_cycles[0] + 1,
                  latency)


async def _probe_cycle(dut, toggles):
    """Just after a rising edge: apply ``toggles`` (list of {signal: value}) 1 ns apart and
    return the (i.ready, o.valid, o.payload) seen after each, all in the same cycle."""
    seen = []
    for step in toggles:
        for name, value in step.items():
            getattr(dut, name).value = value
        await ReadOnly()
        seen.append((read_int(dut.i__ready), read_int(dut.o__valid), read_int(dut.o__payload)))
        await Timer(1, unit="ns")
    assert len(toggles) < PERIOD_NS, "probe steps must stay inside one clock period"
    return seen


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def no_combinational_paths(dut):
    """i.ready ignores o.ready, o.valid/o.payload ignore i.valid/i.payload within a cycle."""
    await _start(dut)
    width = len(dut.i__payload)
    mask = (1 << width) - 1
    a, b = 0x5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A5A & mask, 0x3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C & mask
    if a == b:
        a, b = 0, 1
    junk = 0x0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F & mask
    failures = []

    async def probe(label, final, expect):
        """Toggle o.ready, i.valid, i.payload inside one cycle, ending with ``final``."""
        toggles = [{"o__ready": 0}, {"o__ready": 1}, {"o__ready": 0, "i__valid": 1},
                   {"i__payload": junk}, {"i__valid": 0, "o__ready": 1}, final]
        seen = await _probe_cycle(dut, toggles)
        if any(s != seen[0] for s in seen):
            failures.append(f"{label}: (i.ready, o.valid, o.payload) moved within a cycle: {seen}")
        ready, valid, payload = seen[0]
        if (ready, valid, payload if valid else None) != expect:   # an empty buffer's payload is stale
            failures.append(f"{label}: expected (i.ready, o.valid, o.payload) = {expect}, "
                            f"got {seen[0]}")
        await RisingEdge(dut.clk)

    await RisingEdge(dut.clk)
    # empty: accept A at the end of the cycle, hold o.ready low
    await probe("empty", {"i__valid": 1, "i__payload": a, "o__ready": 0}, (1, 0, None))
    # A in the main register, stalled: accept B into the skid register
    await probe("main full", {"i__valid": 1, "i__payload": b, "o__ready": 0}, (1, 1, a))
    # both full: i.ready low however o.ready moves; release A at the end
    await probe("both full", {"i__valid": 0, "o__ready": 1}, (0, 1, a))
    # B moved from the skid to the main register
    await probe("draining", {"i__valid": 0, "o__ready": 1}, (1, 1, b))
    await probe("empty again", {"i__valid": 0, "o__ready": 0}, (1, 0, None))
    assert not failures, "\n".join(failures)

