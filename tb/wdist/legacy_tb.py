"""cocotb testbench of the legacy baseline ``Legacy`` (hw/wdist/legacy.py) against golden
``Legacy`` (G-LEGACY), closed loop around a golden ``ResourceTracker``.

The testbench plays the resource tracker (``tb.wdist.launch_loop``); the golden ``Legacy`` runs
the same grids on its own tracker, with the same completions on every wait. The LAUNCH_ID beats
(every field), the FAIL events and the results (NEVER_FITS with ``info``) must agree.

- ``random_grids``: random PLAIN and level-GPC (LB and MC) grids on random capacities (waits
  when a grid does not fit), and in half the runs a CGA larger than any GPC at the end (FAIL
  events while CTAs remain, then NEVER_FITS once the machine is empty).
- ``plain_fill_rate``: WD-P8 — a plain grid filling the machine from empty, all ready: one
  LAUNCH_ID beat per cycle, T = placement cycles ≤ CTAs + 16.
"""

import cocotb

from golden.wdist.formats import Command, Level
from golden.wdist.legacy import Legacy as GoldenLegacy
from golden.wdist.params import WdistParams
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.wdist.launch_loop import golden_grids, random_case, run_closed_loop


def build_params():
    return WdistParams(DISTRIBUTOR="legacy", **env.params())


def golden_run(p, caps, grids, release_n):
    """Golden G-LEGACY, one cycle per step: (beats, FAIL count, results)."""
    def make_step(tracker):
        leg = GoldenLegacy(p, tracker)

        def step(run):
            outcome, events = leg.cycle(run)
            return (outcome, [x for k, x in events if k == "beat"],
                    any(k == "trace" for k, _ in events))
        return step
    return golden_grids(p, caps, grids, release_n, make_step)[:3]


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
        dut, p, caps, grids, release_n, rng.choice((0.5, 1.0)), rng, one_cta=True)
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
    beats, _, results, cycles, mon = await run_closed_loop(dut, p, {}, [cmd], 1, 1.0, rng,
                                                            one_cta=True)
    assert results == want_results and beats == want_beats
    first = mon.transfers[1].cycle                       # after the GRID beat
    last = mon.transfers[-1].cycle
    span = last - first + 1
    dut._log.info("WD-P8: %d CTAs placed in %d cycles (first LAUNCH_ID to last), %d cycles "
                  "from the grid to the last beat", n, span, last - mon.transfers[0].cycle + 1)
    assert span == n, f"{n} CTAs took {span} cycles: not one per cycle"
    assert last - mon.transfers[0].cycle + 1 <= n + 16
