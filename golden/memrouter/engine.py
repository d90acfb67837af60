"""The migration engine (spec §4.8, MR-F19..F38, MR-E9..E11): command FIFO and automatic
triggers, PROMOTE (Fig. 3B 355-380), exclusive SWAP with two lines, DEMOTE by relabel, copy or
inclusive drop/copy-home, the FILL walker next to demand fills, the WRITE sequencer, FENCE,
CLOCK victims, ABORT on a poisoned fill, and FLUSH.

Each command is a generator: it yields True after an action and False while it waits (FENCE,
a free line, walker limits, acknowledgements). A PT update and the release of the command's
lines happen in one step, so no processor part is routed between them (docs §ambiguities).
"""

from collections import deque

from golden.memrouter.formats import (EV_ABORT, EV_DONE, EV_LINE_FULL, EV_PT_UPDATE, EV_REJECT,
                                      EV_START, FAR, FULL_BE, MIGRATING, NEAR, OP_DEMOTE,
                                      OP_PROMOTE, OP_SWAP, PTE, REJ_FULL, REJ_NOFRAME, REJ_RANGE,
                                      REJ_STATE, SRC_EXPLICIT, ST_ABORTED, ST_BUSY, ST_DONE,
                                      ST_IDLE, STABLE, start_arg)

__all__ = ["Engine"]

MIG = 2


class Engine:
    def __init__(self, router):
        self.r = router
        self.gen = None
        self.cmdq = deque()
        self.status = ST_IDLE
        self.status_ppn = 0
        self.walk_inflight = 0
        self.abort_sector = None
        self.cmd_pages = {}          # ppn -> PTE before the command
        self.cmd_lines = []
        self.flush_pending = False
        self.history = []            # one record per executed command (op, p, outcome, ...)
        self.line_fulls = 0

    @property
    def idle(self):
        return self.gen is None

    # ----------------------------------------------------------------- intake
    def write_cmd(self, word, arg):
        """A MIG_CMD write: returns the csr_rsp err bit (MR-F19, MR-E11, MR-E12)."""
        r = self.r
        if not r.cfg.EN_EXPLICIT:
            return 1
        op, p = word & 0xF, (word >> 16) & 0xFFFF
        if len(self.cmdq) >= r.p.CMDQ_DEPTH:
            self._set_status(REJ_FULL, p)
            r.emit(EV_REJECT, 0, p, REJ_FULL)
            return 1
        self.cmdq.append((op, p, arg & 0xFFFF))
        return 0

    def trigger(self, p, source):
        """Start an automatic PROMOTE now (the caller checked MR-F22)."""
        self._run(self._command(OP_PROMOTE, p, 0, source))

    def flush(self):
        """CMD = FLUSH: wait until the engine is idle (and no fill is in flight), then evict
        every valid line in ascending order (MR-F47)."""
        self.flush_pending = True

    def can_step(self):
        return self.gen is not None or bool(self.cmdq) or self.flush_pending

    def step(self):
        r = self.r
        if self.gen is None:
            if self.flush_pending:
                if any(line.pending for line in r.lines):
                    return False
                for line in r.lines:
                    if line.tv:
                        r.evict(line)
                self.flush_pending = False
                return True
            if not self.cmdq:
                return False
            op, p, v = self.cmdq.popleft()
            code = self._validate(op, p, v)
            if code is not None:
                self._set_status(code, p)
                r.emit(EV_REJECT, 0, p, code)
                return True
            self._run(self._command(op, p, v, SRC_EXPLICIT))
            return True
        before = self._fingerprint()
        try:
            moved = next(self.gen)
        except StopIteration:
            self.gen = None
            return True
        # a step that waits may still have acted first (an eviction, a state change)
        return bool(moved) or self._fingerprint() != before

    def _fingerprint(self):
        r = self.r
        return (r.ports.seq, len(r.events), len(self.cmd_pages), len(self.cmd_lines),
                len(r.nfree), len(r.ffree))

    def _run(self, gen):
        self.gen = gen
        try:
            next(gen)
        except StopIteration:
            self.gen = None

    def _set_status(self, code, p):
        self.status, self.status_ppn = code, p

    def _validate(self, op, p, v):
        """MR-E11 checks in order: op, range, state, frames. None = execute."""
        r = self.r
        excl = r.cfg.MODE == 0
        if op not in (OP_PROMOTE, OP_DEMOTE, OP_SWAP):
            return REJ_STATE
        if p >= r.pages or (op == OP_SWAP and v >= r.pages):
            return REJ_RANGE
        e = r.pt[p]
        if op == OP_SWAP and not excl:
            return REJ_STATE
        if op in (OP_PROMOTE, OP_SWAP) and not e.is_(STABLE, FAR):
            return REJ_STATE
        if op == OP_DEMOTE and not e.is_(STABLE, NEAR):
            return REJ_STATE
        if op == OP_SWAP and (not r.pt[v].is_(STABLE, NEAR) or p == v):
            return REJ_STATE
        if op == OP_PROMOTE and excl and not r.nfree and not any(
                q != p and r.pt[q].is_(STABLE, NEAR) for q in range(r.pages)):
            return REJ_NOFRAME
        if op == OP_DEMOTE and excl and e.port == 0 and not r.ffree:
            return REJ_NOFRAME
        return None

    # ----------------------------------------------------------------- command bodies
    def _command(self, op, p, v, source):
        r = self.r
        self.abort_sector = None
        self.cmd_pages, self.cmd_lines = {}, []
        self.walk_inflight = 0
        self.line_fulls = 0
        if op == OP_DEMOTE:
            ok = yield from self._demote(p, source)
        else:
            ok = yield from self._promote(p, source, v if op == OP_SWAP else None, op)
        if ok:
            self._set_status(ST_DONE, p)
            r.count("MIG_DONE")
            r.emit(EV_DONE, 0, p, r.counters["MIG_WALK_FILLS"] & 0xFFFFFFFF)
        else:
            yield from self._abort(p)
        self.history.append(dict(
            op=op, p=p, v=v, source=source, done=ok, line_fulls=self.line_fulls,
            **{k: r.counters[k] for k in ("MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_PREVALID",
                                          "MIG_FULL_WRITES")}))

    def _mig_start(self, line, p, op, source, victim=0):
        r = self.r
        for name in ("MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_FULL_WRITES"):
            r.counters[name] = 0
        r.counters["MIG_PREVALID"] = (line.valid | line.pending).bit_count() if line else 0
        self._set_status(ST_BUSY, p)
        r.emit(EV_START, line.idx if line else 0, p,
               start_arg(op, source, line is not None, victim))

    def _migrating(self, p):
        r = self.r
        self.cmd_pages.setdefault(p, r.pt[p])
        r.pt[p] = r.pt[p].with_state(MIGRATING)

    def _line_full(self, line, p):
        assert line.full and line.lock
        self.line_fulls += 1
        self.r.emit(EV_LINE_FULL, line.idx, p)

    def _pt_update(self, p, pte, *written):
        for line in written:                 # MR-V7: line full, every write-out acknowledged
            assert line.full and not line.acks and not line.dirty
        self.r.pt[p] = pte
        self.r.emit(EV_PT_UPDATE, 0, p, pte.encode())

    def _alloc(self, p):
        """A line for page p (its own if it has one); waits for a victim."""
        while True:
            line = self.r.lines.of(p) or self.r.allocate(p)
            if line is not None:
                return line
            yield False

    def _promote(self, p, source, v, op):
        r = self.r
        a = yield from self._alloc(p)
        e = r.pt[p]
        a.lock = True
        self._migrating(p)
        self.cmd_lines.append(a)
        self._mig_start(a, p, op, source, v or 0)
        ok = yield from self._fill(a, e)
        if not ok:
            return False
        self._line_full(a, p)
        if r.cfg.MODE == 0:
            if v is None and r.nfree:
                n = r.nfree.popleft()
                yield from self._write([(a, n)])
                self._pt_update(p, PTE.of(STABLE, NEAR, n), a)
                r.ffree.append(e.desc)
                a.clear()
                return True
            if v is None:
                v = r.victim_clock(p)
            return (yield from self._swap_tail(p, a, e.desc, v))
        if not r.nfree:
            ok = yield from self._demote_incl(r.victim_clock(p))
            if not ok:
                return False
        n = r.nfree.popleft()
        yield from self._write([(a, n)])
        self._pt_update(p, PTE.of(STABLE, NEAR, n), a)
        r.nd[p] = int(a.mod)
        a.clear()
        return True

    def _swap_tail(self, p, a, f, v):
        r = self.r
        n = r.pt[v].desc
        b = yield from self._alloc(v)
        b.lock = True
        self._migrating(v)
        self.cmd_lines.append(b)
        ok = yield from self._fill(b, r.pt[v])
        if not ok:
            return False
        self._line_full(b, v)
        yield from self._write([(a, n), (b, f)])
        self._pt_update(p, PTE.of(STABLE, NEAR, n), a, b)
        self._pt_update(v, PTE.of(STABLE, FAR, f), a, b)
        a.clear()
        b.clear()
        return True

    def _demote(self, p, source):
        r = self.r
        e = r.pt[p]
        if r.cfg.MODE == 0 and e.port != 0:                 # relabel (seed ¶49)
            self._migrating(p)
            self._mig_start(None, p, OP_DEMOTE, source)
            yield from self._fence(e.port)
            self._pt_update(p, PTE.of(STABLE, FAR, e.desc))
            return True
        if r.cfg.MODE == 0:                                 # HBM page: copy to FFREE head
            b = yield from self._alloc(p)
            b.lock = True
            self._migrating(p)
            self.cmd_lines.append(b)
            self._mig_start(b, p, OP_DEMOTE, source)
            ok = yield from self._fill(b, e)
            if not ok:
                return False
            self._line_full(b, p)
            f = r.ffree.popleft()
            yield from self._write([(b, f)])
            self._pt_update(p, PTE.of(STABLE, FAR, f), b)
            r.nfree.append(e.desc)
            b.clear()
            return True
        self._mig_start(None, p, OP_DEMOTE, source)
        return (yield from self._demote_incl(p))

    def _demote_incl(self, v):
        r = self.r
        e = r.pt[v]
        home = r.init.ifmap.far_desc(v)
        self._migrating(v)
        ok = yield from self._fence(e.port)
        if not ok:
            return False
        if not r.nd[v]:
            self._pt_update(v, PTE.of(STABLE, FAR, home))   # drop, 0 beats
        else:
            b = yield from self._alloc(v)
            b.lock = True
            self.cmd_lines.append(b)
            ok = yield from self._fill(b, e)
            if not ok:
                return False
            self._line_full(b, v)
            yield from self._write([(b, home)])
            self._pt_update(v, PTE.of(STABLE, FAR, home), b)
            r.nd[v] = 0
            b.clear()
        r.nfree.append(e.desc)
        return True

    # ----------------------------------------------------------------- phases
    def _fence(self, port):
        """Wait until every request issued to ``port`` so far has completed (MR-F38).
        Returns False if a poisoned fill of the command arrived meanwhile."""
        mark = self.r.ports.fence_mark(port)
        while not self.r.ports.fenced(mark):
            yield False
        return self.abort_sector is None

    def poisoned(self, s):
        """A fill of a locked line returned poisoned: the command aborts (MR-E9)."""
        if self.abort_sector is None:
            self.abort_sector = s

    def _fill(self, line, src):
        """The FILL walker (MR-F25) beside demand fills; False when the command must abort."""
        r = self.r
        cfg, ns = r.cfg, r.p.NS
        ok = yield from self._fence(src.port)
        ptr = 0
        while ok and not line.full:
            if self.abort_sector is not None:
                break
            if cfg.WALK_PAUSE or (cfg.WALK_STOP_EN and ptr >= cfg.WALK_STOP) or ptr >= ns:
                yield False
                continue
            bit = 1 << ptr
            if (line.valid | line.pending) & bit:
                ptr += 1
                continue
            room = cfg.MIG_OUTSTANDING - self.walk_inflight
            if room <= 0:
                yield False
                continue
            limit = min(r.p.MAX_LEN, room, ns - ptr)
            if cfg.WALK_STOP_EN:
                limit = min(limit, cfg.WALK_STOP - ptr)
            n = 0
            while n < limit and not (line.valid | line.pending) >> (ptr + n) & 1:
                n += 1
            self.walk_inflight += n
            r.fill(line, ptr, n, walker=True)
            r.count("MIG_WALK_FILLS", n)
            ptr += n
            yield True
        if self.abort_sector is None and line.full:
            return True
        while any(x.pending for x in self.cmd_lines):     # no fill of the command in flight
            yield False
        return False

    def _write(self, pairs):
        """WRITE sequencer (MR-F26, MR-F29): every sector out, rewrites of re-dirtied sectors,
        until no dirty sector and no acknowledgement is left."""
        r = self.r
        ns, max_len, lg = r.p.NS, r.p.MAX_LEN, r.p.LOG2G
        for _, dst in pairs:
            yield from self._fence(dst.port)
        for line, _ in pairs:
            line.dirty = (1 << ns) - 1
        while any(line.dirty or line.acks for line, _ in pairs):
            moved = False
            for line, dst in pairs:
                if not line.dirty:
                    continue
                s0 = (line.dirty & -line.dirty).bit_length() - 1
                n = 0
                while n < max_len and s0 + n < ns and line.dirty >> (s0 + n) & 1:
                    n += 1
                line.dirty &= ~(((1 << n) - 1) << s0)
                beats = [(line.data[s], FULL_BE) for s in range(s0, s0 + n)]
                line.acks += 1

                def ack(res, line=line):
                    line.acks -= 1
                r.ports.issue(dst.port, MIG, dst.dev(s0 * 32, lg), n, True, beats, ack, line.tag)
                moved = True
            yield moved

    def _abort(self, p):
        """ABORT (MR-E9): pages back to STABLE with their old entries; far line unlocked with
        nomig; near line (swap victim, demoted page) evicted; free lists untouched."""
        r = self.r
        for q, old in self.cmd_pages.items():
            r.pt[q] = old
        for line in self.cmd_lines:
            if not line.tv:
                continue
            line.lock = False
            if self.cmd_pages[line.tag].pool == FAR:
                line.nomig = True
            else:
                r.evict(line)
        self._set_status(ST_ABORTED, p)
        r.count("MIG_ABORT")
        r.emit(EV_ABORT, 0, p, self.abort_sector)
        yield True
