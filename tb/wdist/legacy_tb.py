"""cocotb testbench of the legacy baseline ``Legacy`` (hw/wdist/legacy.py) against golden
``Legacy`` (G-LEGACY), closed loop around a golden ``ResourceTracker``.

The testbench plays the resource tracker: every cycle it drives ``free`` (A1 for the head
shape), ``credit``, ``empty`` and ``dirty`` from its tracker model and applies the RTL's
``commit`` / ``credit_dec`` to it (visible next cycle, as in the tracker). The golden ``Legacy``
runs the same grids on its own tracker. Whenever a grid waits (WAIT_SLOTS, WAIT_CGA_FIT), both
sides complete the same CTAs (the oldest placed ones) and the wait ends on ``dirty``. The
LAUNCH_ID beats (every field), the FAIL events and the results (NEVER_FITS with ``info``) must
agree; ``bcast`` back-pressure is random.

- ``random_grids``: random PLAIN and level-GPC (LB and MC) grids on random capacities (waits
  when a grid does not fit), and in half the runs a CGA larger than any GPC at the end (FAIL
  events while CTAs remain, then NEVER_FITS once the machine is empty).
- ``plain_fill_rate``: WD-P8 — a plain grid filling the machine from empty, all ready: one
  LAUNCH_ID beat per cycle, T = placement cycles ≤ CTAs + 16.
"""

from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.wdist.formats import Command, Kind, Level, Shape, cmd_fields, raster_beat_fields
from golden.wdist.legacy import Legacy as GoldenLegacy
from golden.wdist.params import WdistParams
from golden.wdist.session import DONE, MORE, NEVER_FITS, GridRun
from golden.wdist.tracker import ResourceTracker
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int

BEAT_KEYS = ("kind", "grid_id", "seq", "gpc", "cnt", "first_rank", "is_cga", "gcga_first",
             "gcga_last", "end_of_cga", "ctaid_x", "ctaid_y", "ctaid_z", "cga_cta_id")


def build_params():
    return WdistParams(DISTRIBUTOR="legacy", **env.params())


def beat_key(d):
    return tuple(tuple(d[k]) if k == "cnt" else d[k] for k in BEAT_KEYS)


def golden_key(p, b):
    d = dict(kind=int(b.kind), grid_id=b.grid_id, seq=b.seq, gpc=b.gpc,
             cnt=list(b.cnt) if b.cnt else [0] * p.S_MAX, first_rank=b.first_rank,
             is_cga=b.is_cga, gcga_first=b.gcga_first, gcga_last=b.gcga_last,
             end_of_cga=b.end_of_cga, ctaid_x=b.ctaid[0], ctaid_y=b.ctaid[1],
             ctaid_z=b.ctaid[2], cga_cta_id=b.cga_cta_id)
    if b.kind == Kind.GRID:
        d.update(seq=0, gpc=0, cnt=[0] * p.S_MAX, first_rank=0, is_cga=0, gcga_first=0,
                 gcga_last=0, end_of_cga=0, ctaid_x=0, ctaid_y=0, ctaid_z=0, cga_cta_id=0)
    return beat_key(d)


class Machine:
    """A tracker model plus the CTAs placed so far (oldest first), completed on a wait."""

    def __init__(self, p, caps):
        self.p = p
        self.t = ResourceTracker(p)
        for sm, cap in caps.items():
            self.t.cfg_write(sm, **cap)
        self.placed = deque()             # (sm, Shape)
        commit = self.t.commit

        def record(sm, k, shape):
            commit(sm, k, shape)
            self.placed.extend([(sm, shape)] * k)
        self.t.commit = record            # the golden Legacy commits through this too

    def release(self, n):
        """Complete the n oldest placed CTAs; once none is left, every CGA counts as complete
        and the credits return (the way out of a wait, identical on both sides)."""
        for _ in range(min(n, len(self.placed))):
            sm, shape = self.placed.popleft()
            self.t.complete(sm, shape)
        if not self.placed:
            self.t.credit = [self.p.credit_reset(g) for g in range(self.p.N_GPC)]


def golden_run(p, caps, grids, release_n):
    """Golden beats, FAIL count and results for ``grids`` on a machine with ``caps``."""
    mach = Machine(p, caps)
    leg = GoldenLegacy(p, mach.t)
    beats, fails, results = [], 0, []
    for cmd in grids:
        run = GridRun.start(cmd)
        for _ in range(100_000):
            outcome, events = leg.cycle(run)
            for kind, x in events:
                if kind == "beat":
                    beats.append(golden_key(p, x))
                else:
                    fails += 1
            if outcome == MORE:
                continue
            if outcome == DONE:
                results.append((cmd.grid_id, 0, 0))
                break
            if outcome == NEVER_FITS:
                results.append((cmd.grid_id, 5, run.launched))
                break
            mach.release(release_n)                   # WAIT_SLOTS / WAIT_CGA_FIT
        else:
            raise AssertionError(f"golden legacy did not finish grid {cmd.grid_id}")
    return beats, fails, results


def grid_item(p, cmd):
    f = cmd_fields(p)
    word = f.pack(**{n: getattr(cmd, n) for n in f.names})
    u = cmd.unit_grid
    word |= u[0] << f.width
    word |= u[1] << (f.width + p.GX_W)
    word |= u[2] << (f.width + p.GX_W + p.GY_W)
    return word


async def run_closed_loop(dut, p, caps, grids, release_n, ready_prob, rng):
    """Drive the RTL with the tracker model; return (beats, fails, results, cycles)."""
    mach = Machine(p, caps)
    drv = StreamDriver(dut, "grid", dut.clk, gap_prob=0.0, rng=rng)
    mon = StreamMonitor(dut, "beat", dut.clk, raster_beat_fields(p), ready_prob=ready_prob,
                        rng=rng)
    res = StreamMonitor(dut, "result", dut.clk, ready_prob=1.0, rng=rng)
    StreamProtocolChecker(dut, "beat", dut.clk)
    for cmd in grids:
        drv.append(grid_item(p, cmd))
    head = deque(grids)
    dirty, fails, cycles = 1, 0, 0
    waited = False
    while len(res.transfers) < len(grids):
        cycles += 1
        assert cycles < 200_000, "legacy RTL did not finish"
        shape = head[0].shape if head else Shape(1, 1, 1, 1)
        free = mach.t.free_vector(shape)
        dut.free.value = sum(f << (s * p.FREE_W) for s, f in enumerate(free))
        dut.credit.value = sum(c << (g * 8) for g, c in enumerate(mach.t.credit))
        dut.empty.value = int(mach.t.empty())
        dut.dirty.value = dirty
        await ReadOnly()
        stall = read_int(dut.stall)
        if read_int(dut.attempt):
            dirty = 0
        if read_int(dut.fail):
            fails += 1
        if read_int(dut.commit):
            a = read_int(dut.commit_a)
            sms = [s for s in range(p.N_SM) if (a >> (s * p.CNT_W)) & ((1 << p.CNT_W) - 1)]
            assert len(sms) == 1 and (a >> (sms[0] * p.CNT_W)) & ((1 << p.CNT_W) - 1) == 1, \
                f"commit_a is not one CTA on one SM: {a:#x}"
            mach.t.commit(sms[0], 1, head[0].shape)
        dec = read_int(dut.credit_dec)
        for g in range(p.N_GPC):
            if (dec >> g) & 1:
                mach.t.commit_credit(g)
        if read_int(dut.result__valid) and read_int(dut.result__ready):
            head.popleft()
            waited = False
        if stall in (2, 3) and not waited:
            # the grid waits: complete the oldest CTAs, as the golden run does
            mach.release(release_n)
            dirty = 1
            waited = True
        elif stall not in (2, 3):
            waited = False
        await RisingEdge(dut.clk)
    for _ in range(8):
        await RisingEdge(dut.clk)
    beats = [beat_key({k: t.fields[k] for k in BEAT_KEYS}) for t in mon.transfers]
    results = []
    for t in res.transfers:
        v = t.value
        results.append((v & ((1 << p.GRID_ID_W) - 1), (v >> p.GRID_ID_W) & 0xF,
                        v >> (p.GRID_ID_W + 4)))
    return beats, fails, results, cycles, mon


def random_case(rng, p):
    caps = {}
    for sm in range(p.N_SM):
        if rng.random() < 0.3:
            caps[sm] = dict(slot_cap=rng.randint(0, p.CTA_SLOTS), warp_cap=rng.randint(1, p.WARP_CAP))
        if rng.random() < 0.1:
            caps.setdefault(sm, {})["enable"] = 0
    grids = []
    for k in range(rng.randint(2, 5)):
        level = rng.choice((Level.PLAIN, Level.GPC))
        warps = rng.randint(1, 16)
        if level == Level.PLAIN:
            grids.append(Command(grid_id=k, level=level, grid_x=rng.randint(1, 30),
                                 grid_y=rng.randint(1, 3), grid_z=rng.randint(1, 2),
                                 warps=warps, regs_g=rng.randint(0, 40), smem_g=rng.randint(0, 200)))
        else:
            inner = (rng.randint(1, 4), rng.randint(1, 2), 1)
            units = (rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 2))
            grids.append(Command(grid_id=k, level=level, mode=rng.randrange(2),
                                 grid_x=units[0] * inner[0], grid_y=units[1] * inner[1],
                                 grid_z=units[2], in_x=inner[0], in_y=inner[1], warps=warps,
                                 regs_g=rng.randint(0, 40), smem_g=rng.randint(0, 200)))
    if rng.random() < 0.5:          # a CGA larger than any GPC: waits, then NEVER_FITS
        grids.append(Command(grid_id=len(grids), level=Level.GPC, mode=rng.randrange(2),
                             grid_x=63, grid_y=8, in_x=63, in_y=8, warps=1))
    return caps, grids


@cocotb.test()
async def random_grids(dut):
    start_clock(dut)
    dut.free.value = 0
    dut.credit.value = 0
    dut.empty.value = 1
    dut.dirty.value = 1
    await reset(dut)
    p = build_params()
    rng = env.rng(0)
    caps, grids = random_case(rng, p)
    release_n = rng.randint(1, 4)
    want_beats, want_fails, want_results = golden_run(p, caps, grids, release_n)
    beats, fails, results, cycles, _ = await run_closed_loop(
        dut, p, caps, grids, release_n, rng.choice((0.5, 1.0)), rng)
    assert results == want_results, f"results {results} != golden {want_results}"
    assert fails == want_fails, f"FAIL events {fails} != golden {want_fails}"
    for k, (got, want) in enumerate(zip(beats, want_beats)):
        assert got == want, f"beat {k}: {got} != golden {want}"
    assert len(beats) == len(want_beats), f"{len(beats)} beats, golden {len(want_beats)}"
    dut._log.info("legacy random_grids: %d grids, %d beats, %d FAIL events, results %s, "
                  "%d cycles (seed %d)", len(grids), len(beats), fails, results, cycles,
                  env.seed())


@cocotb.test()
async def plain_fill_rate(dut):
    """WD-P8: a plain grid that fills the empty machine, every ready high."""
    start_clock(dut)
    dut.empty.value = 1
    dut.dirty.value = 1
    await reset(dut)
    p = build_params()
    rng = env.rng(1)
    shape = dict(warps=8, regs_g=32, smem_g=114)       # §3.5: free 8 per empty SM
    per_sm = min(p.CTA_SLOTS, p.WARP_CAP // 8, p.REG_CAP_G // 32, p.SMEM_CAP_G // 114)
    n = p.N_SM * per_sm
    cmd = Command(grid_id=1, level=Level.PLAIN, grid_x=n, **shape)
    want_beats, _, want_results = golden_run(p, {}, [cmd], 1)
    beats, _, results, cycles, mon = await run_closed_loop(dut, p, {}, [cmd], 1, 1.0, rng)
    assert results == want_results and beats == want_beats
    first = mon.transfers[1].cycle                       # after the GRID beat
    last = mon.transfers[-1].cycle
    span = last - first + 1
    dut._log.info("WD-P8: %d CTAs placed in %d cycles (first LAUNCH_ID to last), %d cycles "
                  "from the grid to the last beat", n, span, last - mon.transfers[0].cycle + 1)
    assert span == n, f"{n} CTAs took {span} cycles: not one per cycle"
    assert last - mon.transfers[0].cycle + 1 <= n + 16
