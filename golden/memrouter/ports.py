"""The memory side of the transaction-level router model: per port, the three class queues in
front of the arbiter (NEAR, FAR, MIG; MR-F39) and the in-order port behind it (MR-I4).

Timing is abstract here: a driver decides when a class queue's head is dispatched to the port
(the memory access is performed then, in dispatch order) and when the port's oldest request
completes (its callback runs then). Any dispatch order across classes is legal, which is what
makes the FENCE rule (MR-F38) observable; :meth:`Ports.fence_mark` is the exact "every request
issued before this point" set, not a count."""

from collections import deque
from dataclasses import dataclass, field

from golden.memrouter.formats import FAR, MIG, NEAR
from golden.memrouter.merge import merge
from golden.memrouter.pattern import port_image, sector_bytes, sector_int

__all__ = ["MemReq", "PortSide", "Ports"]


@dataclass
class MemReq:
    """One mreq: ``nb`` sectors at device byte ``addr``; writes carry per-sector (data, be)."""
    seq: int
    port: int
    cls: int
    addr: int
    nb: int
    wr: bool
    beats: list = field(default_factory=list)     # writes: [(data, be)]
    done: object = None                           # callback(read beats (data, poison) / None)
    result: list = None
    ppn: int = None                               # page whose part, line or migration issued it
    evn: int = 0                                  # events emitted before its issue (MR-V2 checks)


class PortSide:
    def __init__(self, j, frames, log2g):
        self.j = j
        self.mem = port_image(j, frames << log2g)
        self.queues = {NEAR: deque(), FAR: deque(), MIG: deque()}
        self.inflight = deque()
        self.poison = set()                      # device sector addresses returning poison=1
        self.beats = {(wr, c): 0 for wr in (0, 1) for c in (NEAR, FAR, MIG)}

    def read_sector(self, a):
        return sector_int(self.mem, a)

    def write_sector(self, a, value, be):
        self.mem[a:a + 32] = sector_bytes(merge(self.read_sector(a), value, be))

    def busy(self):
        return bool(self.inflight) or any(self.queues.values())


class Ports:
    """All memory ports (0 = HBM, 1+m = module m) and their bookkeeping."""

    def __init__(self, frames, log2g):
        self.ports = [PortSide(j, f, log2g) for j, f in enumerate(frames)]
        self.outstanding = set()                 # seq of every issued, not completed request
        self.seq = 0
        self.log = []                            # every MemReq in issue order (for checks)
        self.stamp = lambda: 0                   # the router's event count, set by the router

    def __getitem__(self, j):
        return self.ports[j]

    def __len__(self):
        return len(self.ports)

    def issue(self, port, cls, addr, nb, wr, beats=(), done=None, ppn=None):
        r = MemReq(self.seq, port, cls, addr, nb, bool(wr), list(beats), done, None, ppn,
                   self.stamp())
        self.seq += 1
        self.outstanding.add(r.seq)
        self.ports[port].queues[cls].append(r)
        self.log.append(r)
        return r

    def fence_mark(self, port):
        """The set a FENCE on ``port`` waits for: every request issued to it so far."""
        p = self.ports[port]
        return {r.seq for q in p.queues.values() for r in q} | {r.seq for r in p.inflight}

    def fenced(self, mark):
        return not (mark & self.outstanding)

    def dispatch(self, j, cls):
        """Move the head of class ``cls`` at port ``j`` onto the port and perform it."""
        p = self.ports[j]
        r = p.queues[cls].popleft()
        p.beats[(int(r.wr), cls)] += r.nb
        if r.wr:
            for k, (data, be) in enumerate(r.beats):
                p.write_sector(r.addr + 32 * k, data, be)
        else:
            r.result = [(p.read_sector(r.addr + 32 * k), int(r.addr + 32 * k in p.poison))
                        for k in range(r.nb)]
        p.inflight.append(r)
        return r

    def complete(self, j):
        """Complete the oldest dispatched request of port ``j``: run its callback."""
        r = self.ports[j].inflight.popleft()
        self.outstanding.discard(r.seq)
        if r.done is not None:
            r.done(r.result)
        return r

    def busy(self):
        return any(p.busy() for p in self.ports)
