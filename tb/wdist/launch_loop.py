"""The closed loop shared by the launcher testbenches (legacy and shadow): the testbench plays
the resource tracker around the RTL.

Every cycle it drives ``free`` (A1 for the head shape), ``credit``, ``empty`` and ``dirty`` from a
golden ``ResourceTracker`` and applies the RTL's ``commit`` / ``credit_dec`` to it (visible the
next cycle, as in the tracker). Whenever a grid waits (WAIT_SLOTS, WAIT_CGA_FIT), the oldest
placed CTAs complete (``Machine.release``), the same as the golden run does, and ``dirty`` is
set. ``bcast`` back-pressure is random.
"""

from collections import deque

from cocotb.triggers import ReadOnly, RisingEdge

from golden.wdist.formats import Command, Kind, Level, Shape, cmd_fields, raster_beat_fields
from golden.wdist.session import DONE, MORE, NEVER_FITS, GridRun
from golden.wdist.tracker import ResourceTracker
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int

__all__ = ["BEAT_KEYS", "beat_key", "golden_key", "Machine", "grid_item", "run_closed_loop",
           "random_case", "golden_grids"]

BEAT_KEYS = ("kind", "grid_id", "seq", "gpc", "cnt", "first_rank", "is_cga", "gcga_first",
             "gcga_last", "end_of_cga", "ctaid_x", "ctaid_y", "ctaid_z", "cga_cta_id")


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
        and the credits return (the way out of a wait, identical on both sides).

        Credits come back only here, all at once and only when the machine is empty: the model
        keeps no CGA bookkeeping (no GPM), so a CGA's ``cga_complete`` is not modelled. Every
        GPC CGA takes one credit at its commit, including each GPC CGA of a GPU CGA (level GPU
        Pass II); PLAIN and GPU_FLAT take none. A grid that waits for credits therefore waits
        until every placed CTA has completed, and then the snapshot is ``empty``, so a unit
        that fails on it ends in NEVER_FITS."""
        for _ in range(min(n, len(self.placed))):
            sm, shape = self.placed.popleft()
            self.t.complete(sm, shape)
        if not self.placed:
            self.t.credit = [self.p.credit_reset(g) for g in range(self.p.N_GPC)]


def grid_item(p, cmd):
    f = cmd_fields(p)
    word = f.pack(**{n: getattr(cmd, n) for n in f.names})
    u = cmd.unit_grid
    word |= u[0] << f.width
    word |= u[1] << (f.width + p.GX_W)
    word |= u[2] << (f.width + p.GX_W + p.GY_W)
    return word


async def run_closed_loop(dut, p, caps, grids, release_n, ready_prob, rng, one_cta=False,
                          log=None):
    """Drive the RTL with the tracker model; return (beats, fails, results, cycles, the beat
    monitor). ``one_cta``: every commit must be one CTA on one SM (the legacy baseline).
    ``log``: a list that receives (cycle, event) for every ``attempt`` (snapshot), ``fail``,
    ``result`` and LAUNCH beat write (``commit``) cycle, counted from the first cycle."""
    mach = Machine(p, caps)
    dut.tr_ok_single.value = 1          # the trace unit (in wd_top) always has room here
    if hasattr(dut, "tr_ok_batch"):
        dut.tr_ok_batch.value = 1
    drv = StreamDriver(dut, "grid", dut.clk, gap_prob=0.0, rng=rng)
    mon = StreamMonitor(dut, "beat", dut.clk, raster_beat_fields(p), ready_prob=ready_prob,
                        rng=rng)
    res = StreamMonitor(dut, "result", dut.clk, ready_prob=1.0, rng=rng)
    rules = StreamProtocolChecker(dut, "beat", dut.clk)
    for cmd in grids:
        drv.append(grid_item(p, cmd))
    head = deque(grids)
    dirty, fails, cycles = 1, 0, 0
    waited = False
    while len(res.transfers) < len(grids):
        cycles += 1
        assert cycles < 200_000, "the launcher did not finish"
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
            if log is not None:
                log.append((cycles, "attempt"))
        if read_int(dut.fail):
            fails += 1
            if log is not None:
                log.append((cycles, "fail"))
        if read_int(dut.commit):
            if log is not None:
                log.append((cycles, "commit"))
            a = read_int(dut.commit_a)
            ks = [(a >> (s * p.CNT_W)) & ((1 << p.CNT_W) - 1) for s in range(p.N_SM)]
            if one_cta:
                assert sorted(ks)[-2:] == [0, 1] or (p.N_SM == 1 and ks == [1]), \
                    f"commit_a is not one CTA on one SM: {ks}"
            for s, k in enumerate(ks):
                if k:
                    mach.t.commit(s, k, head[0].shape)
        dec = read_int(dut.credit_dec)
        for g in range(p.N_GPC):
            if (dec >> g) & 1:
                mach.t.commit_credit(g)
        if read_int(dut.result__valid) and read_int(dut.result__ready):
            if log is not None:
                log.append((cycles, "result"))
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
    # drain: beats held by back-pressure may still be waiting after the last result; stop
    # after 8 cycles with no beat offered
    idle = 0
    for _ in range(10_000):
        await RisingEdge(dut.clk)
        await ReadOnly()
        idle = 0 if read_int(dut.beat__valid) else idle + 1
        if idle >= 8:
            break
    await RisingEdge(dut.clk)
    rules.check()
    for t in (drv, mon, res, rules):      # the next closed loop on this DUT brings its own
        t.stop()
    beats = [beat_key({k: t.fields[k] for k in BEAT_KEYS}) for t in mon.transfers]
    results = []
    for t in res.transfers:
        v = t.value
        results.append((v & ((1 << p.GRID_ID_W) - 1), (v >> p.GRID_ID_W) & 0xF,
                        v >> (p.GRID_ID_W + 4)))
    return beats, fails, results, cycles, mon


def random_case(rng, p, levels=(Level.PLAIN, Level.GPC)):
    """Random capacities and 2..5 grids of ``levels``: PLAIN, level-GPC (LB, MC), level-GPU
    (LB, MC; 1..3 × 1..2 GPC CGAs of 1..4 CTAs) and GPU_FLAT (1..24 CTAs); in half the cases
    a CGA larger than any GPC at the end (waits, then NEVER_FITS on the emptied machine). The
    default levels are the legacy baseline's (its stimulus stays as it was for a seed)."""
    caps = {}
    for sm in range(p.N_SM):
        if rng.random() < 0.3:
            caps[sm] = dict(slot_cap=rng.randint(0, p.CTA_SLOTS), warp_cap=rng.randint(1, p.WARP_CAP))
        if rng.random() < 0.1:
            caps.setdefault(sm, {})["enable"] = 0
    grids = []
    for k in range(rng.randint(2, 5)):
        level = rng.choice(tuple(levels))
        warps = rng.randint(1, 16)
        if level == Level.PLAIN:
            grids.append(Command(grid_id=k, level=level, grid_x=rng.randint(1, 30),
                                 grid_y=rng.randint(1, 3), grid_z=rng.randint(1, 2),
                                 warps=warps, regs_g=rng.randint(0, 40), smem_g=rng.randint(0, 200)))
        elif level == Level.GPC:
            inner = (rng.randint(1, 4), rng.randint(1, 2), 1)
            units = (rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 2))
            grids.append(Command(grid_id=k, level=level, mode=rng.randrange(2),
                                 grid_x=units[0] * inner[0], grid_y=units[1] * inner[1],
                                 grid_z=units[2], in_x=inner[0], in_y=inner[1], warps=warps,
                                 regs_g=rng.randint(0, 40), smem_g=rng.randint(0, 200)))
        elif level == Level.GPU:
            inner = rng.choice(((1, 1), (2, 1), (3, 1), (4, 1), (1, 2), (2, 2), (1, 4)))
            outer = (rng.randint(1, 3), rng.randint(1, 2))
            units = (rng.randint(1, 2), rng.randint(1, 2), 1)
            grids.append(Command(grid_id=k, level=level, mode=rng.randrange(2),
                                 grid_x=units[0] * outer[0] * inner[0],
                                 grid_y=units[1] * outer[1] * inner[1], grid_z=units[2],
                                 in_x=inner[0], in_y=inner[1], out_x=outer[0], out_y=outer[1],
                                 warps=warps, regs_g=rng.randint(0, 40),
                                 smem_g=rng.randint(0, 200)))
        else:                                                       # GPU_FLAT
            inner = (rng.randint(1, 8), rng.randint(1, 3), 1)
            units = (rng.randint(1, 3), rng.randint(1, 2), 1)
            grids.append(Command(grid_id=k, level=level, grid_x=units[0] * inner[0],
                                 grid_y=units[1] * inner[1], grid_z=units[2], in_x=inner[0],
                                 in_y=inner[1], warps=warps, regs_g=rng.randint(0, 40),
                                 smem_g=rng.randint(0, 200)))
    if rng.random() < 0.5:          # a CGA larger than any GPC: waits, then NEVER_FITS
        grids.append(Command(grid_id=len(grids), level=Level.GPC, mode=rng.randrange(2),
                             grid_x=63, grid_y=8, in_x=63, in_y=8, warps=1))
    return caps, grids


def golden_grids(p, caps, grids, release_n, make_step):
    """The golden side of the closed loop: ``make_step(tracker)`` gives ``step(run)`` ->
    (outcome, beats, fail) for one golden decision (a legacy cycle or a session). Every wait
    completes the same CTAs as the RTL side (``Machine.release``). Returns the beat keys, the
    FAIL count, the results and the number of steps."""
    mach = Machine(p, caps)
    step = make_step(mach.t)
    beats, fails, results, steps = [], 0, [], 0
    for cmd in grids:
        run = GridRun.start(cmd)
        for _ in range(100_000):
            outcome, new, fail = step(run)
            steps += 1
            beats += [golden_key(p, b) for b in new]
            fails += int(fail)
            if outcome == MORE:
                continue
            if outcome == DONE:
                results.append((cmd.grid_id, 0, 0))
                break
            if outcome == NEVER_FITS:
                results.append((cmd.grid_id, 5, run.launched))
                break
            mach.release(release_n)                       # WAIT_SLOTS / WAIT_CGA_FIT
        else:
            raise AssertionError(f"the golden run did not finish grid {cmd.grid_id}")
    return beats, fails, results, steps
