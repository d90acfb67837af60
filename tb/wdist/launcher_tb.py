"""cocotb testbench of the shadow session controller ``Launcher`` (hw/wdist/launcher.py) against
golden ``Launcher.run_session`` (G-SESS-PLAIN, G-SESS-GPC, G-A5, G-EMIT), closed loop around a
golden ``ResourceTracker`` (``tb.wdist.launch_loop``): the golden runs one session after another
on its own tracker, with the same completions on every wait. Every beat (WD-V7: all fields but
``cga_id``), the FAIL events (WD-F14) and the results (NEVER_FITS with ``info``, WD-E5) must
agree.

- ``random_grids``: random PLAIN and level-GPC (LB and MC) grids on random capacities.
- ``plain_fill``: the WD-P1 grid shape on this build (free 8 per SM, a grid that fills the
  machine): cycles from the grid's acceptance to its last beat.
- ``cga_fill``: WD-P3/P6 — 8-CTA GPC CGAs filling the machine, LB and MC: CGAs per step and
  cycles.
"""

import cocotb

from golden.wdist.formats import Command, Level, Mode
from golden.wdist.params import WdistParams
from golden.wdist.session import Launcher as GoldenLauncher
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.wdist.launch_loop import golden_grids, random_case, run_closed_loop

BENCH_SHAPE = dict(warps=8, regs_g=32, smem_g=114)       # §3.5: free 8 per empty SM


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


async def compare(dut, p, caps, grids, release_n, ready_prob, rng):
    want_beats, want_fails, want_results, sessions = golden_run(p, caps, grids, release_n)
    beats, fails, results, cycles, mon = await run_closed_loop(
        dut, p, caps, grids, release_n, ready_prob, rng)
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
    caps, grids = random_case(rng, p)
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
    dut._log.info("plain fill: %d CTAs, %d beats from the GRID beat to the last beat in %d "
                  "cycles", n, len(mon.transfers), span)


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
        dut._log.info("cga fill %s: %d CGAs in %d sessions, %d cycles from the GRID beat to "
                      "the last beat", mode.name, units, sessions, span)
