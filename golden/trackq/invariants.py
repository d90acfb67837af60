"""Trace checker for the verification obligations TQ-V2..V13 and the rules they rest on.

It sees only what a testbench sees: per cycle the inputs (req offered, fill, inval, config,
resp.ready, err_clr) and the port values (req.ready, resp, pop, cmt, ready_vec, the TQ-I9 status
outputs, err). From these it rebuilds the block's queues offline, written from the spec's rules
independently of ``golden.trackq.model``, and checks:

- TQ-V2 exactly once; TQ-V3 per-queue, per-warp and mode-1 order; TQ-V6 fairness (N_Q cycles);
  TQ-V7 work conservation and the round-robin grant (TQ-F20, brute force over the ready queues);
  TQ-V8 back-pressure (pool_used with either reclaim policy and its switching, the fast FIFO and
  the age span rebuilt from the events, TQ-F7..F11); TQ-V9 status ordering; TQ-V10 fast/slow
  ordering; TQ-V11 (contract TEX traffic) no ERR_TEX_SPLIT and no TEX unit of another queue inside
  a locked instruction; TQ-V12 liveness bound; TQ-V13 stream rule;
- TQ-V4/V5 through the exact ready vector: a TQ is ready iff its head's needed sectors are all
  valid in the SVT rebuilt from fill and inval (an inval of a current head's {bank, dslot} is
  ignored, TQ-E5), which is TQ-F12..F17 for heads that cannot lose a sector while they are head;
- the route of every request (fast path, status, TQ; TQ-F38, TQ-E2..E4) and the queue map of
  every TQ entry (TQ-F1..F6, §4.3 re-implemented);
- the effective eoi/eog of every delivered entry: forced eog (TQ-F28, ``>=``), retroactive eog
  (TQ-F35, TQ-F37) and eoi on a split (TQ-F36), pass-through otherwise (§6 item 8, TQ-F43);
- the commit rules at every commit: commit-FIFO room (TQ-F24), unit lock (TQ-F25), a TEX unit
  starts only with its terminator in the checked queue (TQ-F23), instruction lock (TQ-F29),
  oldest-first for partial units (TQ-F30), status only when oldest (TQ-F33), TEX older than the
  status head (TQ-F34), interlock (TQ-F39), commit-FIFO order and the output merge with its hold
  rule (TQ-F27, TQ-F42);
- the sticky ``err`` register every cycle (TQ-E1..E9, TQ-I11, err_clr), the registered status
  outputs (TQ-I9) and the counters that follow from the events (TQ-I10).

Violations are collected; :meth:`TraceChecker.finish` raises ``AssertionError`` listing them.
"""

import heapq
from collections import deque
from dataclasses import dataclass

from golden.trackq.formats import (COUNTER_MASK, ERR_CFG, ERR_CLS, ERR_FAST_MISS, ERR_FAST_TEX,
                                   ERR_INVAL_LIVE, ERR_TEX_SPLIT, LG, SRC_FAST, SRC_STATUS, SRC_TQ,
                                   TEX, TTU)

__all__ = ["TraceChecker", "Observed"]


@dataclass(frozen=True)
class _Cfg:
    mode: int
    lgq: int
    cgm: int
    reclaim: int
    errors: int


def _legal(p, cfg):
    """The config a cycle acts on, from TQ-E6..E8 (written here again so that the checker does
    not take its expectations from the model's ``legalise``)."""
    if cfg is None:
        cfg = p.default_config()
    mode, lgq, cgm, reclaim = cfg.cfg_mode + 1, cfg.cfg_lgq, cfg.cfg_cgm, cfg.cfg_reclaim
    bad = cgm < 1 or cgm > p.POOL
    cgm = 1 if cgm < 1 else p.POOL if cgm > p.POOL else cgm
    if p.N_Q == 1 and mode in (2, 3):
        mode, bad = 1, True
    if mode == 3 and not 1 <= lgq < p.N_Q:
        lgq, bad = (1 if lgq < 1 else p.N_Q - 1), True
    if reclaim and not p.FREELIST:
        reclaim, bad = 0, True
    return _Cfg(mode, lgq, cgm, reclaim, ERR_CFG if bad else 0)


@dataclass
class Observed:
    """One cycle as a testbench sees it."""
    cycle: int
    req: object
    fill: object
    inval: object
    cfg: object
    resp_ready: int
    err_clr: int
    req_ready: int
    resp: object
    pop: object
    cmt: object
    ready_vec: int
    status: dict
    err: int


class _E:
    """What the checker knows about one accepted request."""
    __slots__ = ("k", "req", "accept", "eff", "cls", "pop", "pop_q", "cmt", "cmt_src", "cmt_q",
                 "resp", "payload", "src", "seq", "tsnap", "q", "eoi_t", "eog_t")

    def __init__(self, k, req, accept, eff):
        self.k, self.req, self.accept, self.eff = k, req, accept, eff
        self.cls = LG if req.cls == 3 else req.cls
        self.pop = self.pop_q = self.cmt = self.cmt_src = self.cmt_q = None
        self.resp = self.payload = self.src = self.seq = self.tsnap = self.q = None
        self.eoi_t = self.eog_t = None        # cycle each mark became 1 (TEX TQ entries)

    def term_before(self, c):
        """term = eoi | eog was set in a cycle before c."""
        return any(t is not None and t < c for t in (self.eoi_t, self.eog_t))


class TraceChecker:
    def __init__(self, params, contract_tex=True):
        self.p = params
        self.contract_tex = contract_tex
        self.cycles = []
        self.violations = []

    def fail(self, cycle, text):
        if len(self.violations) < 200:
            self.violations.append(f"cycle {cycle}: {text}")

    def observe(self, cycle, req, fill, inval, cfg, resp_ready, err_clr, result):
        """Record one cycle: the inputs and a CycleResult (only its port values are used)."""
        self.cycles.append(Observed(cycle, req, fill, inval, cfg, int(resp_ready), int(err_clr),
                                    result.req_ready, result.resp, result.pop, result.cmt,
                                    result.ready_vec, dict(result.status), result.err))

    def finish(self, drained=True, counters=None):
        """Run every check; AssertionError listing the violations (first 30)."""
        ents = self._events(drained)
        if ents is not None:
            self._classify(ents)
            self._check_map(ents)
            self._sweep(ents)
            self._orders(ents)
            self._liveness(ents)
            if counters is not None:
                self._counters(ents, counters)
        if self.violations:
            raise AssertionError("trackq trace violations:\n  " + "\n  ".join(self.violations[:30]))

    # pass 1: events -> entries (TQ-V2) ----------------------------------------------------------
    def _events(self, drained):
        p = self.p
        ents = []
        live = {}
        for o in self.cycles:
            for kind in ("pop", "cmt"):
                ev = getattr(o, kind)
                if ev is None:
                    continue
                k = live.get(ev.id)
                if k is None:
                    self.fail(o.cycle, f"TQ-V2: {kind} of id {ev.id}, which is not outstanding")
                    continue
                e = ents[k]
                if getattr(e, kind) is not None:
                    self.fail(o.cycle, f"TQ-V2: second {kind} of id {ev.id}")
                if kind == "pop":
                    e.pop, e.pop_q = o.cycle, ev.q
                else:
                    e.cmt, e.cmt_src, e.cmt_q = o.cycle, ev.src, ev.q
            if o.resp is not None and o.resp_ready:
                k = live.pop(o.resp.id, None)
                if k is None:
                    self.fail(o.cycle, f"TQ-V2: resp of id {o.resp.id}, which is not outstanding")
                else:
                    ents[k].resp, ents[k].payload = o.cycle, o.resp
            if o.req is not None and o.req_ready:
                if o.req.id in live:
                    self.fail(o.cycle, f"TQ-E11: id {o.req.id} accepted while outstanding")
                    return None
                eff = _legal(p, o.cfg)
                live[o.req.id] = len(ents)
                ents.append(_E(len(ents), o.req, o.cycle, eff))
        if drained and live:
            self.fail(len(self.cycles), f"TQ-V2: {len(live)} accepted ids never delivered: "
                                        f"{sorted(live)[:10]}")
        return ents

    def _classify(self, ents):
        seq = 0
        for e in ents:
            if e.payload is not None:
                e.src = e.payload.src
            elif e.cmt is not None:
                e.src = e.cmt_src
            elif e.pop is not None:
                e.src = SRC_TQ
            elif e.req.is_status:
                e.src = SRC_STATUS
            if e.src == SRC_FAST:
                e.tsnap = seq
                if e.pop is not None or e.cmt is not None:
                    self.fail(e.accept, f"TQ-V2: fast entry id {e.req.id} popped or committed")
            elif e.src is not None:
                e.seq = seq
                seq += 1
            if e.req.is_status != (e.src == SRC_STATUS) and e.src is not None:
                self.fail(e.accept, f"TQ-F32/E4: id {e.req.id} (is_status {e.req.is_status}) "
                                    f"delivered with src {e.src}")
            if e.src == SRC_STATUS and e.pop is not None:
                self.fail(e.accept, f"TQ-F32: status id {e.req.id} was popped (checked)")
            if e.src == SRC_TQ:
                e.q = e.pop_q
                for name, v in (("cmt.q", e.cmt_q), ("resp.q", e.payload and e.payload.q)):
                    if v is not None and v != e.q:
                        self.fail(e.accept, f"id {e.req.id}: {name} {v} != pop.q {e.q}")

    # queue map (TQ-F1..F6) -----------------------------------------------------------------------
    def _check_map(self, ents):
        n_q = self.p.N_Q
        ptr = 0
        for e in ents:
            if e.src != SRC_TQ:
                continue
            mode, lgq = e.eff.mode, e.eff.lgq
            if mode == 1:
                q = 0
            elif e.cls != TTU:
                q = 0 if mode == 2 else e.req.warp % (lgq if mode == 3 else n_q)
            else:
                lo = {2: 1, 3: lgq, 4: 0}[mode]
                hi = n_q - 1
                q = ptr if lo <= ptr <= hi else lo
                ptr = q + 1 if q < hi else lo
            if e.q is not None and e.q != q:
                self.fail(e.accept, f"TQ-F1..F5: id {e.req.id} (cls {e.cls}, warp {e.req.warp}, "
                                    f"mode {mode}, W {lgq}) went to TQ{e.q}, expected TQ{q}")

    # the cycle sweep -----------------------------------------------------------------------------
    def _sweep(self, ents):
        p = self.p
        n_q = p.N_Q
        at_accept, at_pop, at_cmt, at_resp = {}, {}, {}, {}
        for e in ents:
            at_accept[e.accept] = e
            for ev, table in ((e.pop, at_pop), (e.cmt, at_cmt), (e.resp, at_resp)):
                if ev is not None:
                    table[ev] = e
        svt = {}
        tq = [deque() for _ in range(n_q)]
        cq = [deque() for _ in range(n_q)]
        sq, ff, cf = deque(), deque(), deque()
        policy, used, order = 0, 0, deque()
        live_seqs, committed = [], set()      # heap of uncommitted slow seqs, lazy deletion
        seq_next = 0
        rr = 0
        hold = False
        ready_run = [0] * n_q
        unit_q = lock_q = None
        crr = 0
        self._interlock = 0
        grp = {"inst_open": False, "inst_q": None, "last": None, "open": False, "cnt": 0}
        err = 0
        prev = None
        self._used_end = used_end = []
        self._err_cycles = 0

        def valid(req):
            return all(not n or (svt.get((b, req.dslot[b]), 0) & n) == n
                       for b, n in enumerate(req.need))

        def partial(x, c):
            return x.eog_t is not None and x.eog_t < c and not (x.eoi_t is not None
                                                                 and x.eoi_t < c)

        for o in self.cycles:
            c = o.cycle
            events = 0
            if o.err != err:
                self.fail(c, f"TQ-I11: err = {o.err:#04x}, expected {err:#04x}")
            # STEP 0/1: views of S_c ----------------------------------------------------------------
            eff = _legal(p, o.cfg)
            events |= eff.errors
            want = {"occ": [len(tq[q]) + len(cq[q]) for q in range(n_q)], "st_occ": len(sq),
                    "fast_occ": len(ff), "pool_used": used, "pool_full": int(used == p.POOL),
                    "reclaim_mode": policy,
                    "lock_valid": int(lock_q is not None), "lock_q": lock_q or 0}
            for k, v in want.items():
                if k in o.status and o.status[k] != v:
                    self.fail(c, f"TQ-I9: {k} = {o.status[k]}, expected {v}")
            if used == 0:
                policy = eff.reclaim
            if used > p.POOL or sum(want["occ"]) + len(sq) > used:
                self.fail(c, "TQ-V8: occupancy exceeds pool_used or POOL")
            while live_seqs and live_seqs[0] in committed:
                heapq.heappop(live_seqs)
            g = live_seqs[0] if live_seqs else None
            span = seq_next - (seq_next if g is None else g)
            ready_exp = int(used < p.POOL and (not p.FAST_PATH or len(ff) < p.FAST_DEPTH)
                            and span < 1 << (p.SEQ_W - 2))
            if o.req_ready != ready_exp:
                self.fail(c, f"TQ-V8: req.ready = {o.req_ready}, expected {ready_exp} (pool_used "
                             f"{used}, fast {len(ff)}, span {span})")
            pres = cf[0] if hold else ff[0] if ff else cf[0] if cf else None
            pres_from_cf = pres is not None and (hold or not ff)
            got = None if o.resp is None else o.resp.id
            if (None if pres is None else pres.req.id) != got:
                self.fail(c, f"TQ-F42: resp presents id {got}, expected "
                             f"{None if pres is None else pres.req.id}")
            if prev is not None and prev.resp is not None and not prev.resp_ready \
                    and o.resp != prev.resp:
                self.fail(c, "TQ-V13: resp changed while valid and not ready")
            # STEP 2: commit rules (decision from S_c) ------------------------------------------
            cm = at_cmt.get(c)
            if cm is not None:
                self._check_commit(c, cm, cf, ff, sq, cq, g, unit_q, lock_q, partial)
            want_cm, blocked = self._decide(c, cf, ff, sq, cq, g, unit_q, lock_q, crr, partial)
            if want_cm is not cm:
                name = (lambda x: None if x is None else x.req.id)
                self.fail(c, f"TQ-F26: commit of id {name(cm)}, expected id {name(want_cm)}")
            if blocked and cm is None:
                self._interlock += 1
            if cm is not None and cm.src == SRC_TQ and unit_q is None:
                crr = (cm.q + 1) % n_q
            # STEP 3: inval (E5), fill -----------------------------------------------------------
            if o.inval is not None:
                b, d = o.inval.bank, o.inval.dslot
                if any(tq[q] and tq[q][0].req.need[b] and tq[q][0].req.dslot[b] == d
                       for q in range(n_q)):
                    events |= ERR_INVAL_LIVE
                else:
                    svt[(b, d)] = 0
            if o.fill is not None:
                key = (o.fill.bank, o.fill.dslot)
                svt[key] = svt.get(key, 0) | (1 << o.fill.sector)
            # STEP 4: readiness and pop ----------------------------------------------------------
            rv = sum(1 << q for q in range(n_q) if tq[q] and valid(tq[q][0].req))
            if rv != o.ready_vec:
                self.fail(c, f"TQ-V4/V5: ready_vec {o.ready_vec:#x}, expected {rv:#x}")
            rv = o.ready_vec
            if (o.pop is not None) != (rv != 0):
                self.fail(c, f"TQ-V7: pop.valid = {int(o.pop is not None)} with ready_vec {rv:#x}")
            if rv:
                grant = min((q for q in range(n_q) if rv >> q & 1), key=lambda q: (q - rr) % n_q)
                if o.pop is not None and o.pop.q != grant:
                    self.fail(c, f"TQ-F20: popped TQ{o.pop.q}, round robin from {rr} gives "
                                 f"TQ{grant}")
                rr = (grant + 1) % n_q
            for q in range(n_q):
                if rv >> q & 1 and not (o.pop is not None and o.pop.q == q):
                    ready_run[q] += 1
                    if ready_run[q] >= n_q:
                        self.fail(c, f"TQ-V6: TQ{q} ready for {n_q} cycles without a pop")
                else:
                    ready_run[q] = 0
            pe = at_pop.get(c)
            if pe is not None:
                if not tq[pe.q] or tq[pe.q][0] is not pe:
                    self.fail(c, f"TQ-V3/F21: pop of id {pe.req.id} is not the TQ{pe.q} head")
                else:
                    tq[pe.q].popleft()
                    cq[pe.q].append(pe)
                if not valid(pe.req):
                    self.fail(c, f"TQ-V4: id {pe.req.id} popped with a needed sector invalid")
            # STEP 5: commit ---------------------------------------------------------------------
            if cm is not None:
                if cm.src == SRC_STATUS:
                    if sq and sq[0] is cm:
                        sq.popleft()
                elif cq[cm.q] and cq[cm.q][0] is cm:
                    cq[cm.q].popleft()
                committed.add(cm.seq)
                cf.append(cm)
                if cm.src == SRC_TQ:
                    if cm.cls == TEX and not cm.term_before(c):
                        unit_q = cm.q
                    else:
                        unit_q = None
                        if cm.cls == TEX and partial(cm, c):
                            lock_q = cm.q
                        if cm.cls == TEX and cm.eoi_t is not None and cm.eoi_t < c \
                                and lock_q == cm.q:
                            lock_q = None
            # STEP 6: insert ---------------------------------------------------------------------
            ae = at_accept.get(c)
            if ae is not None:
                r = ae.req
                if r.cls == 3:
                    events |= ERR_CLS
                hit = valid(r)
                fast = bool(p.FAST_PATH and r.fast_path and not r.is_status and ae.cls != TEX
                            and hit)
                if ae.src is not None and fast != (ae.src == SRC_FAST):
                    self.fail(c, f"TQ-F38/E2/E3: id {r.id} routed src {ae.src}, expected "
                                 f"{'fast' if fast else 'slow'}")
                if p.FAST_PATH and r.fast_path and not r.is_status and not fast:
                    events |= (ERR_FAST_TEX if ae.cls == TEX else 0) | (0 if hit else ERR_FAST_MISS)
                if ae.src == SRC_FAST:
                    ff.append(ae)
                elif ae.src is not None:
                    seq_next += 1
                    used += 1
                    order.append(ae)
                    heapq.heappush(live_seqs, ae.seq)
                    (sq if ae.src == SRC_STATUS else tq[ae.q]).append(ae)
                    events, lock_q = self._groups(c, ae, grp, events, lock_q)
            # STEP 7: output, release, reclaim ---------------------------------------------------
            de = at_resp.get(c)
            hold = pres_from_cf and not o.resp_ready
            if de is not None:
                self._check_marks(de)
                if de.src == SRC_FAST:
                    if ff and ff[0] is de:
                        ff.popleft()
                else:
                    if cf and cf[0] is de:
                        cf.popleft()
                    if policy == 1:
                        used -= 1
            if policy == 0 and order and order[0].resp is not None and order[0].resp <= c:
                order.popleft()
                used -= 1
            while policy == 1 and order and order[0].resp is not None and order[0].resp <= c:
                order.popleft()
            # STEP 8 -------------------------------------------------------------------------------
            err = (0 if o.err_clr else err) | events
            if events:
                self._err_cycles += 1
            prev = o
            used_end.append(used)

    def _decide(self, c, cf, ff, sq, cq, g, unit_q, lock_q, crr, partial):
        """The commit decision of S_c (TQ-F24..F26, F29, F30, F33, F34, F39, F40): (entry or
        None, a candidate was excluded only by the interlock)."""
        p = self.p
        if len(cf) >= p.COMMIT_DEPTH:
            return None, False

        def ilk(x):
            return not ff or x.seq < ff[0].tsnap

        if unit_q is not None:
            h = cq[unit_q][0] if cq[unit_q] else None
            if h is None:
                self.fail(c, f"TQ-F25: unit of TQ{unit_q} has no next entry")
                return None, False
            return (h, False) if ilk(h) else (None, True)
        blocked = False
        if sq and sq[0].seq == g:
            if ilk(sq[0]):
                return sq[0], False
            blocked = True
        eligible = []
        for q in range(p.N_Q):
            if not cq[q]:
                continue
            h = cq[q][0]
            if h.cls == TEX:
                term = next((x for x in cq[q] if x.cls != TEX or x.term_before(c)), None)
                if term is None or (lock_q is not None and lock_q != q):
                    continue
                if sq and not h.seq < sq[0].seq:
                    continue
                if term.cls == TEX and partial(term, c) and lock_q != q and h.seq != g:
                    continue
            if ilk(h):
                eligible.append(q)
            else:
                blocked = True
        if eligible:
            return cq[min(eligible, key=lambda q: (q - crr) % p.N_Q)][0], False
        return None, blocked

    def _check_commit(self, c, cm, cf, ff, sq, cq, g, unit_q, lock_q, partial):
        p = self.p
        if len(cf) >= p.COMMIT_DEPTH:
            self.fail(c, "TQ-F24: commit with a full commit FIFO")
        if ff and not cm.seq < ff[0].tsnap:
            self.fail(c, f"TQ-F39: id {cm.req.id} (seq {cm.seq}) committed past fast entry "
                         f"tsnap {ff[0].tsnap}")
        if unit_q is not None and not (cm.src == SRC_TQ and cm.q == unit_q):
            self.fail(c, f"TQ-F25: unit of TQ{unit_q} interrupted by id {cm.req.id}")
        if cm.src == SRC_STATUS:
            if not sq or sq[0] is not cm or cm.seq != g:
                self.fail(c, f"TQ-F33: status id {cm.req.id} committed while not the oldest")
            return
        if not cq[cm.q] or cq[cm.q][0] is not cm:
            self.fail(c, f"commit of id {cm.req.id} is not the CQ{cm.q} head")
            return
        if cm.cls != TEX:
            return
        if sq and not cm.seq < sq[0].seq:
            self.fail(c, f"TQ-F34: TEX id {cm.req.id} committed past an older status packet")
        if unit_q is not None:
            return
        term = next((x for x in cq[cm.q] if x.cls == TEX and x.term_before(c)), None)
        if term is None:
            self.fail(c, f"TQ-F23: TEX unit of id {cm.req.id} started without its terminator")
            return
        if lock_q is not None and lock_q != cm.q:
            self.fail(c, f"TQ-F29: TEX unit of TQ{cm.q} started under the lock of TQ{lock_q}")
        if partial(term, c) and lock_q != cm.q and cm.seq != g:
            self.fail(c, f"TQ-F30: partial unit of id {cm.req.id} (seq {cm.seq}) started while "
                         f"G = {g}")

    def _groups(self, c, e, grp, events, lock_q):
        """The group tracker of TQ-F28, F35..F37, from the spec's words: sets the mark times of
        TEX entries; returns the cycle's error events and the lock after a split."""
        last = grp["last"]
        if e.src == SRC_STATUS or e.cls != TEX:
            if grp["open"]:
                last.eog_t = c
                grp["open"], grp["cnt"] = False, 0
            return events, lock_q
        if grp["inst_open"] and grp["inst_q"] != e.q:
            events |= ERR_TEX_SPLIT
            if last.cmt is None or last.cmt > c:
                if last.eoi_t is None:
                    last.eoi_t = c
            elif lock_q == grp["inst_q"]:
                lock_q = None
            grp["inst_open"] = grp["open"] = False
            grp["cnt"] = 0
        grp["cnt"] += 1
        if e.req.eoi:
            e.eoi_t = c
        if e.req.eog or grp["cnt"] >= e.eff.cgm:
            e.eog_t = c
        term = e.req.eoi or e.eog_t is not None
        grp.update(last=e, inst_q=e.q, inst_open=not e.req.eoi, open=not term)
        if term:
            grp["cnt"] = 0
        return events, lock_q

    def _check_marks(self, e):
        r, out = e.req, e.payload
        want = {"warp": r.warp, "cls": e.cls, "q": e.q if e.src == SRC_TQ else 0}
        if e.src == SRC_TQ and e.cls == TEX:
            want.update(eoi=int(e.eoi_t is not None), eog=int(e.eog_t is not None))
        else:
            want.update(eoi=r.eoi, eog=r.eog)
        for k, v in want.items():
            if getattr(out, k) != v:
                self.fail(e.resp, f"TQ-F43/F28/F35..F37/E1: resp.{k} = {getattr(out, k)} for id "
                                  f"{r.id}, expected {v}")

    # offline order properties --------------------------------------------------------------------
    def _orders(self, ents):
        n_q = self.p.N_Q
        tqe = [e for e in ents if e.src == SRC_TQ and e.resp is not None]
        for q in range(n_q):                                            # TQ-V3 per queue
            rs = [e.resp for e in tqe if e.q == q]
            if rs != sorted(rs):
                self.fail(0, f"TQ-V3: TQ{q} entries delivered out of acceptance order")
        by_key = {}
        for e in tqe:                                                   # TQ-V3 per warp
            if e.cls in (LG, TEX):
                key = (e.req.warp, e.eff.mode, e.eff.lgq if e.eff.mode == 3 else None)
                by_key.setdefault(key, []).append(e.resp)
        for key, rs in by_key.items():
            if rs != sorted(rs):
                self.fail(0, f"TQ-V3: warp {key[0]} (mode {key[1]}) delivered out of order")
        rs = [e.resp for e in tqe if e.eff.mode == 1]                   # TQ-V3 mode 1
        if rs != sorted(rs):
            self.fail(0, "TQ-V3: mode-1 TQ entries delivered out of acceptance order")
        slow = [e for e in ents if e.src in (SRC_TQ, SRC_STATUS) and e.cmt is not None]
        for s in (e for e in slow if e.src == SRC_STATUS):             # TQ-V9
            for e in slow:
                if e.seq < s.seq and not e.cmt < s.cmt:
                    self.fail(s.cmt, f"TQ-V9: id {e.req.id} older than status {s.req.id} "
                                     f"commits after it")
                if e.seq > s.seq and e.src == SRC_TQ and e.cls == TEX and not e.cmt > s.cmt:
                    self.fail(s.cmt, f"TQ-V9: TEX id {e.req.id} younger than status "
                                     f"{s.req.id} commits before it")
        slow_resp = [e for e in ents if e.seq is not None and e.resp is not None]
        for f in (e for e in ents if e.src == SRC_FAST and e.resp is not None):   # TQ-V10
            for e in slow_resp:
                if e.seq >= f.tsnap and not e.resp > f.resp:
                    self.fail(f.resp, f"TQ-V10: slow id {e.req.id} (seq {e.seq}) delivered "
                                      f"before fast id {f.req.id} (tsnap {f.tsnap})")
        if self.contract_tex:                                           # TQ-V11
            for o in self.cycles:
                if o.err & ERR_TEX_SPLIT:
                    self.fail(o.cycle, "TQ-V11: ERR_TEX_SPLIT set under contract TEX traffic")
                    break
            locked = None
            for e in sorted((e for e in slow if e.src == SRC_TQ and e.cls == TEX),
                            key=lambda e: e.cmt):
                if locked is not None and e.q != locked:
                    self.fail(e.cmt, f"TQ-V11: TEX id {e.req.id} of TQ{e.q} commits inside the "
                                     f"locked instruction of TQ{locked}")
                out = e.payload
                if out is None:
                    continue
                if out.eoi and locked == e.q:
                    locked = None
                elif out.eog and not out.eoi:
                    locked = e.q
        cf_order = [e.req.id for e in sorted(slow, key=lambda e: e.cmt) if e.resp is not None]
        resp_order = [e.req.id for e in sorted((e for e in slow if e.resp is not None),
                                               key=lambda e: e.resp)]
        if cf_order != resp_order:
            self.fail(0, "TQ-F27: slow entries not delivered in commit order")

    def _liveness(self, ents):
        """TQ-V12: with resp.ready = 1 after t, empty by the end of t + 4·POOL + 16."""
        cyc = self.cycles
        if not cyc:
            return
        t = max([e.accept for e in ents] + [o.cycle for o in cyc if o.fill is not None] + [0])
        if not all(o.resp_ready for o in cyc if o.cycle > t):
            return
        bound = t + 4 * self.p.POOL + 16
        if len(cyc) <= bound:
            if any(e.resp is None for e in ents) or self._used_end[-1]:
                self.fail(len(cyc), "TQ-V12: trace ended before the block was empty")
            return
        if any(e.resp is None or e.resp > bound for e in ents) or self._used_end[bound]:
            self.fail(bound, f"TQ-V12: not empty at the end of cycle t + 4·POOL + 16 = {bound} "
                             f"(t = {t})")

    def _counters(self, ents, counters):
        cyc = self.cycles
        want = {
            "cnt_req_stall": sum(1 for o in cyc if o.req is not None and not o.req_ready),
            "cnt_resp_stall": sum(1 for o in cyc if o.resp is not None and not o.resp_ready),
            "cnt_pop": sum(1 for o in cyc if o.pop is not None),
            "cnt_commit": sum(1 for o in cyc if o.cmt is not None),
            "cnt_pool_full": sum(1 for o in cyc if o.status.get("pool_full")),
            "cnt_fast": sum(1 for e in ents if e.src == SRC_FAST),
            "cnt_err": self._err_cycles,
            "cnt_interlock": self._interlock,
        }
        for k, v in want.items():
            if k in counters and counters[k] != v & COUNTER_MASK:
                self.fail(len(cyc), f"TQ-I10: {k} = {counters[k]}, expected {v}")
