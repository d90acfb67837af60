"""The per-port QoS arbiter (spec §4.10, MR-F39..F42), cycle-exact: near and far token buckets
with a reservation for far, near priority, work conservation, the under-utilisation epoch rule
(QOS_UTH_EN) and the MIG starvation timer. :func:`run_qos` drives it with the §5 MR-GV15 source
and ready patterns so the RTL unit test can compare cycle by cycle (MR-V10)."""

from dataclasses import dataclass, field

from golden.memrouter.formats import FAR, MIG, NEAR

__all__ = ["QosArbiter", "QosRun", "run_qos"]


class QosArbiter:
    """One port's arbiter. Call :meth:`cycle` once per cycle with the class-queue heads.

    Heads are the nb (sectors) of each class's head request, or None when its queue is empty
    (for MIG: also None while its migration's FENCE is not satisfied).
    """

    def __init__(self, qden=24, rate_n=2, rate_f=1, burst_n=8, burst_f=8, uth_en=0, uth=0,
                 uw=1024, mig_starve=1024):
        self.qden, self.rate = qden, {NEAR: rate_n, FAR: rate_f}
        self.cap = {NEAR: burst_n * qden, FAR: burst_f * qden}
        self.uth_en, self.uth, self.uw, self.mig_starve = uth_en, uth, uw, mig_starve
        self.tok = dict(self.cap)
        self.busy = False           # R != none: a selected request is presented on mreq
        self.near_cur = self.near_prev = 0
        self.mig_wait = 0
        self.t = 0

    def cycle(self, heads, xfer):
        """One cycle. ``heads`` maps NEAR/FAR/MIG to nb or None; ``xfer``: the last beat of the
        presented request transfers in this cycle. Returns (selected class or None, paid)."""
        t = self.t
        if t > 0 and t % self.uw == 0:
            self.near_prev, self.near_cur = self.near_cur, 0
        h_n, h_f, h_m = heads.get(NEAR), heads.get(FAR), heads.get(MIG)
        can = (not self.busy) or xfer
        sel, paid = None, False
        if can:
            starving = h_m is not None and self.mig_starve != 0 and self.mig_wait >= self.mig_starve
            if h_n is not None and self.tok[NEAR] > 0:
                sel, paid = NEAR, True
            elif h_f is not None and self.tok[FAR] > 0:
                sel, paid = FAR, True
            elif starving:
                sel = MIG
            elif h_n is not None:
                sel = NEAR
            elif h_f is not None and (not self.uth_en or self.near_prev < self.uth):
                sel = FAR
            elif h_m is not None:
                sel = MIG
        nb = heads.get(sel) if sel is not None else 0
        if sel == NEAR:
            self.near_cur += nb
        for c in (NEAR, FAR):
            self.tok[c] = min(self.tok[c] + self.rate[c], self.cap[c]) - (
                nb * self.qden if sel == c and paid else 0)
        self.mig_wait = 0 if (h_m is None or sel == MIG) else self.mig_wait + 1
        if can:
            self.busy = sel is not None
        self.t += 1
        return sel, paid


@dataclass
class QosRun:
    """Transfers of a :func:`run_qos` run: (cycle, class, nb) per request, and idle ready cycles."""
    transfers: list = field(default_factory=list)
    selections: list = field(default_factory=list)     # (cycle, class)
    idle_ready: list = field(default_factory=list)     # ready cycles with nothing presented

    def sectors(self, cls, lo=0, hi=None):
        return sum(nb for t, c, nb in self.transfers
                   if c == cls and t >= lo and (hi is None or t < hi))

    def count(self, cls, lo=0, hi=None):
        return sum(1 for t, c, _ in self.transfers
                   if c == cls and t >= lo and (hi is None or t < hi))


def run_qos(cycles, arb, valid, ready, nb=None):
    """Drive ``arb`` for ``cycles`` cycles with infinite class sources.

    ``valid(cls, t)``: whether class cls has a head request in cycle t; ``ready(t)``: mreq.ready;
    ``nb(cls)``: sectors per request (default 1). Every request is a read, i.e. one mreq header
    beat. A selected request is presented from the next cycle and transfers on the first ready
    cycle; that cycle is the decision cycle of the next one.
    """
    nb = nb or (lambda cls: 1)
    run = QosRun()
    presented = None                    # (cls, nb)
    for t in range(cycles):
        rdy = ready(t)
        xfer = presented is not None and rdy
        if xfer:
            run.transfers.append((t, presented[0], presented[1]))
        elif rdy:
            run.idle_ready.append(t)
        heads = {c: nb(c) for c in (NEAR, FAR, MIG) if valid(c, t)}
        can = presented is None or xfer
        sel, _ = arb.cycle(heads, xfer)
        if can:
            presented = (sel, heads[sel]) if sel is not None else None
            if sel is not None:
                run.selections.append((t, sel))
    return run
