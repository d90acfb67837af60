"""The transaction-level router (spec §4.3-§4.7, §4.9): request checks and split, page-table
routing, line service with demand fills and write merge, allocation and eviction, the per-port
in-order response buffer, counters and events. The migration engine is ``engine.py``, the CSR
map ``csr.py``, the memory side ``ports.py``.

Time is abstract: :meth:`Router.request` accepts a whole request (header and write beats) at
once; a driver then advances the engine and the ports (:meth:`step`, :meth:`settle`) in any
legal interleaving. Processor parts are routed strictly in acceptance order (a held part holds
the ones behind it), which is the block's single xlate pipeline and makes same-sector order
(MR-F46) hold by construction.
"""

from collections import deque
from dataclasses import dataclass, field

from golden.memrouter.engine import Engine
from golden.memrouter.formats import (E_POISON, E_RANGE, E_UNMAPPED, EV_ALLOC, EV_EVICT, FAR,
                                      FULL_BE, MIGRATING, NEAR, OK, SRC_ACC, SRC_SECT, STABLE,
                                      UNMAPPED)
from golden.memrouter.ifmap import pt_init
from golden.memrouter.lines import LineSet
from golden.memrouter.merge import merge
from golden.memrouter.ports import Ports

__all__ = ["Router", "Req", "Response", "COUNTERS"]

COUNTERS = ("PREQ_BEATS", "PRSP_BEATS", "SECT_HBM", "SECT_NEARM", "SECT_LINE", "SECT_FILL",
            "SECT_FARD", "MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_DONE", "MIG_ABORT", "EVICTS",
            "WB_SECT", "ERR_RANGE", "ERR_UNMAPPED", "ERR_POISON", "MIG_PREVALID",
            "MIG_FULL_WRITES")


@dataclass
class Req:
    """One accepted processor request and its response under construction."""
    uid: int
    proc: int
    id: int
    addr: int
    nb: int
    wr: bool
    data: list
    be: list
    beats: list = None          # reads: [(data, err)] per beat
    err: int = OK               # writes: the ack's err; rejected: the reject code
    left: int = 0               # sectors not yet performed
    reserve: int = 0            # ROB beats reserved


@dataclass
class Response:
    """One response delivered on prsp[proc]: reads list every beat, writes one ack."""
    proc: int
    id: int
    uid: int
    wr: bool
    beats: list = field(default_factory=list)     # [(data, err)], 1 beat for a write


@dataclass
class Part:
    req: Req
    ppn: int
    s0: int                     # first sector within the page
    n: int
    b0: int                     # beat index of the first sector within the request
    left: int = 0
    line: object = None


class Router:
    """The memory router of one base layer (one instance = one page table, §6 #25)."""

    def __init__(self, params, cfg):
        self.p = params
        self.cfg = cfg.copy()
        frames = [self.cfg.HBM_FRAMES] + [self.cfg.MOD_FRAMES] * params.N_OFF
        self.ports = Ports(frames, params.LOG2G)
        self.ports.stamp = lambda: len(self.events)
        self.lines = LineSet(params.NUM_LINES, params.NS)
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.events = []
        self.engine = Engine(self)
        self.rob = [deque() for _ in range(params.N_PROC)]
        self.rob_used = [0] * params.N_PROC
        self.out = [[] for _ in range(params.N_PROC)]
        self.route_q = deque()
        self.cyc = 0
        self.uid = 0
        self.dropped = []           # (req uid, partition sector address): writes not applied, MR-E8
        self.pt_init()

    # ----------------------------------------------------------------- configuration, PT_INIT
    def pt_init(self):
        """PT_INIT (MR-F6); ValueError when the configuration is illegal (nothing changes)."""
        init = pt_init(self.p, self.cfg)
        self.init = init
        self.pt = list(init.pt)
        self.pages = init.pages
        self.nfree = deque(init.nfree)
        self.ffree = deque(init.ffree)
        self.ref = bytearray(self.p.PT_ENTRIES)
        self.nd = bytearray(self.p.PT_ENTRIES)
        self.hand = 0
        for line in self.lines:
            line.clear()

    def emit(self, code, line=0, ppn=0, arg=0):
        self.events.append((code, line, ppn, arg))

    def count(self, name, n=1):
        self.counters[name] += n

    def pool_class(self, p):
        return self.pt[p].pool

    # ----------------------------------------------------------------- intake (§4.3)
    def request(self, proc, rid, addr, nb, wr=False, data=None, be=None):
        """Offer one request on preq[proc]; returns its :class:`Req`, or None when not accepted
        (the ROB cannot reserve its beats, or a FLUSH is in progress)."""
        p = self.p
        reserve = 1 if wr else nb
        if self.rob_used[proc] + reserve > p.ROB_BEATS or self.engine.flush_pending:
            return None
        if wr:
            data = list(data) if data is not None else [0] * nb
            be = list(be) if be is not None else [FULL_BE] * nb
            if len(data) != nb or len(be) != nb:
                raise ValueError("a write carries nb data beats and nb byte enables")
        req = Req(self.uid, proc, rid, addr, nb, bool(wr), data, be, left=nb, reserve=reserve)
        self.uid += 1
        self.rob_used[proc] += reserve
        self.rob[proc].append(req)
        self.count("PREQ_BEATS", nb if wr else 1)
        if not wr:
            req.beats = [None] * nb
        if addr & 31 or nb > p.MAX_LEN or nb < 1 or addr + 32 * nb > self.pages * p.G:
            return self._reject(req, E_RANGE)
        parts = self.split(addr, nb)
        if any(self.pt[pp].state == UNMAPPED for pp, _, _, _ in parts):
            return self._reject(req, E_UNMAPPED)
        for pp, s0, n, b0 in parts:
            self.ref[pp] = 1
            self.route_q.append(Part(req, pp, s0, n, b0, left=n))
        self.pump()
        return req

    def split(self, addr, nb):
        """The parts (ppn, first sector, sectors, first beat) of a request (MR-F3)."""
        lg, ns = self.p.LOG2G, self.p.NS
        p0, s0 = addr >> lg, (addr >> 5) & (ns - 1)
        if s0 + nb <= ns:
            return [(p0, s0, nb, 0)]
        n1 = ns - s0
        return [(p0, s0, n1, 0), (p0 + 1, 0, nb - n1, n1)]

    def _reject(self, req, code):
        req.err = code
        req.left = 0
        if not req.wr:
            req.beats = [(0, code)] * req.nb
        self.count("ERR_RANGE" if code == E_RANGE else "ERR_UNMAPPED")
        self.deliver(req.proc)
        return req

    # ----------------------------------------------------------------- routing (§4.4)
    def pump(self):
        """Route waiting parts in acceptance order until one must wait."""
        while self.route_q and self._serve(self.route_q[0]):
            self.route_q.popleft()

    def _serve(self, part):
        pp, e = part.ppn, self.pt[part.ppn]
        line = self.lines.of(pp)
        if e.state == MIGRATING and (self.cfg.MIG_STALL or line is None):
            return False
        if line is not None:
            self._line_access(line, part)
            return True
        n = part.n
        if e.pool == NEAR:
            self._direct(part, e, NEAR)
            self.count("SECT_HBM" if e.port == 0 else "SECT_NEARM", n)
            if part.req.wr and self.cfg.MODE == 1:
                self.nd[pp] = 1
            return True
        if self.cfg.FAR_ALLOC:
            line = self.allocate(pp)
            if line is None:
                return False
            self._line_access(line, part)
            return True
        self._direct(part, e, FAR)
        self.count("SECT_FARD", n)
        return True

    def _direct(self, part, e, cls):
        req, lg = part.req, self.p.LOG2G
        dev = e.desc.dev(part.s0 * 32, lg)
        if req.wr:
            beats = [(req.data[b], req.be[b]) for b in range(part.b0, part.b0 + part.n)]
            self.ports.issue(e.port, cls, dev, part.n, True, beats,
                             lambda res, part=part: self._sectors_done(part, part.n), part.ppn)
        else:
            def done(res, part=part):
                for k, (d, pz) in enumerate(res):
                    part.req.beats[part.b0 + k] = (d, E_POISON if pz else OK)
                self._sectors_done(part, part.n)
            self.ports.issue(e.port, cls, dev, part.n, False, (), done, part.ppn)

    # ----------------------------------------------------------------- line service (§4.5)
    def _line_access(self, line, part):
        line.cnt = min(line.cnt + 1, 255)
        self.lines.touch(line)
        part.line = line
        req = part.req
        migrating = self.pt[line.tag].state == MIGRATING
        need = []
        done = 0
        for k in range(part.n):
            s, b = part.s0 + k, part.b0 + k
            bit = 1 << s
            if not req.wr:
                if line.valid & bit:
                    req.beats[b] = (line.data[s], OK)
                    done += 1
                    self.count("SECT_LINE")
                    continue
                if not line.pending & bit:
                    need.append(s)
                line.wait(s, ("r", part, b))
                self.count("SECT_FILL")
                continue
            wdata, be = req.data[b], req.be[b]
            if line.valid & bit:
                line.data[s] = merge(line.data[s], wdata, be)
                line.dirty |= bit
                done += 1
                self.count("SECT_LINE")
            elif line.pending & bit:
                line.wait(s, ("w", part, b))
                self.count("SECT_FILL")
            elif be == FULL_BE:
                line.data[s] = wdata
                line.valid |= bit
                line.dirty |= bit
                done += 1
                self.count("SECT_LINE")
                if migrating:
                    self.count("MIG_FULL_WRITES")
            else:
                need.append(s)
                line.wait(s, ("w", part, b))
                self.count("SECT_FILL")
        if req.wr:
            line.mod = True
        for s0, n in runs(need, self.p.MAX_LEN):
            self.fill(line, s0, n, walker=False)
            if migrating:
                self.count("MIG_DEMAND_FILLS", n)
        if done:
            self._sectors_done(part, done)

    def fill(self, line, s0, n, walker):
        """Issue a fill of sectors s0..s0+n-1 of ``line`` from its page's PT location."""
        e = self.pt[line.tag]
        line.pending |= ((1 << n) - 1) << s0
        cls = 2 if walker else e.pool
        self.ports.issue(e.port, cls, e.desc.dev(s0 * 32, self.p.LOG2G), n, False, (),
                         lambda res: self._fill_return(line, s0, res, walker), line.tag)

    def _fill_return(self, line, s0, res, walker):
        for k, (d, pz) in enumerate(res):
            s = s0 + k
            bit = 1 << s
            line.pending &= ~bit
            if walker:
                self.engine.walk_inflight -= 1
            waiters = line.waiters.pop(s, ())
            if pz:
                for kind, part, b in waiters:
                    if kind == "r":
                        part.req.beats[b] = (0, E_POISON)
                    else:
                        part.req.err = E_POISON
                        self.dropped.append((part.req.uid, (line.tag << self.p.LOG2G) + 32 * s))
                    self._sectors_done(part, 1)
                if line.lock:
                    self.engine.poisoned(s)
                continue
            line.data[s] = d
            line.valid |= bit
            for kind, part, b in waiters:
                if kind == "r":
                    part.req.beats[b] = (line.data[s], OK)
                else:
                    line.data[s] = merge(line.data[s], part.req.data[b], part.req.be[b])
                    line.dirty |= bit
                self._sectors_done(part, 1)

    def _sectors_done(self, part, n):
        part.left -= n
        req = part.req
        req.left -= n
        if part.left == 0 and part.line is not None:
            self._check_triggers(part.line)
        if req.left == 0:
            self.deliver(req.proc)

    def _check_triggers(self, line):
        """§4.7: evaluated when a processor part completes on ``line``; dropped unless idle."""
        cfg = self.cfg
        if not line.tv:
            return
        e = self.pt[line.tag]
        if not (e.state == STABLE and e.pool == FAR) or line.lock or line.nomig:
            return
        if not self.engine.idle or self.engine.cmdq:
            return
        if cfg.EN_SECT and line.vcount() >= cfg.T_SECT:
            self.engine.trigger(line.tag, SRC_SECT)
        elif cfg.EN_ACC and line.cnt >= cfg.T_ACC:
            self.engine.trigger(line.tag, SRC_ACC)

    # ----------------------------------------------------------------- allocation (§4.6)
    def allocate(self, p):
        """A line for page ``p`` (evicting the victim), or None when every line is busy."""
        line = self.lines.victim()
        if line is None:
            return None
        if line.tv:
            self.evict(line)
        line.reset_for(p)
        self.lines.touch(line)
        self.emit(EV_ALLOC, line.idx, p)
        return line

    def evict(self, line):
        """Write back the dirty sectors to the page's PT location, then free the line."""
        assert not line.lock and not line.pending, "MR-V8: locked or filling line evicted"
        e = self.pt[line.tag]
        dirty = [s for s in range(self.p.NS) if line.dirty >> s & 1]
        for s0, n in runs(dirty, self.p.MAX_LEN):
            beats = [(line.data[s], FULL_BE) for s in range(s0, s0 + n)]
            self.ports.issue(e.port, e.pool, e.desc.dev(s0 * 32, self.p.LOG2G), n, True, beats,
                             None, line.tag)
        self.count("EVICTS")
        self.count("WB_SECT", len(dirty))
        self.emit(EV_EVICT, line.idx, line.tag, len(dirty))
        line.clear()

    def victim_clock(self, p):
        """CLOCK victim selection (MR-F36, §4.8 VICTIM), or None."""
        for _ in range(2 * self.pages):
            q = self.hand
            self.hand = (self.hand + 1) % self.pages
            e = self.pt[q]
            if e.state == STABLE and e.pool == NEAR and q != p:
                if not self.ref[q]:
                    return q
                self.ref[q] = 0
        return None

    # ----------------------------------------------------------------- responses (§4.9)
    def deliver(self, proc):
        rob = self.rob[proc]
        while rob and rob[0].left == 0:
            req = rob.popleft()
            self.rob_used[proc] -= req.reserve
            beats = [(0, req.err)] if req.wr else req.beats
            self.out[proc].append(Response(proc, req.id, req.uid, req.wr, beats))
            self.count("PRSP_BEATS", len(beats))
            self.count("ERR_POISON", sum(1 for _, err in beats if err == E_POISON))

    # ----------------------------------------------------------------- time and drivers
    def tick(self, n=1):
        """Advance the free-running cycle counter by n; windowed counters clear (MR-F18)."""
        w = self.cfg.WINDOW
        if w and (self.cyc + n) // w > self.cyc // w:
            for line in self.lines:
                line.cnt = 0
        self.cyc += n

    def actions(self):
        """Every legal next action: ('engine',), ('dispatch', j, cls), ('complete', j)."""
        acts = []
        if self.engine.can_step():
            acts.append(("engine",))
        for j, port in enumerate(self.ports.ports):
            for c, q in port.queues.items():
                if q:
                    acts.append(("dispatch", j, c))
            if port.inflight:
                acts.append(("complete", j))
        return acts

    def do(self, act):
        """Perform one action; returns whether anything changed."""
        if act[0] == "engine":
            moved = self.engine.step()
        elif act[0] == "dispatch":
            self.ports.dispatch(act[1], act[2])
            moved = True
        else:
            self.ports.complete(act[1])
            moved = True
        self.pump()
        return moved

    def step(self, rng=None):
        """One unit of progress: a random action with ``rng``, else the first in priority order
        (engine, dispatch NEAR > FAR > MIG, complete). Returns False when nothing can move."""
        acts = self.actions()
        if rng is not None:
            rng.shuffle(acts)
        for act in acts:
            if self.do(act):
                return True
        return False

    def settle(self, rng=None, limit=10_000_000):
        """Run until nothing can move (all traffic done, engine idle or blocked)."""
        for _ in range(limit):
            if not self.step(rng):
                return
        raise RuntimeError("settle: no quiescence")

    def idle(self):
        return (not self.ports.busy() and self.engine.idle and not self.engine.cmdq
                and not self.route_q)

    def line_of(self, p):
        return self.lines.of(p)

    def responses(self, proc=0):
        out, self.out[proc] = self.out[proc], []
        return out


def runs(sectors, max_len):
    """Maximal runs of consecutive sector indices, each split at ``max_len``: [(first, n)]."""
    out = []
    for s in sectors:
        if out and out[-1][0] + out[-1][1] == s and out[-1][1] < max_len:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((s, 1))
    return out
