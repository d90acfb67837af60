"""cocotb testbench of the shadow session controller ``Launcher`` (hw/wdist/launcher.py) against
golden ``Launcher.run_session`` (G-SESS-PLAIN, G-SESS-FLAT, G-SESS-GPC, G-SESS-GPU, G-A5,
G-EMIT), closed loop around a golden ``ResourceTracker`` (``tb.wdist.launch_loop``): the golden
runs one session after another on its own tracker, with the same completions on every wait.
Every beat (WD-V7: all fields but ``cga_id``), the FAIL events (WD-F14) and the results
(NEVER_FITS with ``info``, WD-E5) must agree.

- ``random_grids``: random PLAIN, level-GPC, level-GPU (LB and MC) and GPU_FLAT grids on random
  capacities.
- ``gpu_wait_never_fits``: a plain grid fills the machine, then GPU (LB, MC) and GPU_FLAT units
  FAIL (Pass I, Σf < isz) and wait (WAIT_CGA_FIT) until completions make room; then a GPU CGA
  needing more credits than the machine has (on the 2 × 4 build), a GPU CGA and a GPU_FLAT CGA
  larger than the machine: FAIL events, then NEVER_FITS once the machine is empty.
- ``plain_fill``: the WD-P1 grid shape on this build (free 8 per SM, a grid that fills the
  machine): cycles from the grid's acceptance to its last beat.
- ``cga_fill``: WD-P3/P6 — 8-CTA GPC CGAs filling the machine, LB and MC: CGAs per step and
  cycles.
- ``gpu_fill``: WD-P10 — the Fig 12 shapes E1(4) (GPU CGAs of 3 × 3 GPC CGAs of 6 CTAs; two
  of them, as four need more credits than the machine has) and E1(3) (4 GPU_FLAT CGAs of 54
  CTAs) on the empty machine: cycles per GPU CGA (snapshot to the next snapshot) against the
  WD-P10 bound from the golden Pass I rounds and Pass II steps.
"""

import cocotb

from golden.wdist.formats import Command, Kind, Level, Mode, Pass, TraceKind
from golden.wdist.params import WdistParams
from golden.wdist.session import DONE, MORE, GridRun, Launcher as GoldenLauncher
from golden.wdist.tracker import ResourceTracker
from hw.wdist.engine import latency_bound
from sim.blocks.wdist import bursts
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.wdist.launch_loop import golden_grids, random_case, run_closed_loop

BENCH_SHAPE = dict(warps=8, regs_g=32, smem_g=114)       # §3.5: free 8 per empty SM
LEVELS = (Level.PLAIN, Level.GPC, Level.GPU, Level.GPU_FLAT)


def build_params():
    return WdistParams(**env.params())


def golden_run(p, caps, grids, release_n):
    """Golden sessions, one per step: (beats, FAIL count, results, sessions)."""
    def make_step(tracker):
        leg = GoldenLauncher(p, tracker)

        def step(run):
            t = tracker
            res = leg.run_session(run, t.free_vector(run.cmd.shape), list(t.credit), t.empty())
            return res.outcome, res.beats, res.fail
        return step
    return golden_grids(p, caps, grids, release_n, make_step)


async def start(dut):
    start_clock(dut)
    dut.free.value = 0
    dut.credit.value = 0
    dut.empty.value = 1
    dut.dirty.value = 1
    await reset(dut)


async def compare(dut, p, caps, grids, release_n, ready_prob, rng, log=None):
    want_beats, want_fails, want_results, sessions = golden_run(p, caps, grids, release_n)
    beats, fails, results, cycles, mon = await run_closed_loop(
        dut, p, caps, grids, release_n, ready_prob, rng, log=log)
    assert results == want_results, f"results {results} != golden {want_results}"
    assert fails == want_fails, f"FAIL events {fails} != golden {want_fails}"
    for k, (got, want) in enumerate(zip(beats, want_beats)):
        assert got == want, f"beat {k}: {got} != golden {want}"
    assert len(beats) == len(want_beats), f"{len(beats)} beats, golden {len(want_beats)}"
    return beats, fails, results, cycles, mon, sessions


@cocotb.test()
async def random_grids(dut):
    await start(dut)
    p = build_params()
    rng = env.rng(0)
    caps, grids = random_case(rng, p, levels=LEVELS)
    beats, fails, results, cycles, _, sessions = await compare(
        dut, p, caps, grids, rng.randint(1, 4), rng.choice((0.5, 1.0)), rng)
    dut._log.info("launcher random_grids: %d grids, %d sessions, %d beats, %d FAIL events, "
                  "results %s, %d cycles (seed %d)", len(grids), sessions, len(beats), fails,
                  results, cycles, env.seed())


@cocotb.test()
async def plain_fill(dut):
    """The WD-P1 shape: a plain grid of 8 CTAs per SM on the empty machine, all ready."""
    await start(dut)
    p = build_params()
    n = 8 * p.N_SM
    cmd = Command(grid_id=1, level=Level.PLAIN, grid_x=n, **BENCH_SHAPE)
    _, _, _, _, mon, _ = await compare(dut, p, {}, [cmd], 1, 1.0, env.rng(1))
    span = mon.transfers[-1].cycle - mon.transfers[0].cycle + 1
    chunks = {}
    for t in mon.transfers:
        if t.fields["kind"] == Kind.LAUNCH:
            chunks.setdefault(t.fields["seq"], []).append(t.cycle)
    for seq, cyc in chunks.items():       # WD-P7: a chunk's GPC shares on consecutive cycles
        assert cyc == list(range(cyc[0], cyc[0] + len(cyc))), f"chunk seq {seq}: beats at {cyc}"
    dut._log.info("plain fill: %d CTAs, %d beats from the GRID beat to the last beat in %d "
                  "cycles; beats per chunk %s", n, len(mon.transfers), span,
                  [len(c) for c in chunks.values()])


def launch_bursts(transfers):
    """Sizes of the runs of LAUNCH beats on consecutive cycles."""
    return bursts([t.cycle for t in transfers if t.fields["kind"] == Kind.LAUNCH])


@cocotb.test()
async def cga_fill(dut):
    """WD-P3 / WD-P6: 8-CTA GPC CGAs filling the empty machine, LB then MC (each from reset
    state of the machine model), all ready."""
    await start(dut)
    p = build_params()
    units = p.N_SM
    for mode in (Mode.LB, Mode.MC):
        await reset(dut)                                # seq 0 again, as in the golden run
        cmd = Command(grid_id=int(mode), level=Level.GPC, mode=mode, grid_x=8 * units,
                      in_x=8, **BENCH_SHAPE)
        beats, _, _, _, mon, sessions = await compare(dut, p, {}, [cmd], 1, 1.0,
                                                      env.rng(2 + int(mode)))
        span = mon.transfers[-1].cycle - mon.transfers[0].cycle + 1
        bursts = launch_bursts(mon.transfers)
        dut._log.info("cga fill %s: %d CGAs in %d sessions, %d cycles from the GRID beat to "
                      "the last beat; LAUNCH beats per burst %s", mode.name, units, sessions,
                      span, bursts)
        # WD-P6: every GPC ties from empty, so each step places N_GPC CGAs (one beat each, on
        # consecutive cycles: WD-P7); only the last step may have fewer left
        assert sum(bursts) == units, bursts
        assert all(b == p.N_GPC for b in bursts[:-1]) and bursts[-1] <= p.N_GPC, bursts


@cocotb.test()
async def gpu_wait_never_fits(dut):
    """GPU and GPU_FLAT units that wait (WAIT_CGA_FIT) and that never fit (NEVER_FITS)."""
    await start(dut)
    p = build_params()
    rng = env.rng(4)
    fill = 8 * p.N_SM                                   # free 8 per SM: the machine is full
    grids = [Command(grid_id=0, level=Level.PLAIN, grid_x=fill, **BENCH_SHAPE),
             Command(grid_id=1, level=Level.GPU, mode=Mode.LB, grid_x=4, grid_y=2, in_x=2,
                     in_y=1, out_x=2, out_y=2, **BENCH_SHAPE),
             Command(grid_id=2, level=Level.PLAIN, grid_x=fill, **BENCH_SHAPE),
             Command(grid_id=3, level=Level.GPU, mode=Mode.MC, grid_x=6, grid_y=2, in_x=3,
                     out_x=2, out_y=2, **BENCH_SHAPE),
             Command(grid_id=4, level=Level.PLAIN, grid_x=fill, **BENCH_SHAPE),
             Command(grid_id=5, level=Level.GPU_FLAT, grid_x=12, grid_y=2, in_x=6, in_y=2,
                     **BENCH_SHAPE),
             # 16 GPC CGAs of 1 CTA: more than the 2 x 4 build's 8 credits (fits the 4 x 8)
             Command(grid_id=6, level=Level.GPU, grid_x=16, out_x=16, **BENCH_SHAPE),
             # larger than any GPC, then larger than the machine: NEVER_FITS
             Command(grid_id=7, level=Level.GPU, mode=Mode.LB, grid_x=63 * 2, grid_y=8,
                     in_x=63, in_y=8, out_x=2, **BENCH_SHAPE),
             Command(grid_id=8, level=Level.GPU_FLAT, grid_x=63, grid_y=8, in_x=63, in_y=8,
                     **BENCH_SHAPE)]
    log = []
    beats, fails, results, cycles, _, sessions = await compare(
        dut, p, {}, grids, rng.randint(4, 16), rng.choice((0.5, 1.0)), rng, log=log)
    codes = {gid: code for gid, code, _ in results}
    assert codes[7] == 5 and codes[8] == 5, f"results {results}"
    assert all(codes[g] == 0 for g in range(6)), f"results {results}"
    assert fails >= 5, f"only {fails} FAIL events"
    dut._log.info("gpu_wait_never_fits: %d sessions, %d beats, %d FAIL events, results %s, "
                  "%d cycles (seed %d)", sessions, len(beats), fails, results, cycles, env.seed())


def _golden_rounds_steps(p, cmd):
    """Pass I rounds + Pass II steps of each GPU CGA session of ``cmd`` on the empty machine."""
    t = ResourceTracker(p)
    gl = GoldenLauncher(p, t)
    run = GridRun.start(cmd)
    counts = []
    while run.remaining:
        res = gl.run_session(run, t.free_vector(cmd.shape), list(t.credit), t.empty())
        assert res.outcome in (DONE, MORE), f"{cmd} does not fit the empty machine"
        queries = [r for r in res.trace if r.kind == TraceKind.QUERY]
        counts.append(sum(1 for r in queries if r.pass_ in (Pass.PASS1, Pass.PASS2)) // p.N_GPC)
    return counts


@cocotb.test()
async def gpu_fill(dut):
    """WD-P10: E1(4) and E1(3) of WD-GV1 on the empty machine, all ready."""
    await start(dut)
    p = build_params()
    for level in (Level.GPU, Level.GPU_FLAT):
        await reset(dut)                                # seq 0 again, as in the golden run
        if level == Level.GPU:
            # two of E1(4)'s four GPU CGAs: all four take 36 GPC CGA credits, the machine has
            # 8 per GPC (CGA_CREDIT_PER_SM = 1)
            cmd = Command(grid_id=1, level=level, grid_x=18, grid_y=6, in_x=3, in_y=2,
                          out_x=3, out_y=3, **BENCH_SHAPE)
        else:
            cmd = Command(grid_id=2, level=level, grid_x=18, grid_y=12, in_x=9, in_y=6,
                          **BENCH_SHAPE)
        log = []
        beats, _, results, _, _, sessions = await compare(dut, p, {}, [cmd], 1, 1.0,
                                                          env.rng(5 + int(level)), log=log)
        assert results == [(cmd.grid_id, 0, 0)], results
        snaps = [c for c, e in log if e == "attempt"]
        end = [c for c, e in log if e == "result"][0]
        spans = [b - a for a, b in zip(snaps, snaps[1:] + [end])]
        if level == Level.GPU:
            rs = _golden_rounds_steps(p, cmd)
            bound = [k * (latency_bound(p.S_MAX, p.FREE_W, cmd.mode) + 2) + 4 for k in rs]
            dut._log.info("gpu fill E1(4): %d GPU CGAs, %d beats; cycles per GPU CGA (snapshot "
                          "to next snapshot) %s, Pass I rounds + Pass II steps %s, WD-P10 bound "
                          "%s", len(snaps), len(beats), spans, rs, bound)
            assert len(spans) == len(bound) and all(a <= b for a, b in zip(spans, bound)), \
                f"WD-P10: cycles per GPU CGA {spans} above the bound {bound}"
        else:
            dut._log.info("gpu fill E1(3) GPU_FLAT: %d CGAs, %d beats; cycles per CGA %s",
                          len(snaps), len(beats), spans)
