"""cocotb testbench of ``wd_top`` (hw/wdist/top.py): the whole distributor with SM stubs.

The SM stubs are golden ``SmStubs`` (§2): they hold each CTA the rasterizers hand them, complete
it after a random latency and answer every ``flush_req`` with one ``dsmem_flush_done`` per CTA.
Every output stream sees random back-pressure (WD-V15). The port streams are recorded in the
attributes ``golden.wdist.invariants`` reads, and its checkers run on them at the end: WD-V3
(all-or-nothing units), V4 (no interleave), V5, V6, V8 (every ``cta_id`` record equals G-RAST
for the observed ``bcast``, each grid's IDs a permutation), V1 and V10 (used counters rebuilt
from beats and completions stay within capacity; ``dbg`` agrees at the end), V9 (G-GPM IDs, one
``flush_req`` and one ``cga_complete`` per GPC CGA) and V10 quiescence.

- ``random_top``: random capacities and grids of every level the launcher places (PLAIN, GPC,
  and for the shadow launcher GPU and GPU_FLAT; ``tb.wdist.launch_loop``), SM stubs completing
  after random latency: every grid finishes within a watchdog (WD-V11) and the
  NEVER_FITS errors are those a golden ``WdistModel`` run of the same commands reports.
- ``errors``: one directed case per WD-E code (WD-V13), each followed by a normal command;
  ``dbg`` shows no state change; ``err_lost`` counts protocol errors that find the queue full.
"""

from collections import deque
from dataclasses import replace

import cocotb
from amaranth.utils import ceil_log2
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.fields import Fields
from golden.wdist.driver import run as golden_run
from golden.wdist.emit import pad
from golden.wdist.formats import (Beat, Command, CtaRecord, ErrBeat, Kind, Level, Mode, Shape,
                                  Stall, TraceKind, TraceRec, bcast_fields, cfg_fields,
                                  cga_complete_fields, cmd_fields, cta_id_fields, err_fields,
                                  flush_req_fields, trace_fields)
from golden.wdist.gpm import CgaComplete, FlushReq
from golden.wdist.invariants import check_all
from golden.wdist.session import GridRun
from golden.wdist.session import Launcher as GoldenLauncher
from golden.wdist.stubs import SmStubs
from golden.wdist.tracker import ResourceTracker
from hw.wdist.launcher import Launcher
from hw.wdist.legacy import Legacy
from sim.blocks.wdist import wdist_params
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.stream import read_int
from tb.wdist.launch_loop import random_case

DBG_SELS = range(12)


def build_params():
    return wdist_params(**env.params())


def status_fields(p):
    return Fields(("busy", 1), ("quiescent", 1), ("stall", 3), ("fail", 1), ("fail_cnt", 16),
                  ("head_grid_id", p.GRID_ID_W), ("err_lost", 8))


class _Port:
    """A stream port's handles (``<name>__valid`` / ``__ready`` / ``__payload``)."""

    def __init__(self, dut, name):
        self.name = name
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")


class PortRecord:
    """The RTL's port streams, as ``golden.wdist.invariants`` reads a ``WdistModel``; the
    tracker's ``cap`` / ``enable`` from the ``cfg`` writes, its ``used`` and ``quiescent`` /
    ``dbg`` from the RTL at the end."""

    def __init__(self, p, caps):
        self.p = p
        self.caps = dict(caps)
        self.tracker = ResourceTracker(p)
        for sm, cap in caps.items():
            self.tracker.cfg_write(sm, **cap)
        self.bcast, self.completions, self.flush_reqs, self.flush_dones = [], [], [], []
        self.cga_completes, self.errs, self.commands, self.sessions = [], [], [], []
        self.cta_ids = [[] for _ in range(p.N_SM)]
        self.new_records = []
        self.traces = []
        self.snapshot_lags = None         # WD-P9, from check_trace
        self.fails = 0
        self.stalls = set()
        self.dbg_values = {}
        self.quiet = False

    def quiescent(self):
        return self.quiet

    def dbg(self, sel, idx):
        return self.dbg_values[(sel, idx)]


class TopBench:
    """Drives ``wd_top`` one cycle at a time."""

    def __init__(self, dut, p, rng, ready_prob=1.0, stubs=None):
        self.dut, self.p, self.rng = dut, p, rng
        self.ready_prob = ready_prob
        self.f = dict(cmd=cmd_fields(p), cfg=cfg_fields(p), bcast=bcast_fields(p),
                      cta=cta_id_fields(p), fr=flush_req_fields(p), cq=cga_complete_fields(p),
                      err=err_fields(p), status=status_fields(p), trace=trace_fields(p))
        self.stubs = stubs
        self.t = 0
        self.ts0 = 0
        self.cmds = deque()
        self.cfgs = deque()
        self.cc = deque()                 # extra cta_complete / dsmem_flush_done to drive
        self.fd = deque()
        self.rec = None
        self.status = None
        self.hold_err = False
        self.out_ports = [_Port(dut, n) for n in ("bcast", "flush_req", "cga_complete", "err")]
        self.cta_ports = [_Port(dut, f"cta_id_{s}") for s in range(p.N_SM)]
        self.out_ports += self.cta_ports
        self.trace_port = _Port(dut, "trace") if p.TRACE else None
        if self.trace_port:
            self.out_ports.append(self.trace_port)

    def outputs(self):
        return self.out_ports

    async def start(self, caps=None, first=True):
        """Reset (``first``) and write ``caps`` through ``cfg``: every SM, the ones not named
        back to the parameter maxima; a new record."""
        d = self.dut
        if first:
            start_clock(d)
            for name in ("cmd", "cfg", "cta_complete", "dsmem_flush_done", "dbg_req"):
                getattr(d, f"{name}__valid").value = 0
                getattr(d, f"{name}__payload").value = 0
            for name in ("bcast", "flush_req", "cga_complete", "err", "dbg_resp"):
                getattr(d, f"{name}__ready").value = 1
            for s in range(self.p.N_SM):
                getattr(d, f"cta_id_{s}__ready").value = 1
            await reset(d)
            self.ts0 = self.t                   # trace ts 0 is the first cycle after reset
        self.rec = PortRecord(self.p, caps or {})
        for sm in range(self.p.N_SM):
            cap = (caps or {}).get(sm, {})
            full = dict(sm=sm, enable=1, regs_cap_g=self.p.REG_CAP_G,
                        smem_cap_g=self.p.SMEM_CAP_G, warp_cap=self.p.WARP_CAP,
                        slot_cap=self.p.CTA_SLOTS)
            full.update(cap)
            if cap or not first:
                self.cfgs.append(full)
        while self.cfgs:
            await self.cycle()

    def _ready(self, port):
        if self.hold_err and port.name == "err":
            return 0
        return int(self.rng.random() < self.ready_prob)

    async def cycle(self):
        """One clock cycle: drive, sample the transfers at ReadOnly, record, advance."""
        d, p, rec, f = self.dut, self.p, self.rec, self.f
        t = self.t
        rec.new_records = []
        # inputs
        cmd = self.cmds[0] if self.cmds else None
        d.cmd__valid.value = int(cmd is not None)
        if cmd is not None:
            d.cmd__payload.value = f["cmd"].pack(**{n: getattr(cmd, n) for n in f["cmd"].names})
        cfg = self.cfgs.popleft() if self.cfgs else None
        d.cfg__valid.value = int(cfg is not None)
        if cfg is not None:
            d.cfg__payload.value = f["cfg"].pack(**cfg)
        cc, fd = self.stubs.inputs(t) if self.stubs else (None, None)
        if cc is None and self.cc:
            cc = self.cc.popleft()
        if fd is None and self.fd:
            fd = self.fd.popleft()
        d.cta_complete__valid.value = int(cc is not None)
        if cc is not None:
            sm, is_cga, cga_id, shape = cc
            d.cta_complete__payload.value = (
                sm | is_cga << p.SM_ID_W | cga_id << (p.SM_ID_W + 1)
                | shape.regs_g << (p.SM_ID_W + 1 + p.GPC_CGA_ID_W)
                | shape.smem_g << (p.SM_ID_W + 10 + p.GPC_CGA_ID_W)
                | shape.warps << (p.SM_ID_W + 20 + p.GPC_CGA_ID_W))
        d.dsmem_flush_done__valid.value = int(fd is not None)
        if fd is not None:
            d.dsmem_flush_done__payload.value = fd[0] | fd[1] << p.SM_ID_W
        for port in self.outputs():
            port.ready.value = self._ready(port)
        await ReadOnly()
        # transfers of this cycle
        self.status = f["status"].unpack(read_int(d.status))
        if self.status["fail"]:
            rec.fails += 1
        rec.stalls.add(self.status["stall"])
        if cmd is not None and read_int(d.cmd__ready):
            self.cmds.popleft()
            rec.commands.append((t, cmd))
        if cc is not None:                # as driven: the random test drives only valid ones
            rec.completions.append((t, *cc))
        if fd is not None:
            rec.flush_dones.append((t, *fd))
        if read_int(d.bcast__valid) and read_int(d.bcast__ready):
            rec.bcast.append((t, self.beat(f["bcast"].unpack(read_int(d.bcast__payload)))))
        for s, port in enumerate(self.cta_ports):
            if read_int(port.valid) and read_int(port.ready):
                v = f["cta"].unpack(read_int(port.payload))
                r = CtaRecord(v["grid_id"], v["seq"], (v["ctaid_x"], v["ctaid_y"], v["ctaid_z"]),
                              v["is_cga"], v["cga_cta_id"], v["cga_id"])
                rec.cta_ids[s].append((t, r))
                rec.new_records.append((s, r))
        if read_int(d.flush_req__valid) and read_int(d.flush_req__ready):
            v = f["fr"].unpack(read_int(d.flush_req__payload))
            rec.flush_reqs.append((t, FlushReq(v["gpc"], v["cga_id"], v["n_ctas"])))
        if read_int(d.cga_complete__valid) and read_int(d.cga_complete__ready):
            v = f["cq"].unpack(read_int(d.cga_complete__payload))
            rec.cga_completes.append((t, CgaComplete(v["gpc"], v["cga_id"], v["grid_id"],
                                                     v["seq"])))
        if read_int(d.err__valid) and read_int(d.err__ready):
            v = f["err"].unpack(read_int(d.err__payload))
            rec.errs.append((t, ErrBeat(v["code"], v["grid_id"], v["info"])))
        tp = self.trace_port
        if tp and read_int(tp.valid) and read_int(tp.ready):
            v = f["trace"].unpack(read_int(tp.payload))
            rec.traces.append(TraceRec(
                v["kind"], sess=v["sess"], step=v["step"], pass_=v["pass_"], gpc=v["gpc"],
                valid=v["valid"], cause=v["cause"], speed=v["speed"], vec=tuple(v["vec"]),
                credit=v["credit"], empty=v["empty"], best=v["best"], win_mask=v["win_mask"],
                grid_id=v["grid_id"], never_fits=v["never_fits"], ts=v["ts"], lat=v["lat"]))
        if self.stubs:
            self.stubs.observe(t, rec)
        await RisingEdge(d.clk)
        self.t += 1

    def beat(self, v):
        if v["kind"] == Kind.GRID:
            return Beat(Kind.GRID, v["grid_id"], level=v["level"], mode=v["mode"],
                        grid=(v["grid_x"], v["grid_y"], v["grid_z"]),
                        inner=(v["in_x"], v["in_y"], v["in_z"]),
                        outer=(v["out_x"], v["out_y"], v["out_z"]))
        return Beat(v["kind"], v["grid_id"], seq=v["seq"], gpc=v["gpc"], cnt=tuple(v["cnt"]),
                    first_rank=v["first_rank"], is_cga=v["is_cga"], gcga_first=v["gcga_first"],
                    gcga_last=v["gcga_last"], end_of_cga=v["end_of_cga"], cga_id=v["cga_id"],
                    ctaid=(v["ctaid_x"], v["ctaid_y"], v["ctaid_z"]),
                    cga_cta_id=v["cga_cta_id"])

    async def run_until_quiet(self, limit, drained=None):
        """Cycle until every command is taken, the stubs are idle and ``status.quiescent`` (or
        ``drained()``) holds for a few cycles; fail after ``limit`` cycles (WD-V11 watchdog)."""
        quiet = 0
        for _ in range(limit):
            await self.cycle()
            done = drained() if drained else self.status["quiescent"]
            idle = not self.cmds and not (self.stubs and self.stubs.busy())
            quiet = quiet + 1 if done and idle else 0
            if quiet >= 4:
                return
        raise AssertionError(f"watchdog: not quiescent after {limit} cycles "
                             f"(status {self.status}, commands left {len(self.cmds)})")

    async def dbg(self, sel, idx):
        """One WD-I12 request; returns ``data``. No other input is driven and no output taken
        meanwhile (the stubs' due events wait)."""
        d = self.dut
        for name in ("cmd", "cfg", "cta_complete", "dsmem_flush_done"):
            getattr(d, f"{name}__valid").value = 0
        for port in self.outputs():
            port.ready.value = 0
        d.dbg_req__valid.value = 1
        d.dbg_req__payload.value = sel | idx << 4
        d.dbg_resp__ready.value = 1
        sent = False
        for _ in range(20):
            await ReadOnly()
            if not sent and read_int(d.dbg_req__ready):
                sent = True
            elif sent and read_int(d.dbg_resp__valid):
                data = read_int(d.dbg_resp__payload)
                await RisingEdge(d.clk)
                self.t += 1
                return data
            await RisingEdge(d.clk)
            self.t += 1
            if sent:
                d.dbg_req__valid.value = 0
        raise AssertionError("dbg_resp did not come")

    async def snapshot(self):
        """Every dbg code for every index that matters: {(sel, idx): data}."""
        p = self.p
        out = {}
        for sel in DBG_SELS:
            n = p.N_SM if sel in (0, 1, 2, 3, 11) else p.N_GPC if sel in (4, 5, 6) else 1
            for idx in range(n):
                out[(sel, idx)] = await self.dbg(sel, idx)
        return out

    async def finish(self):
        """Read the end state into the record and run the invariant checkers."""
        p, rec = self.p, self.rec
        rec.quiet = bool(self.status["quiescent"])
        rec.dbg_values = await self.snapshot()
        for s in range(p.N_SM):
            rec.tracker.used[s] = Shape(*[rec.dbg_values[(sel, s)] for sel in range(4)])
        if p.TRACE:
            check_trace(rec, self.ts0)
        check_all(rec)


def check_trace(rec, ts0):
    """The trace against the other ports. FAIL records = ``status.fail`` pulses (WD-F14). For
    the shadow launcher every session (its SNAP records) is recomputed by the golden
    ``Launcher.run_session`` from the snapshot the records carry: its QUERY, SELECT and FAIL
    records (all fields but ``ts``, ``lat``) and the concatenated LAUNCH / GRID beats (all fields
    but ``cga_id``) must equal the RTL's (WD-V7), and each snapshot is handed to the WD-V2 check
    as a session (``rec.sessions``). ``lat`` obeys WD-P4."""
    p = rec.p
    fails = [r for r in rec.traces if r.kind == TraceKind.FAIL]
    assert len(fails) == rec.fails, f"{len(fails)} FAIL records, {rec.fails} status.fail pulses"
    if p.DISTRIBUTOR == "legacy":
        assert len(fails) == len(rec.traces), "the legacy baseline traces only FAIL records"
        return
    cmds = {c.grid_id: c for _, c in rec.commands}
    by_sess = []
    for r in rec.traces:
        if r.kind == TraceKind.SNAP and r.gpc == 0:
            by_sess.append([])
        assert by_sess, f"a trace record before any SNAP: {r}"
        by_sess[-1].append(r)
    gold = GoldenLauncher(p)
    gold.sess = by_sess[0][0].sess if by_sess else 0
    launches = [b for _, b in rec.bcast if b.kind != Kind.GRID]
    gold.seq.value = launches[0].seq if launches else 0    # seq runs on across rounds
    runs = {}
    beats = []
    for recs in by_sess:
        snaps = recs[:p.N_GPC]
        assert [r.kind for r in snaps] == [TraceKind.SNAP] * p.N_GPC and \
            [r.gpc for r in snaps] == list(range(p.N_GPC)), f"SNAP records {snaps}"
        grid_id = snaps[0].grid_id
        cmd = cmds[grid_id]
        free = [x for g, r in enumerate(snaps) for x in r.vec[:p.SM_PER_GPC[g]]]
        credit = [r.credit for r in snaps]
        empty = snaps[0].empty
        run = runs.setdefault(grid_id, GridRun.start(cmd))
        res = gold.run_session(run, free, credit, empty)
        rec.sessions.append((snaps[0].ts + ts0, cmd, free, credit, empty, res))
        want = [replace(x, vec=pad(p, x.vec)).key() for k, x in res.events if k == "trace"]
        got = [r.key() for r in recs]
        assert got == want, f"WD-V7: session {snaps[0].sess} (grid {grid_id}) trace\n" \
            f"RTL    {got}\ngolden {want}"
        beats += [x.key() for k, x in res.events if k == "beat"]
        for r in recs:
            if r.kind == TraceKind.QUERY:
                lvl = p.FREE_W + (1 if cmd.mode == Mode.MC else 0)
                bound = lvl + ceil_log2(p.SM_PER_GPC[r.gpc]) + 2
                assert r.lat <= bound, f"WD-P4: query latency {r.lat} > {bound}"
    got = [replace(b, cga_id=0).key() for _, b in rec.bcast]
    assert got == beats, "WD-V7: the bcast beats differ from the golden sessions'"
    rec.snapshot_lags = snapshot_lags(rec)
    assert rec.snapshot_lags and min(rec.snapshot_lags) <= 2, \
        f"WD-P9: no lag <= 2 explains every snapshot (consistent lags {rec.snapshot_lags})"


def snapshot_lags(rec, lags=range(4)):
    """WD-P9: the lags L for which every snapshot (at cycle t) equals the real state rebuilt
    from the port records: the commits of the earlier sessions, the ``cta_complete`` and
    ``cga_complete`` transfers of cycles <= t - L (free slots for the session's shape, credits,
    ``empty``)."""
    p = rec.p
    ok = []
    for lag in lags:
        tracker = ResourceTracker(p)
        for sm, cap in rec.caps.items():
            tracker.cfg_write(sm, **cap)
        done_cc = done_cq = 0
        good = True
        for t, cmd, free, credit, empty, res in rec.sessions:
            while done_cc < len(rec.completions) and rec.completions[done_cc][0] <= t - lag:
                _, sm, _, _, shape = rec.completions[done_cc]
                tracker.complete(sm, shape)
                done_cc += 1
            while done_cq < len(rec.cga_completes) and rec.cga_completes[done_cq][0] <= t - lag:
                tracker.return_credit(rec.cga_completes[done_cq][1].gpc)
                done_cq += 1
            if (tracker.free_vector(cmd.shape) != list(free) or list(tracker.credit) != credit
                    or bool(tracker.empty()) != bool(empty)):
                good = False
                break
            for g, a, cga in res.commits:       # this session's commits, before the next one
                for i, k in enumerate(a):
                    if k:
                        tracker.commit(p.base(g) + i, k, cmd.shape)
                if cga:
                    tracker.commit_credit(g)
        if good:
            ok.append(lag)
    return ok


def golden_errors(p, caps, cmds, seed):
    """The err beats of a golden ``WdistModel`` run of the same commands (latency 1..20)."""
    cfg = [dict(sm=sm, **c) for sm, c in caps.items()]
    res = golden_run(p, cmds, cfg=cfg, seed=seed)
    assert not res.timeout
    return [e for _, e in res.model.errs]


@cocotb.test()
async def random_top(dut):
    """Three rounds of random grids on one DUT, each on new capacities (written through ``cfg``
    while quiescent) and checked on its own."""
    p = build_params()
    rng = env.rng(0)
    tb = TopBench(dut, p, rng, ready_prob=rng.choice((0.6, 1.0)))
    for rnd in range(3):
        levels = Legacy.LEVELS if p.DISTRIBUTOR == "legacy" else Launcher.LEVELS
        caps, grids = random_case(rng, p, levels=tuple(sorted(levels)))
        grids = [replace(c, grid_id=c.grid_id + 10 * rnd) for c in grids]
        shapes = {c.grid_id: c.shape for c in grids}
        tb.stubs = SmStubs(p, shapes, seed=rng.randrange(1 << 30), latency=(1, 40))
        await tb.start(caps, first=rnd == 0)
        tb.cmds.extend(grids)
        await tb.run_until_quiet(60_000)
        await tb.finish()
        rec = tb.rec
        codes = sorted((e.code, e.grid_id, e.info) for _, e in rec.errs)
        want = sorted((e.code, e.grid_id, e.info) for e in golden_errors(p, caps, grids, 1))
        assert codes == want, f"round {rnd}: errors {codes} != golden {want}"
        dut._log.info(f"random_top round {rnd}: {len(grids)} grids, {len(rec.bcast)} beats, "
                      f"{sum(len(x) for x in rec.cta_ids)} CTAs, {len(rec.flush_reqs)} CGAs "
                      f"flushed, {rec.fails} FAIL events, stalls seen {sorted(rec.stalls)}, "
                      f"{tb.t} cycles, {len(rec.sessions)} snapshots consistent with lags "
                      f"{rec.snapshot_lags} (WD-P9)")


@cocotb.test()
async def id_exhaustion(dut):
    """WD-V12: more credits than CGA IDs per GPC (the build has CGA_CREDIT_PER_SM × SM_PER_GPC
    > 2^GPC_CGA_ID_W): 1-CTA GPC CGAs whose CTAs stay long wait for IDs (WAIT_CGA_ID), and
    every CGA still launches once with V9 holding."""
    p = build_params()
    assert p.CGA_CREDIT_PER_SM * min(p.SM_PER_GPC) > 1 << p.GPC_CGA_ID_W, "build cannot exhaust"
    rng = env.rng(2)
    n = 6 * p.N_GPC << p.GPC_CGA_ID_W
    grids = [Command(grid_id=7, level=Level.GPC, mode=rng.randrange(2), grid_x=n, in_x=1,
                     warps=1)]
    stubs = SmStubs(p, {7: grids[0].shape}, seed=rng.randrange(1 << 30), latency=(60, 120))
    tb = TopBench(dut, p, rng, ready_prob=rng.choice((0.7, 1.0)), stubs=stubs)
    await tb.start()
    tb.cmds.extend(grids)
    await tb.run_until_quiet(60_000)
    await tb.finish()
    rec = tb.rec
    assert Stall.WAIT_CGA_ID in rec.stalls, f"WAIT_CGA_ID not seen: {sorted(rec.stalls)}"
    assert len(rec.cga_completes) == n and not rec.errs
    dut._log.info(f"id_exhaustion: {n} CGAs, stalls seen {sorted(rec.stalls)}, {tb.t} cycles")


@cocotb.test()
async def errors(dut):
    """WD-V13: each WD-E code in a directed case, then a normal command."""
    p = build_params()
    rng = env.rng(1)
    shapes = {}
    stubs = SmStubs(p, shapes, seed=1, hold=True)
    tb = TopBench(dut, p, rng, stubs=stubs)
    await tb.start()
    rec = tb.rec
    ok = Command(grid_id=50, level=Level.PLAIN, grid_x=3, warps=1)
    shapes[50] = ok.shape

    async def expect(code, grid_id, info, cycles=80):
        before = await tb.snapshot()
        n = len(rec.errs)
        for _ in range(cycles):
            await tb.cycle()
        new = [e for _, e in rec.errs[n:]]
        assert new == [ErrBeat(code, grid_id, info)], f"code {code}: err beats {new}"
        after = await tb.snapshot()
        changed = {k: (before[k], after[k]) for k in before
                   if before[k] != after[k] and k[0] != 7}
        return changed

    # WD-E1..E4: command errors (no beat, no state change)
    bad = [
        (1, Command(grid_id=1, level=Level.PLAIN, grid_x=0, warps=1)),
        (2, Command(grid_id=2, level=Level.GPC, grid_x=6, in_x=4, warps=1)),
        (3, Command(grid_id=3, level=Level.PLAIN, grid_x=2, warps=p.WARP_CAP + 1)),
        (4, Command(grid_id=4, level=6, grid_x=2, warps=1)),
    ]
    for code, cmd in bad:
        n_beats = len(rec.bcast)
        tb.cmds.append(cmd)
        changed = await expect(code, cmd.grid_id, 0)
        assert not changed, f"WD-E{code}: dbg changed {changed}"
        assert len(rec.bcast) == n_beats, f"WD-E{code}: a beat was emitted"
    # WD-E5: a CGA larger than any GPC on the empty machine: one FAIL, NEVER_FITS info 0
    # (one CTA per SM for warps = WARP_CAP, a CGA of one more CTA than a GPC has SMs)
    n = min(p.MAX_CGA_CTAS, max(p.SM_PER_GPC) + 1)
    assert n > max(p.SM_PER_GPC), "the build needs MAX_CGA_CTAS > SM_PER_GPC"
    big = Command(grid_id=5, level=Level.GPC, grid_x=n, in_x=n, warps=p.WARP_CAP)
    fails = rec.fails
    tb.cmds.append(big)
    await expect(5, 5, 0)
    assert rec.fails == fails + 1, "WD-E5: one FAIL event"
    # a held plain grid makes the machine busy for E6..E9
    tb.cmds.append(ok)
    for _ in range(60):
        await tb.cycle()
    held = [(s, r) for s in range(p.N_SM) for _, r in rec.cta_ids[s]]
    assert len(held) == 3, f"the plain grid placed {len(held)} CTAs"
    idle_sm = next(s for s in range(p.N_SM) if not rec.cta_ids[s])
    busy_sm = held[0][0]
    # WD-E6: underflow on an SM holding nothing
    tb.cc.append((idle_sm, 0, 0, Shape(0, 0, 1)))
    changed = await expect(6, 0, idle_sm)
    assert not changed, f"WD-E6: dbg changed {changed}"
    # WD-E7: is_cga with an ID that is not allocated (the SM holds a plain CTA)
    tb.cc.append((busy_sm, 1, 1, ok.shape))
    changed = await expect(7, 0, 1)
    assert not changed, f"WD-E7: dbg changed {changed}"
    # WD-E8: a flush done for an ID that waits for no flush
    tb.fd.append((busy_sm, 2))
    changed = await expect(8, 0, 2)
    assert not changed, f"WD-E8: dbg changed {changed}"
    # WD-E9: cfg while not quiescent
    tb.cfgs.append(dict(sm=0, enable=1, regs_cap_g=1, smem_cap_g=1, warp_cap=1, slot_cap=1))
    changed = await expect(9, 0, 0)
    assert not changed, f"WD-E9: dbg changed {changed}"
    # complete the held CTAs: quiescent again
    for s, r in held:
        tb.cc.append((s, 0, 0, ok.shape))
    for _ in range(20):
        await tb.cycle()
    assert tb.status["quiescent"], f"not quiescent after the completions: {tb.status}"
    # WD-E10: a capacity above its maximum
    sm = p.N_SM - 1
    tb.cfgs.append(dict(sm=sm, enable=1, regs_cap_g=1, smem_cap_g=1, warp_cap=p.WARP_CAP + 1,
                        slot_cap=1))
    changed = await expect(10, 0, sm)
    assert not changed, f"WD-E10: dbg changed {changed}"
    # err_lost: protocol errors while err is not taken
    tb.hold_err = True
    for k in range(7):
        tb.cc.append((0, 0, 0, Shape(0, 0, 1)))
    for _ in range(12):
        await tb.cycle()
    assert tb.status["err_lost"] == 3, f"err_lost {tb.status['err_lost']} after 7 errors, queue 4"
    tb.hold_err = False
    for _ in range(8):
        await tb.cycle()
    assert [e.code for _, e in rec.errs[-4:]] == [6] * 4
    # the next command behaves normally
    nxt = Command(grid_id=51, level=Level.PLAIN, grid_x=2, warps=1)
    shapes[51] = nxt.shape
    tb.cmds.append(nxt)
    for _ in range(60):
        await tb.cycle()
    assert sum(1 for s in range(p.N_SM) for _, r in rec.cta_ids[s] if r.grid_id == 51) == 2
