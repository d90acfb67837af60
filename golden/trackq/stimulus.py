"""Closed-loop random environment for trackq: requests, fills, invals, config and resp.ready.

The environment sees only the ports: it offers a request and holds it until ``req.ready``, learns
deliveries from ``resp``, and keeps its own copy of the sector-valid table from the fills and
invals it sends. It respects the obligations of TQ-E11 unless told otherwise:

- ids are unique among outstanding requests;
- every needed sector that is not valid is filled, after a random latency (one fill per cycle,
  earliest due first); a sector an inval cleared under an outstanding request is filled again;
- invals address no dslot of an outstanding request (``contract_invals``);
- resp.ready is 1 while draining;
- the packets of one TEX instruction are consecutive among TEX slow packets, and the mapping
  config does not change inside an instruction (``split = False``); with ``split = True`` other
  warps' TEX packets cut into open instructions and the mode changes at any time (TQ-E9).

With ``fifo_domain`` it generates only the equivalence domain of TQ-V15 (no status, no fast_path,
cls ≠ 3, eoi = 1 on TEX, mode 1, cfg_cgm ≥ 2, in-order reclaim).
"""

import heapq
import random

from golden.trackq.formats import LG, TEX, TTU, Fill, Inval, Req
from golden.trackq.params import Config

__all__ = ["RandomEnv", "run_env", "run_random"]


class RandomEnv:
    def __init__(self, params, seed, n_req=150, p_req=0.7, p_ready=0.75, p_status=0.06,
                 p_fast=0.25, p_tex=0.35, p_ttu=0.15, p_cls3=0.02, p_hit=0.35, dslot_span=4,
                 max_fill_lat=25, p_spurious=0.05, p_inval=0.03, p_cfg=0.03, p_clr=0.01,
                 modes=(0, 1, 2, 3), reclaims=(0, 1), illegal_cfg=True, split=False,
                 contract_invals=True, fifo_domain=False, p_input_eog=0.05, max_inst=5):
        self.p = params
        self.rng = random.Random(seed)
        self.n_req = n_req
        self.p_req, self.p_ready = p_req, p_ready
        self.p_status, self.p_fast, self.p_tex, self.p_ttu, self.p_cls3 = (
            p_status, p_fast, p_tex, p_ttu, p_cls3)
        self.p_hit, self.dslot_span = p_hit, min(dslot_span, params.DSLOTS)
        self.max_fill_lat, self.p_spurious, self.p_inval = max_fill_lat, p_spurious, p_inval
        self.p_cfg, self.p_clr = p_cfg, p_clr
        self.modes, self.reclaims, self.illegal_cfg = modes, reclaims, illegal_cfg
        self.split, self.contract_invals, self.fifo_domain = split, contract_invals, fifo_domain
        self.p_input_eog, self.max_inst = p_input_eog, max_inst
        if fifo_domain:
            self.p_status = self.p_fast = self.p_cls3 = self.p_input_eog = 0
            self.modes, self.reclaims = (0,), (0,)
        self.generated = 0
        self.offered = None
        self.outstanding = {}            # id -> Req
        self.svt = {}
        self.pending = []                # heap (due, order, (bank, dslot, sector))
        self.pending_set = set()
        self.n_sched = 0
        self.inst = None                 # open TEX instruction (warp, packets left)
        self.cfg = self._random_cfg(initial=True)
        self.draining = False
        self.accepted = 0
        self.delivered = 0

    # config --------------------------------------------------------------------------------------
    def _random_cfg(self, initial=False, mapping=True):
        p, rng = self.p, self.rng
        cgm_max = (1 << p.CGM_W) - 1
        lgq_max = (1 << p.Q_W) - 1
        if self.illegal_cfg and not self.fifo_domain and rng.random() < 0.15:
            cgm = rng.randint(0, cgm_max)
        else:
            cgm = rng.randint(2 if self.fifo_domain else 1, p.POOL)
        if self.illegal_cfg and rng.random() < 0.15:
            lgq = rng.randint(0, lgq_max)
        else:
            lgq = rng.randint(1, max(1, p.N_Q - 1)) if p.N_Q > 1 else 0
        old = None if initial else self.cfg
        mode = rng.choice(self.modes)
        if not mapping and old is not None:
            mode, lgq = old.cfg_mode, old.cfg_lgq
        reclaim = rng.choice(self.reclaims)
        return Config(cfg_mode=mode, cfg_lgq=lgq, cfg_cgm=cgm, cfg_reclaim=reclaim).checked(p)

    # requests ------------------------------------------------------------------------------------
    def _free_id(self):
        limit = 1 << self.p.ID_W
        while True:
            i = self.rng.randrange(limit)
            if i not in self.outstanding and (self.offered is None or self.offered.id != i):
                return i

    def _needs(self):
        p, rng = self.p, self.rng
        dslot = [rng.randrange(p.DSLOTS) for _ in range(p.BANKS)]
        need = [0] * p.BANKS
        if rng.random() >= self.p_hit:
            for b in range(p.BANKS):
                if rng.random() < (0.7 if b == 0 else 0.25):
                    dslot[b] = rng.randrange(self.dslot_span)
                    need[b] = rng.randrange(1, 1 << p.SECTORS)
        return tuple(dslot), tuple(need)

    def _new_req(self, close=False):
        """The next request; ``close``: only finish the open TEX instruction (end of stimulus)."""
        p, rng = self.p, self.rng
        warp = rng.randrange(min(p.N_WARPS, 1 << p.WARP_W))
        dslot, need = self._needs()
        fast = int(rng.random() < self.p_fast)
        r = rng.random()
        if self.inst is not None and (close or rng.random() < 0.6):
            w, left = self.inst
            if close:
                left = 1
            elif self.split and rng.random() < 0.25:
                w = (w + 1 + rng.randrange(max(1, p.N_WARPS - 1))) % min(p.N_WARPS, 1 << p.WARP_W)
                left = rng.randint(1, self.max_inst)
            eoi = int(left == 1)
            self.inst = None if eoi else (w, left - 1)
            return Req(id=self._free_id(), warp=w, cls=int(TEX), dslot=dslot, need=need, eoi=eoi,
                       eog=int(rng.random() < self.p_input_eog), fast_path=fast)
        if r < self.p_status:
            return Req(id=self._free_id(), warp=warp, cls=int(TEX), dslot=dslot, need=need,
                       eoi=rng.randrange(2), eog=rng.randrange(2), is_status=1, fast_path=fast)
        r = rng.random()
        if r < self.p_tex and (self.inst is None or self.split):
            left = 1 if self.fifo_domain else rng.randint(1, self.max_inst)
            eoi = int(left == 1)
            self.inst = None if eoi else (warp, left - 1)
            return Req(id=self._free_id(), warp=warp, cls=int(TEX), dslot=dslot, need=need,
                       eoi=eoi, eog=int(rng.random() < self.p_input_eog), fast_path=fast)
        if r < self.p_tex + self.p_ttu:
            cls = TTU
        elif rng.random() < self.p_cls3:
            cls = 3
        else:
            cls = LG
        return Req(id=self._free_id(), warp=warp, cls=int(cls), dslot=dslot, need=need,
                   eoi=1 if self.fifo_domain else rng.choice((1, 1, 1, 0)),
                   eog=int(rng.random() < self.p_input_eog), fast_path=fast)

    # fills ---------------------------------------------------------------------------------------
    def _valid(self, b, d, s):
        return (self.svt.get((b, d), 0) >> s) & 1

    def _schedule(self, cycle, b, d, s, lat=None):
        if (b, d, s) in self.pending_set:
            return
        lat = self.rng.randint(1, self.max_fill_lat) if lat is None else lat
        heapq.heappush(self.pending, (cycle + lat, self.n_sched, (b, d, s)))
        self.pending_set.add((b, d, s))
        self.n_sched += 1

    def _refill(self, cycle):
        """Schedule a fill for every needed invalid sector of an outstanding request."""
        for r in self.outstanding.values():
            for b, n in enumerate(r.need):
                for s in range(self.p.SECTORS):
                    if n >> s & 1 and not self._valid(b, r.dslot[b], s):
                        self._schedule(cycle, b, r.dslot[b], s)

    # the cycle -----------------------------------------------------------------------------------
    def inputs(self, cycle):
        """The inputs of this cycle: dict for ``model.step``."""
        p, rng = self.p, self.rng
        if self.offered is None and (self.generated < self.n_req or self.inst is not None) \
                and rng.random() < self.p_req:
            self.offered = self._new_req(close=self.generated >= self.n_req)
            self.generated += 1
        fill = None
        if self.pending and self.pending[0][0] <= cycle:
            _, _, (b, d, s) = heapq.heappop(self.pending)
            self.pending_set.discard((b, d, s))
            fill = Fill(b, d, s)
        elif rng.random() < self.p_spurious and not self.draining:
            fill = Fill(rng.randrange(p.BANKS), rng.randrange(self.dslot_span),
                        rng.randrange(p.SECTORS))
        inval = None
        if not self.draining and rng.random() < self.p_inval:
            b, d = rng.randrange(p.BANKS), rng.randrange(self.dslot_span)
            busy = {(bb, r.dslot[bb]) for r in list(self.outstanding.values())
                    + ([self.offered] if self.offered is not None else [])
                    for bb, n in enumerate(r.need) if n}
            if not self.contract_invals or (b, d) not in busy:
                inval = Inval(b, d)
        if not self.draining and rng.random() < self.p_cfg:
            mapping = self.split or (self.inst is None and self.offered is None)
            self.cfg = self._random_cfg(mapping=mapping)
        resp_ready = 1 if self.draining else int(rng.random() < self.p_ready)
        err_clr = int(rng.random() < self.p_clr)
        return dict(req=self.offered, fill=fill, inval=inval, cfg=self.cfg, resp_ready=resp_ready,
                    err_clr=err_clr)

    def update(self, cycle, inputs, result):
        """Observe the cycle's port values."""
        if inputs["inval"] is not None:
            self.svt[(inputs["inval"].bank, inputs["inval"].dslot)] = 0
        if inputs["fill"] is not None:
            f = inputs["fill"]
            self.svt[(f.bank, f.dslot)] = self.svt.get((f.bank, f.dslot), 0) | (1 << f.sector)
        if result.resp is not None and inputs["resp_ready"]:
            self.outstanding.pop(result.resp.id)
            self.delivered += 1
        if inputs["req"] is not None and result.req_ready:
            self.outstanding[self.offered.id] = self.offered
            self.offered = None
            self.accepted += 1
            if self.generated >= self.n_req and self.inst is None:
                self.draining = True
        self._refill(cycle)

    def idle(self):
        return (self.draining and self.offered is None and not self.outstanding
                and not self.pending)


def run_env(model, env, checker=None, others=(), max_cycles=20000, tail=2):
    """Drive ``model`` (and ``others``, stepped with the same inputs) with ``env`` until the
    environment is idle and the model empty, plus ``tail`` cycles. Returns the list of results
    (one list per model when ``others`` is given)."""
    results = [[] for _ in range(1 + len(others))]
    cycle = 0
    extra = 0
    while True:
        if env.idle() and model.is_empty():
            extra += 1
            if extra > tail:
                break
        if cycle >= max_cycles:
            raise RuntimeError(f"random trace did not drain in {max_cycles} cycles "
                               f"({env.accepted}/{env.n_req} accepted, {env.delivered} delivered)")
        inp = env.inputs(cycle)
        res = model.step(**inp)
        results[0].append(res)
        for k, other in enumerate(others):
            results[k + 1].append(other.step(**inp))
        env.update(cycle, inp, res)
        if checker is not None:
            checker.observe(cycle, result=res, **inp)
        cycle += 1
    return results if others else results[0]


def run_random(params, seed, contract_tex=None, max_cycles=20000, **env_kw):
    """One closed-loop random run of ``TrackingQueuesModel`` checked by ``TraceChecker``
    (every TQ-V obligation the checker knows). Returns (model, results); AssertionError on a
    violation."""
    from golden.trackq.invariants import TraceChecker
    from golden.trackq.model import TrackingQueuesModel

    model = TrackingQueuesModel(params)
    env = RandomEnv(params, seed, **env_kw)
    if contract_tex is None:
        contract_tex = not env.split
    checker = TraceChecker(params, contract_tex=contract_tex)
    results = run_env(model, env, checker, max_cycles=max_cycles)
    checker.finish(counters=model.counters)
    return model, results
