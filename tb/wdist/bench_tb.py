"""cocotb benchmark of ``wd_top`` (spec wdist.md §3.5): cycle counts from RTL simulation.

``bench`` plays the scenarios of ``WDIST_BENCH`` (a JSON list of ``{"name", "cmd": Command
fields}``) on one build, each from reset on an empty machine with default capacities: the SM
stubs never complete (``hold``) and every ``ready`` is high. For each scenario it records, in
cycles relative to the ``cmd`` transfer: T (the transfer of the grid's last ``cta_id`` record),
every LAUNCH beat (cycle, gpc, cnt, seq) and every SM's ``cta_id`` cycles, from which the
adapter (``sim.blocks.wdist.bench``) derives the WD-P figures. The recorded port streams go
through the WD-V3..V6 and V8 checkers (``check_units``, ``check_raster``); the result
(``GPUBLOCKS_RESULT``) carries their verdict and the launched ctaids for the golden comparison.
"""

import json
import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.wdist.formats import Command, Kind
from golden.wdist.invariants import check_raster, check_units
from golden.wdist.stubs import SmStubs
from tb.common import env
from tb.common.clock import reset
from tb.wdist.run_tb import add_trace_port
from tb.wdist.top_tb import PortRecord, TopBench, build_params

LIMIT = 20_000        # cycles per scenario (watchdog)


class QueryProbe:
    """WD-P4 on the benchmark build, which has no trace port: the launcher's mock-GPC queries
    (``q`` transfer to ``resp.valid``) and global fill queries (``fill.i`` transfer to
    ``fill.o.valid``), read through Verilator's public signals. The trace's ``lat`` counts the
    same span. Absent on the legacy build."""

    def __init__(self, dut, p):
        self.dut, self.p = dut, p
        try:
            lau = dut.launcher
            self.ports = [(lau.fill.i__valid, lau.fill.i__ready, lau.fill.o__valid, "global")]
            for g in range(p.N_GPC):
                mg = getattr(lau, f"mock_gpc{g}")
                self.ports.append((mg.q__valid, mg.q__ready, mg.resp__valid, "gpc"))
        except AttributeError:
            self.ports = []
        self.lat = {"global": [], "gpc": []}
        self._task = cocotb.start_soon(self._watch()) if self.ports else None

    async def _watch(self):
        issued = [None] * len(self.ports)
        t = 0
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            t += 1
            for k, (iv, ir, ov, kind) in enumerate(self.ports):
                if issued[k] is not None and int(ov.value):
                    self.lat[kind].append(t - issued[k])
                    issued[k] = None
                if int(iv.value) and int(ir.value):
                    issued[k] = t

    def take(self):
        """The latencies since the last call: {kind: max} (None when there were none)."""
        out = {k: max(v) if v else None for k, v in self.lat.items()}
        self.lat = {"global": [], "gpc": []}
        return out


async def _play(tb, cmd, n_ctas):
    """Offer ``cmd``; cycle until ``n_ctas`` records are out and a few cycles more."""
    rec = tb.rec
    tb.cmds.append(cmd)
    start = tb.t
    while tb.t - start < LIMIT:
        await tb.cycle()
        if not tb.cmds and sum(len(x) for x in rec.cta_ids) >= n_ctas:
            break
    for _ in range(16):
        await tb.cycle()
    t0 = rec.commands[-1][0] if rec.commands else None
    beats = [[t - t0, b.gpc, list(b.cnt), b.seq, b.end_of_cga] for t, b in rec.bcast
             if b.kind != Kind.GRID]
    grid_beat = next((t - t0 for t, b in rec.bcast if b.kind == Kind.GRID), None)
    cta = [[t - t0 for t, _ in rec.cta_ids[s]] for s in range(tb.p.N_SM)]
    last = max((c[-1] for c in cta if c), default=None)
    try:
        check_units(rec)
        check_raster(rec)
        inv = "passed"
    except AssertionError as exc:
        inv = str(exc) or "AssertionError"
    ids = sorted(list(r.ctaid) for s in range(tb.p.N_SM) for _, r in rec.cta_ids[s])
    return {"T": last, "ctas": sum(len(c) for c in cta), "cmd_cycle": t0,
            "grid_beat": grid_beat, "beats": beats, "cta_cycles": cta, "invariants": inv,
            "ctaids": ids, "errs": [[e.code, e.grid_id, e.info] for _, e in rec.errs],
            "stalls_seen": sorted(rec.stalls)}


@cocotb.test()
async def bench(dut):
    p = build_params()
    rng = env.rng(0)
    scenarios = json.loads(os.environ["WDIST_BENCH"])
    out = {}
    for k, sc in enumerate(scenarios):
        cmd = Command(**sc["cmd"])
        n = cmd.grid_x * cmd.grid_y * cmd.grid_z
        stubs = SmStubs(p, {cmd.grid_id: cmd.shape}, hold=True)
        if k == 0:
            tb = TopBench(dut, p, rng, ready_prob=1.0, stubs=stubs)
            add_trace_port(tb, dut)
            if hasattr(dut, "trace__ready"):
                dut.trace__ready.value = 1
            await tb.start()
            probe = QueryProbe(dut, p)
        else:
            for name in ("cmd", "cfg", "cta_complete", "dsmem_flush_done"):
                getattr(dut, f"{name}__valid").value = 0
            await reset(dut)
            tb.stubs, tb.rec = stubs, PortRecord(p, {})
        probe.take()
        out[sc["name"]] = res = await _play(tb, cmd, n)
        res["query_latency"] = probe.take()
        dut._log.info(f"bench {sc['name']} ({p.DISTRIBUTOR}): T = {res['T']} cycles, "
                      f"{res['ctas']} of {n} CTAs, {len(res['beats'])} beats, "
                      f"invariants {res['invariants']}")
    env.write_result(out)
