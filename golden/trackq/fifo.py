"""SingleFifo golden: the single in-order T2D FIFO baseline (spec §4.5, TQ-F46, TQ-F47, TQ-I13).

Written on its own, as plain deques, so that it is an independent reference for
``TrackingQueuesModel`` in mode 1 (TQ-V15): one tracking queue whose head is checked once against
the sector-valid table and woken by fills, one pop per cycle into the checked queue, one commit
per cycle into the commit FIFO (COMMIT_DEPTH), ``resp`` from the commit-FIFO head, in-order reclaim
of the POOL slots at one per cycle. It treats is_status and fast_path as ordinary slow entries and
passes cls, eoi and eog through unchanged: no class rewrite, no forced or retroactive marks, no
commit units, no status or interlock rules, no error flags, no config inputs (TQ-F47). An inval
of the head's {bank, dslot} is ignored, as in ``TrackingQueues`` (TQ-E5), without a flag.

The age-span rule never applies: with in-order reclaim the span is below POOL (§4.4 RTL notes).
"""

from collections import deque

from golden.trackq.formats import COUNTER_MASK, SRC_TQ, Cmt, Pop, Resp
from golden.trackq.model import CycleResult, check_inputs
from golden.trackq.params import TrackqParams

__all__ = ["SingleFifoModel", "SINGLE_FIFO_COUNTERS"]

SINGLE_FIFO_COUNTERS = ("cnt_req_stall", "cnt_pool_full", "cnt_resp_stall", "cnt_pop",
                        "cnt_commit")


class _Item:
    __slots__ = ("index", "id", "warp", "cls", "dslot", "need", "eoi", "eog", "src", "q", "seq",
                 "tsnap", "released", "accept")

    def __init__(self, index, req, accept):
        self.index = index
        self.id, self.warp, self.cls = req.id, req.warp, req.cls
        self.dslot, self.need, self.eoi, self.eog = req.dslot, req.need, req.eoi, req.eog
        self.src, self.q, self.seq, self.tsnap = SRC_TQ, 0, index, None
        self.released = False
        self.accept = accept


class SingleFifoModel:
    """Golden model of ``SingleFifo``. Uses POOL, BANKS, SECTORS, DSLOTS, ID_W, N_WARPS and
    COMMIT_DEPTH of ``params``; the other parameters do not apply."""

    def __init__(self, params=None):
        if params is None:
            params = TrackqParams()
        if not isinstance(params, TrackqParams):
            raise ValueError(f"params must be a TrackqParams, got {params!r}")
        self.p = params
        self.cycle = 0
        self.svt = [[0] * params.DSLOTS for _ in range(params.BANKS)]
        self.tq = deque()
        self.head_miss = None
        self.cq = deque()
        self.cf = deque()
        self.order = deque()          # allocated slots, oldest first
        self.n_accepted = 0
        self.err = 0
        self.counters = dict.fromkeys(SINGLE_FIFO_COUNTERS, 0)

    def _check(self, item):
        return [n & ~self.svt[b][item.dslot[b]] if n else 0 for b, n in enumerate(item.need)]

    def is_empty(self):
        return not (self.order or self.tq or self.cq or self.cf)

    def step(self, req=None, fill=None, inval=None, cfg=None, resp_ready=1, err_clr=0):
        """One cycle; ``cfg`` and ``err_clr`` are accepted for call compatibility and ignored."""
        p = self.p
        check_inputs(p, req, fill, inval, resp_ready, err_clr)
        used = len(self.order)
        status = {"pool_used": used, "pool_full": int(used == p.POOL)}
        req_ready = int(used < p.POOL)
        out = self.cf[0] if self.cf else None
        resp = None if out is None else Resp(id=out.id, warp=out.warp, cls=out.cls, src=SRC_TQ,
                                             q=0, eoi=out.eoi, eog=out.eog)
        commit = self.cq[0] if self.cq and len(self.cf) < p.COMMIT_DEPTH else None

        if inval is not None:
            head = self.tq[0] if self.tq else None
            if not (head is not None and head.need[inval.bank]
                    and head.dslot[inval.bank] == inval.dslot):
                self.svt[inval.bank][inval.dslot] = 0
        if fill is not None:
            self.svt[fill.bank][fill.dslot] |= 1 << fill.sector
            if self.tq and self.tq[0].dslot[fill.bank] == fill.dslot:
                self.head_miss[fill.bank] &= ~(1 << fill.sector)

        ready = bool(self.tq) and not any(self.head_miss)
        popped = None
        if ready:
            popped = self.tq.popleft()
            self.cq.append(popped)
            self.head_miss = self._check(self.tq[0]) if self.tq else None

        if commit is not None:
            self.cq.popleft()
            self.cf.append(commit)

        accepted = None
        if req is not None and req_ready:
            accepted = _Item(self.n_accepted, req, self.cycle)
            self.n_accepted += 1
            self.order.append(accepted)
            self.tq.append(accepted)
            if len(self.tq) == 1:
                self.head_miss = self._check(accepted)

        delivered = None
        if out is not None and resp_ready:
            delivered = self.cf.popleft()
            delivered.released = True
        if self.order and self.order[0].released:
            self.order.popleft()

        c = self.counters
        for name, flag in (("cnt_req_stall", req is not None and not req_ready),
                           ("cnt_pool_full", status["pool_full"]),
                           ("cnt_resp_stall", out is not None and not resp_ready),
                           ("cnt_pop", popped is not None), ("cnt_commit", commit is not None)):
            if flag:
                c[name] = (c[name] + 1) & COUNTER_MASK
        result = CycleResult(
            cycle=self.cycle, req_ready=req_ready, resp=resp, fire=int(delivered is not None),
            pop=None if popped is None else Pop(q=0, id=popped.id),
            cmt=None if commit is None else Cmt(src=SRC_TQ, q=0, id=commit.id),
            ready_vec=int(ready), status=status, err=0, err_events=0, accepted=accepted,
            popped=popped, committed=commit, delivered=delivered)
        self.cycle += 1
        return result
