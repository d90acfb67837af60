"""TrackingQueues golden: the cycle-explicit model of spec §4.4, one :meth:`step` per clock.

Every decision reads S_c, the state at the start of cycle c, plus the cycle-c inputs, except where
the spec says otherwise. :meth:`TrackingQueuesModel.step` runs the spec's steps in its order:

- STEP 0 legalise the config (TQ-E6..E8); load the reclaim policy if the pool is empty (TQ-F11)
- STEP 1 outputs from S_c: status outputs, req.ready (pool, fast FIFO, age span), resp
- STEP 2 commit decision from S_c (nothing changes yet)
- STEP 3 inval, then fill (SVT and the heads' missing bits)
- STEP 4 readiness and pop (round robin), promotion of the successor
- STEP 5 apply the commit decision
- STEP 6 insert the accepted request (fast FIFO, status queue or a tracking queue)
- STEP 7 output transfer, slot release and in-order reclaim
- STEP 8 counters and sticky error flags
"""

from dataclasses import dataclass, field

from golden.common.arbiter import RoundRobinArbiterModel
from golden.trackq.commit import STATUS, CommitPicker
from golden.trackq.fill import HeadTracker, SectorValidTable
from golden.trackq.formats import (
    COUNTER_MASK, COUNTERS, ERR_CLS, ERR_FAST_MISS, ERR_FAST_TEX, ERR_INVAL_LIVE, LG,
    SRC_FAST, SRC_STATUS, SRC_TQ, TEX, CLS_RSVD, Cmt, Fill, Inval, Pop, Req, Resp)
from golden.trackq.groups import GroupTracker
from golden.trackq.mapper import QueueMapper
from golden.trackq.output import OutputMerge
from golden.trackq.params import Config, TrackqParams, legalise
from golden.trackq.pool import Entry, EntryPool, LinkedLists

__all__ = ["TrackingQueuesModel", "CycleResult", "check_inputs"]


@dataclass
class CycleResult:
    """The outputs of one cycle.

    Port values: ``req_ready``, ``resp`` (None when resp.valid = 0), ``pop``, ``cmt`` (None when
    not valid), ``ready_vec`` and the registered status outputs of TQ-I9 in ``status``; ``err`` is
    the sticky flag register during the cycle. Observation only: ``accepted`` (the Entry inserted
    this cycle, or None), ``fire`` (resp transferred), ``err_events`` (flags raised this cycle),
    ``interlocked`` (the cycle counts in cnt_interlock), ``checks`` (head checks this cycle),
    ``popped``/``committed``/``delivered`` (the Entry of the pop, cmt and resp transfer).
    """
    cycle: int
    req_ready: int
    resp: object
    fire: int
    pop: object
    cmt: object
    ready_vec: int
    status: dict
    err: int
    err_events: int
    accepted: object = None
    interlocked: bool = False
    checks: int = 0
    popped: object = field(default=None, repr=False)
    committed: object = field(default=None, repr=False)
    delivered: object = field(default=None, repr=False)


def check_inputs(p, req, fill, inval, resp_ready, err_clr):
    """ValueError for inputs that cannot exist on the ports (wrong type, value too wide)."""
    if req is not None:
        if not isinstance(req, Req):
            raise ValueError(f"req must be a Req or None, got {req!r}")
        req.checked(p)
    if fill is not None:
        if not isinstance(fill, Fill):
            raise ValueError(f"fill must be a Fill or None, got {fill!r}")
        fill.checked(p)
    if inval is not None:
        if not isinstance(inval, Inval):
            raise ValueError(f"inval must be an Inval or None, got {inval!r}")
        inval.checked(p)
    for name, value in (("resp_ready", resp_ready), ("err_clr", err_clr)):
        if value not in (0, 1, True, False):
            raise ValueError(f"{name} must be 0 or 1, got {value!r}")


class TrackingQueuesModel:
    """Golden model of ``TrackingQueues`` (spec §4.4). ``params`` is a :class:`TrackqParams`."""

    def __init__(self, params=None):
        if params is None:
            params = TrackqParams()
        if not isinstance(params, TrackqParams):
            raise ValueError(f"params must be a TrackqParams, got {params!r}")
        self.p = p = params
        self.cycle = 0
        self.svt = SectorValidTable(p.BANKS, p.DSLOTS, p.SECTORS)
        self.pool = EntryPool(p.POOL)
        self.tq = LinkedLists(p.N_Q + 1, p.POOL)      # TQ links; list N_Q is the status queue
        self.cq = LinkedLists(p.N_Q, p.POOL)          # CQ links
        self.sq_idx = p.N_Q
        self.tcnt = [0] * p.N_Q                       # entries with term in CQ[q]
        self.ht = HeadTracker(p.N_Q, p.BANKS, p.SECTORS)
        self.pop_arb = RoundRobinArbiterModel(p.N_Q)  # rr
        self.picker = CommitPicker(p.N_Q)             # crr, unit_q, lock_q
        self.mapper = QueueMapper(p.N_Q)              # ttu_ptr
        self.groups = GroupTracker()
        self.out = OutputMerge(p.FAST_DEPTH, p.COMMIT_DEPTH)
        self.seq_next = 0
        self.n_accepted = 0
        self.err = 0
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.default_cfg = p.default_config()

    # ------------------------------------------------------------------------------------------
    # state views

    @property
    def rr(self):
        return self.pop_arb.ptr

    @property
    def crr(self):
        return self.picker.crr

    @property
    def ttu_ptr(self):
        return self.mapper.ttu_ptr

    @property
    def rec_mode(self):
        return self.pool.policy

    def _entries(self, lists, k):
        return [self.pool.payload[s] for s in lists.slots(k)]

    def tq_entries(self, q):
        return self._entries(self.tq, q)

    def cq_entries(self, q):
        return self._entries(self.cq, q)

    def sq_entries(self):
        return self._entries(self.tq, self.sq_idx)

    def _head(self, lists, k):
        slot = lists.head[k]
        return None if slot is None else self.pool.payload[slot]

    def oldest_uncommitted(self):
        """G (§4.2): the minimum seq over the first uncommitted entry of every queue (CQ head,
        else TQ head) and the status-queue head; None for ∞."""
        g = None
        payload = self.pool.payload
        for q in range(self.p.N_Q):
            slot = self.cq.head[q]
            if slot is None:
                slot = self.tq.head[q]
                if slot is None:
                    continue
            s = payload[slot].seq
            if g is None or s < g:
                g = s
        slot = self.tq.head[self.sq_idx]
        if slot is not None:
            s = payload[slot].seq
            if g is None or s < g:
                g = s
        return g

    def status(self, reclaim_mode=None):
        """The registered status outputs of TQ-I9 (ready_vec is per cycle, in the CycleResult)."""
        p = self.p
        return {
            "occ": [self.tq.count[q] + self.cq.count[q] for q in range(p.N_Q)],
            "st_occ": self.tq.count[self.sq_idx],
            "fast_occ": len(self.out.ff),
            "pool_used": self.pool.used,
            "pool_full": int(self.pool.used == p.POOL),
            "lock_valid": int(self.picker.lock_q is not None),
            "lock_q": self.picker.lock_q or 0,
            "reclaim_mode": int(self.pool.policy if reclaim_mode is None else reclaim_mode),
        }

    def is_empty(self):
        """TQ-V12 "empty": no entry in any queue or FIFO and pool_used = 0."""
        return (self.pool.used == 0 and not self.out.ff and not self.out.cf
                and not any(self.tq.count) and not any(self.cq.count))

    # ------------------------------------------------------------------------------------------
    # the cycle

    def _on_term(self, entry):
        """A term bit turned on (retroactive mark): count it if the entry is in its CQ."""
        if entry.loc == "CQ":
            self.tcnt[entry.q] += 1

    def step(self, req=None, fill=None, inval=None, cfg=None, resp_ready=1, err_clr=0):
        """One clock cycle. ``req`` is the payload offered on ``req`` (None: req.valid = 0),
        ``fill``/``inval`` the payloads of those streams or None, ``cfg`` the config inputs of
        the cycle (default: the test-default config), ``resp_ready`` and ``err_clr`` 0/1.
        Returns a :class:`CycleResult`."""
        p = self.p
        if cfg is None:
            cfg = self.default_cfg
        elif not isinstance(cfg, Config):
            raise ValueError(f"cfg must be a Config, got {cfg!r}")
        check_inputs(p, req, fill, inval, resp_ready, err_clr)
        payload = self.pool.payload

        # STEP 0: config ------------------------------------------------------------------------
        eff = legalise(p, cfg)
        errs = eff.errors
        reclaim_out = self.pool.policy
        if self.pool.used == 0:
            self.pool.set_policy(eff.reclaim)

        # STEP 1: outputs from S_c ----------------------------------------------------------------
        status = self.status(reclaim_out)
        g = self.oldest_uncommitted()
        gf = self.seq_next if g is None else g
        req_ready = int(self.pool.used < p.POOL
                        and (not p.FAST_PATH or len(self.out.ff) < p.FAST_DEPTH)
                        and self.seq_next - gf < p.SPAN)
        out, which = self.out.select()
        resp = None
        if out is not None:
            resp = Resp(id=out.id, warp=out.warp, cls=int(out.cls), src=int(out.src),
                        q=out.q if out.src == SRC_TQ else 0, eoi=int(out.eoi), eog=int(out.eog))
        err_port = self.err

        # STEP 2: commit decision from S_c ------------------------------------------------------
        cq_head = [None if s is None else payload[s] for s in self.cq.head]
        decision = self.picker.decide(
            cq_head, [c > 0 for c in self.tcnt], self._head(self.tq, self.sq_idx), g,
            self.out.ff_tsnap(), len(self.out.cf), p.COMMIT_DEPTH)

        # STEP 3: inval then fill ---------------------------------------------------------------
        self.ht.checks = 0
        if inval is not None:
            if self.ht.uses(inval.bank, inval.dslot):
                errs |= ERR_INVAL_LIVE                  # TQ-E5: ignored
            else:
                self.svt.clear(inval.bank, inval.dslot)
        if fill is not None:
            self.svt.fill(fill.bank, fill.dslot, fill.sector)
            self.ht.fill(fill.bank, fill.dslot, fill.sector)

        # STEP 4: readiness and pop -------------------------------------------------------------
        ready_vec = self.ht.ready_vec()
        pop = popped = None
        _, gq, valid = self.pop_arb.clock(ready_vec, 1)
        if valid:
            e = payload[self.tq.pop(gq)]
            self.cq.push(gq, e.slot)
            e.loc = "CQ"
            if e.term:
                self.tcnt[gq] += 1
            if self.tq.count[gq]:
                self.ht.check(gq, payload[self.tq.head[gq]], self.svt)
            else:
                self.ht.clear(gq)
            pop = Pop(q=gq, id=e.id)
            popped = e

        # STEP 5: apply the commit --------------------------------------------------------------
        cmt = None
        h = decision.entry
        if h is not None:
            if decision.src == STATUS:
                self.tq.pop(self.sq_idx)
                cmt = Cmt(src=int(SRC_STATUS), q=0, id=h.id)
            else:
                self.cq.pop(decision.src)
                if h.term:
                    self.tcnt[decision.src] -= 1
                cmt = Cmt(src=int(SRC_TQ), q=decision.src, id=h.id)
            h.committed = 1
            h.loc = "CF"
            self.out.push_commit(h)
            self.picker.apply(decision)

        # STEP 6: insert --------------------------------------------------------------------------
        accepted = None
        if req is not None and req_ready:
            accepted, ins_errs = self._insert(req, eff)
            errs |= ins_errs

        # STEP 7: output, release, reclaim ------------------------------------------------------
        delivered = self.out.clock(out, which, resp_ready)
        if delivered is not None:
            delivered.loc = "OUT"
            if delivered.src != SRC_FAST:
                self.pool.release(delivered)
        self.pool.reclaim()

        # STEP 8: counters and error flags ------------------------------------------------------
        c = self.counters
        inc = (("cnt_req_stall", req is not None and not req_ready),
               ("cnt_pool_full", status["pool_full"]),
               ("cnt_resp_stall", out is not None and not resp_ready),
               ("cnt_pop", pop is not None), ("cnt_commit", cmt is not None),
               ("cnt_interlock", decision.interlocked),
               ("cnt_fast", accepted is not None and accepted.src == SRC_FAST),
               ("cnt_err", errs != 0))
        for name, flag in inc:
            if flag:
                c[name] = (c[name] + 1) & COUNTER_MASK
        self.err = (0 if err_clr else self.err) | errs

        result = CycleResult(
            cycle=self.cycle, req_ready=req_ready, resp=resp, fire=int(delivered is not None),
            pop=pop, cmt=cmt, ready_vec=ready_vec, status=status, err=err_port, err_events=errs,
            accepted=accepted, interlocked=decision.interlocked, checks=self.ht.checks,
            popped=popped, committed=h, delivered=delivered)
        self.cycle += 1
        return result

    def _insert(self, req, eff):
        """STEP 6 for an accepted request; returns (entry, error events)."""
        p = self.p
        errs = 0
        cls = req.cls
        if cls == CLS_RSVD:                               # TQ-E1: stored and delivered as L/G
            cls = LG
            errs |= ERR_CLS
        e = Entry(self.n_accepted, req, cls, self.cycle)
        self.n_accepted += 1
        if req.is_status:                                 # TQ-F32, TQ-F35; TQ-E4 precedence
            self.groups.close_eog(self._on_term)
            self._alloc(e)
            e.src = SRC_STATUS
            e.term = 1
            e.loc = "SQ"
            self.tq.push(self.sq_idx, e.slot)
            return e, errs
        hit = self.svt.all_valid(req.dslot, req.need)
        if p.FAST_PATH and req.fast_path and cls != TEX and hit:   # TQ-F38
            e.src = SRC_FAST
            e.tsnap = self.seq_next
            e.loc = "FF"
            self.out.push_fast(e)
            return e, errs
        if p.FAST_PATH and req.fast_path:                 # fast path refused (TQ-E2, TQ-E3)
            if cls == TEX:
                errs |= ERR_FAST_TEX
            if not hit:
                errs |= ERR_FAST_MISS
        q = self.mapper.map(cls, req.warp, eff.mode, eff.lgq)
        self._alloc(e)
        e.src = SRC_TQ
        e.q = q
        if cls == TEX:
            errs |= self.groups.on_tex(e, q, eff.cgm, self.picker, self._on_term)
        else:
            self.groups.close_eog(self._on_term)          # TQ-F37
            e.term = 1
        e.loc = "TQ"
        self.tq.push(q, e.slot)
        if self.tq.count[q] == 1:                         # promote at insert (TQ-F12)
            self.ht.check(q, e, self.svt)
        return e, errs

    def _alloc(self, e):
        e.seq = self.seq_next
        self.seq_next += 1
        self.pool.alloc(e)

