"""cocotb testbench of ``gpublocks run wdist``: a user's stimulus played on ``wd_top``.

``run_stimulus`` reads the normalized stimulus (``GPUBLOCKS_STIM``, parsed by
``golden.wdist.stimulus.parse``), writes the ``cfg`` beats from reset, offers the grids in order
on ``cmd`` (each from its ``at`` cycle, none before the last ``cfg`` write), runs golden ``SmStubs``
(``sm``: latency, hold, flush latency) against the ``cta_id`` / ``flush_req`` streams and holds
every output's ``ready`` high with probability ``ready`` (random from the run's seed). It ends
when every grid is taken and the block is quiescent for a few cycles (with ``sm.hold``: when
nothing moved on any output for ``HOLD_IDLE`` cycles), or at ``max_cycles``. Then it reads the
end state over ``dbg``, runs the invariant checkers (``golden.wdist.stimulus.check_invariants``:
``golden.wdist.invariants`` with waiting grids treated as aborted after their launched units) on
the recorded port streams and writes ``golden.wdist.stimulus.outcome`` of the RTL record
(``GPUBLOCKS_RESULT``) for the flow to compare with the golden model.
"""

from collections import deque

import cocotb

from golden.wdist.formats import Shape
from golden.wdist.stimulus import check_invariants, outcome, parse
from golden.wdist.stubs import SmStubs
from tb.common import env
from tb.wdist.top_tb import TopBench, _Port

HOLD_IDLE = 300       # cycles without any output transfer that end a run with holding stubs


def cfg_beat(p, w):
    """A full ``cfg`` payload: omitted capacities at the parameter maxima, enable 1."""
    full = dict(sm=w["sm"], enable=1, regs_cap_g=p.REG_CAP_G, smem_cap_g=p.SMEM_CAP_G,
                warp_cap=p.WARP_CAP, slot_cap=p.CTA_SLOTS)
    full.update(w)
    return full


def add_trace_port(tb, dut):
    """Take the ``trace`` stream (WD-I11) with the other outputs when the build has one."""
    if hasattr(dut, "trace__ready") and all(port.name != "trace" for port in tb.out_ports):
        tb.out_ports.append(_Port(dut, "trace"))


def _transfers(rec):
    return (len(rec.bcast) + len(rec.errs) + len(rec.flush_reqs) + len(rec.cga_completes)
            + sum(len(x) for x in rec.cta_ids))


@cocotb.test()
async def run_stimulus(dut):
    st = parse(env.stimulus())
    p = st.params
    rng = env.rng(0)
    shapes = {}
    for c in st.commands:
        shapes.setdefault(c.grid_id, c.shape)
    stubs = SmStubs(p, shapes, **st.sm)
    tb = TopBench(dut, p, rng, ready_prob=st.ready, stubs=stubs)
    add_trace_port(tb, dut)
    if hasattr(dut, "trace__ready"):
        dut.trace__ready.value = 1
    await tb.start()
    rec = tb.rec
    for w in st.cfg:                       # the golden model applies them the same way
        rec.tracker.cfg_write(**w)
        tb.cfgs.append(cfg_beat(p, w))
    t0 = tb.t
    pending = deque(zip(st.at, st.commands))
    hold = st.sm.get("hold", False)
    quiet, moved, timeout = 0, tb.t, True
    while tb.t - t0 < st.max_cycles:
        rel = tb.t - t0                    # as the golden driver: `at` counts from reset,
        while pending and pending[0][0] <= rel and rel >= len(st.cfg):   # after the cfg writes
            tb.cmds.append(pending.popleft()[1])
        n = _transfers(rec)
        await tb.cycle()
        if _transfers(rec) != n:
            moved = tb.t
        taken = not pending and not tb.cmds and not tb.cfgs
        if hold:
            if taken and not stubs.busy() and tb.t - moved >= HOLD_IDLE:
                timeout = False
                break
            continue
        quiet = quiet + 1 if taken and not stubs.busy() and tb.status["quiescent"] else 0
        if quiet >= 4:
            timeout = False
            break
    rec.quiet = bool(tb.status["quiescent"])
    rec.dbg_values = await tb.snapshot()
    for s in range(p.N_SM):
        rec.tracker.used[s] = Shape(*[rec.dbg_values[(sel, s)] for sel in range(4)])
    inv = check_invariants(rec, rec.quiet)
    result = outcome(rec, rec.quiet, inv, cycles=tb.t - t0, timeout=timeout, fail_cnt=rec.fails,
                     stalls_seen=sorted(rec.stalls))
    env.write_result(result)
    dut._log.info(f"run_stimulus: {len(st.commands)} grids, {result['beats']} beats, "
                  f"{sum(g['ctas'] for g in result['grids'].values())} CTAs, {tb.t - t0} cycles, "
                  f"invariants {inv}")
