"""cocotb testbench of ``TrackingQueues`` (hw/trackq/top.py): lockstep with the golden model.

Every cycle the inputs are driven just after the rising edge, the outputs are sampled in the
ReadOnly phase and compared with ``golden.trackq.model.TrackingQueuesModel`` stepped with the same
inputs (TQ-V1): ``req.ready``, the ``pop`` and ``cmt`` events, ``resp`` valid and payload,
``ready_vec`` and every TQ-I9 status output, the ``err`` register and the eight counters.
The RTL's port values (not the model's) also feed

- ``golden.trackq.invariants.TraceChecker``, which rebuilds every TQ-V2..V13 obligation from the
  ports, and
- ``tb.common.protocol.StreamRules`` on ``req`` (the driver) and ``resp`` (the DUT, TQ-V13).

Test cases:

- ``random_lockstep``: closed-loop random runs of ``golden.trackq.stimulus.RandomEnv`` (random
  back-pressure on resp, status packets, fast-path requests, TEX instructions contract-respecting
  and splitting, invals, run-time config changes incl. cfg_cgm mid-group and illegal values,
  err_clr), each run after a reset and with its own seed derived from the printed run seed.
  ``TQ_RUNS`` / ``TQ_NREQ`` set the number of runs and requests per run.
- ``golden_vectors``: every TQ-GV vector of ``golden.trackq.vectors`` whose parameters are this
  build's, driven with the §5 conventions; besides the lockstep comparison, the vector's printed
  table (ins/pop/cmt/resp cycles, delivered eoi/eog/q/cls/src, counters, err) is checked on the
  RTL's own port values.
"""

import os
import random
from types import SimpleNamespace

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.trackq.formats import (COUNTERS, Cmt, Pop, Resp, cmt_fields, fill_fields,
                                   inval_fields, pop_fields, resp_fields)
from golden.trackq.invariants import TraceChecker
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.stimulus import RandomEnv
from golden.trackq.trace import schedule
from golden.trackq.formats import Fill, Inval
from golden.trackq.vectors import VECTORS
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamRules

STATUS_KEYS = ("st_occ", "fast_occ", "pool_used", "pool_full", "lock_valid", "lock_q",
               "reclaim_mode")


class TqHarness:
    """Drives one cycle at a time, samples every output and compares with the golden model."""

    def __init__(self, dut, params, model_cls=TrackingQueuesModel):
        self.dut = dut
        self.p = params
        self.model_cls = model_cls
        self.fields = dict(resp=resp_fields(params), pop=pop_fields(params),
                           cmt=cmt_fields(params), fill=fill_fields(params),
                           inval=inval_fields(params))
        self.mismatches = []
        self.cycles_compared = 0
        self.started = False

    async def start(self):
        """Clock (once), idle inputs, reset; fresh model, checker and stream rules."""
        dut = self.dut
        self._drive(dict(req=None, fill=None, inval=None, cfg=self.p.default_config(),
                         resp_ready=0, err_clr=0))
        if not self.started:
            start_clock(dut)
            self.started = True
        await reset(dut)
        self.model = self.model_cls(self.p)
        self.cycle = 0
        self.req_rules = StreamRules("req")
        self.resp_rules = StreamRules("resp")

    def _drive(self, inp):
        dut, p = self.dut, self.p
        r = inp["req"]
        dut.req__valid.value = int(r is not None)
        dut.req__payload.value = r.pack(p) if r is not None else 0
        f = inp["fill"]
        dut.fill__valid.value = int(f is not None)
        dut.fill__payload.value = (self.fields["fill"].pack(bank=f.bank, dslot=f.dslot,
                                                            sector=f.sector) if f else 0)
        i = inp["inval"]
        dut.inval__valid.value = int(i is not None)
        dut.inval__payload.value = (self.fields["inval"].pack(bank=i.bank, dslot=i.dslot)
                                    if i else 0)
        c = inp["cfg"]
        if hasattr(dut, "cfg_mode"):
            dut.cfg_mode.value = c.cfg_mode
            dut.cfg_lgq.value = c.cfg_lgq
            dut.cfg_cgm.value = c.cfg_cgm
            dut.cfg_reclaim.value = c.cfg_reclaim
            dut.err_clr.value = int(inp["err_clr"])
        dut.resp__ready.value = int(inp["resp_ready"])

    def _sample(self):
        dut, p, f = self.dut, self.p, self.fields
        resp = pop = cmt = None
        if int(dut.resp__valid.value):
            resp = Resp(**f["resp"].unpack(int(dut.resp__payload.value)))
        if int(dut.pop__valid.value):
            pop = Pop(**f["pop"].unpack(int(dut.pop__payload.value)))
        if int(dut.cmt__valid.value):
            cmt = Cmt(**f["cmt"].unpack(int(dut.cmt__payload.value)))
        status = {}
        if hasattr(dut, "occ"):
            occ = int(dut.occ.value)
            status["occ"] = [(occ >> (k * p.OCC_W)) & ((1 << p.OCC_W) - 1) for k in range(p.N_Q)]
            for key in STATUS_KEYS:
                status[key] = int(getattr(dut, key).value)
            err = int(dut.err.value)
            names = COUNTERS
        else:
            for key in ("pool_used", "pool_full"):
                status[key] = int(getattr(dut, key).value)
            err = 0
            names = self.model.counters.keys()
        counters = {n: int(getattr(dut, n).value) for n in names}
        return SimpleNamespace(req_ready=int(dut.req__ready.value), resp=resp, pop=pop, cmt=cmt,
                               ready_vec=int(dut.ready_vec.value) if hasattr(dut, "ready_vec")
                               else None, status=status, err=err, counters=counters)

    def _compare(self, got, want, counters_before):
        diffs = []
        for key in ("req_ready", "resp", "pop", "cmt", "err"):
            if getattr(got, key) != getattr(want, key):
                diffs.append(f"{key}: rtl {getattr(got, key)} golden {getattr(want, key)}")
        if got.ready_vec is not None and got.ready_vec != want.ready_vec:
            diffs.append(f"ready_vec: rtl {got.ready_vec:#x} golden {want.ready_vec:#x}")
        for key, value in got.status.items():
            if value != want.status[key]:
                diffs.append(f"{key}: rtl {value} golden {want.status[key]}")
        for key, value in got.counters.items():
            if value != counters_before[key]:
                diffs.append(f"{key}: rtl {value} golden {counters_before[key]}")
        if diffs and len(self.mismatches) < 50:
            self.mismatches.append(f"cycle {self.cycle}: " + "; ".join(diffs))
        self.cycles_compared += 1

    async def step(self, inp):
        """One cycle: drive, sample, compare with the model, clock. Returns (rtl, golden)."""
        self._drive(inp)
        await ReadOnly()
        got = self._sample()
        before = dict(self.model.counters)
        want = self.model.step(**inp)
        self._compare(got, want, before)
        r = inp["req"]
        self.req_rules.step(int(r is not None), got.req_ready,
                            r.pack(self.p) if r is not None else None, self.cycle)
        self.resp_rules.step(int(got.resp is not None), int(inp["resp_ready"]),
                             got.resp, self.cycle)
        self.cycle += 1
        await RisingEdge(self.dut.clk)
        return got, want

    async def final_counters(self):
        await ReadOnly()
        got = self._sample()
        await RisingEdge(self.dut.clk)
        return got.counters, got.err

    def check(self, label):
        problems = list(self.mismatches) + self.req_rules.violations + self.resp_rules.violations
        assert not problems, (f"{label}: {len(problems)} problems (seed {env.seed()}):\n"
                              + "\n".join(problems[:20]))


def build_params():
    return TrackqParams(**env.params())


def _env_variant(rng, p, k):
    """Stimulus options of random run k: split TEX traffic on odd runs, varied pressure."""
    return dict(split=bool(k % 2), p_ready=rng.choice((0.3, 0.75, 1.0)),
                p_req=rng.choice((0.4, 0.7, 1.0)), max_fill_lat=rng.choice((5, 25, 60)),
                p_fast=rng.choice((0.0, 0.25, 0.6)), p_status=rng.choice((0.0, 0.06, 0.15)))


@cocotb.test()
async def random_lockstep(dut):
    """TQ-V1 lockstep + TQ-V2..V13 (TraceChecker on RTL ports) over TQ_RUNS random runs."""
    p = build_params()
    runs = int(os.environ.get("TQ_RUNS", "20"))
    n_req = int(os.environ.get("TQ_NREQ", "60"))
    rng = random.Random(env.seed())
    h = TqHarness(dut, p)
    total_cycles = total_req = 0
    for k in range(runs):
        run_seed = rng.getrandbits(32)
        opts = _env_variant(rng, p, k)
        await h.start()
        stim = RandomEnv(p, run_seed, n_req=n_req, **opts)
        checker = TraceChecker(p, contract_tex=not opts["split"])
        extra = 0
        while True:
            if stim.idle() and h.model.is_empty():
                extra += 1
                if extra > 2:
                    break
            assert h.cycle < 40 * n_req + 4 * p.POOL + 200, \
                f"run {k} (seed {run_seed}) did not drain"
            inp = stim.inputs(h.cycle)
            got, _ = await h.step(inp)
            stim.update(h.cycle - 1, inp, got)
            checker.observe(h.cycle - 1, result=got, **inp)
        counters, _ = await h.final_counters()
        h.check(f"run {k} seed {run_seed} {opts}")
        checker.finish(counters=counters)
        total_cycles += h.cycle
        total_req += stim.accepted
    dut._log.info("random_lockstep: %d runs, %d cycles, %d requests compared (seed %d)",
                  runs, total_cycles, total_req, env.seed())


async def run_vector(h, v):
    """Drive one vector with the §5 conventions; returns per-label RTL event records."""
    params, cfg, reqs, labels = v.build()
    await h.start()
    fills = schedule(v.fills, Fill, "fill")
    invals = schedule(v.invals, Inval, "inval")
    not_ready = frozenset(v.not_ready)
    last_input = max([0, *fills, *invals])
    rec = {k: {} for k in range(len(reqs))}
    nxt = delivered = 0
    while not (nxt == len(reqs) and delivered == len(reqs) and h.cycle > last_input
               and h.model.is_empty()):
        assert h.cycle < 5000, f"{v.name} did not drain"
        c = h.cycle
        req = reqs[nxt][1] if nxt < len(reqs) and reqs[nxt][0] <= c else None
        inp = dict(req=req, fill=fills.get(c), inval=invals.get(c), cfg=cfg,
                   resp_ready=int(c not in not_ready), err_clr=0)
        got, _ = await h.step(inp)
        if req is not None and got.req_ready:
            rec[nxt]["ins"] = c
            nxt += 1
        if got.pop is not None:
            rec[got.pop.id].update(pop=c, q=got.pop.q)
        if got.cmt is not None:
            rec[got.cmt.id]["cmt"] = c
        if got.resp is not None and inp["resp_ready"]:
            r = got.resp
            rec[r.id].update(resp=c, eoi=r.eoi, eog=r.eog, cls=r.cls, src=r.src)
            if r.src == 0:
                rec[r.id]["q"] = r.q
            delivered += 1
    counters, err = await h.final_counters()
    problems = []
    for label, want in v.expect.items():
        k = labels.index(label)
        for col, value in want.items():
            if col in ("seq", "tsnap"):          # not at the ports; covered by the lockstep
                continue
            got = (rec[k].get("resp", 0) - rec[k].get("ins", 0) if col == "latency"
                   else rec[k].get(col))
            if got != value:
                problems.append(f"{label}.{col}: rtl {got} expected {value}")
    for name, value in v.counters.items():
        if counters[name] != value:
            problems.append(f"{name}: rtl {counters[name]} expected {value}")
    if v.err is not None and err != v.err:
        problems.append(f"err: rtl {err:#x} expected {v.err:#x}")
    h.check(v.name)
    assert not problems, f"{v.name}: " + "; ".join(problems)
    return h.cycle


def vectors_for(p, design):
    out = []
    for v in VECTORS:
        if v.design == design and v.build()[0] == p:
            out.append(v)
    return out


@cocotb.test()
async def golden_vectors(dut):
    """Every TQ-GV vector whose parameters are this build's (TQ-V1 "all golden vectors")."""
    p = build_params()
    h = TqHarness(dut, p)
    done = []
    for v in vectors_for(p, "tq"):
        cycles = await run_vector(h, v)
        done.append(f"{v.name} ({cycles} cycles)")
    dut._log.info("golden vectors on this build: %s", ", ".join(done) or "none")
