"""The mock GPCs' shadow registers and their query (WD-F4, WD-F5, WD-F6, WD-F11; G-Q).

Per SM ``free_slot_reg`` (FS) and ``launch_slot_reg`` (LS), per GPC the credit copy (CS) and the
launch count (LC). A snapshot copies the real ``free`` and ``credit`` and clears LS and LC; a query
sees f = FS − LS and c = CS − LC and, when valid, reserves (LS += a, LC += 1); commit, cancel and
reset release reservations. The shadow never grows during a session: completions reach only the
real state (WD-F24), so every effective f is at most the real A1 (WD-V2).

``commit_hook(g, a, cga)`` is called on every commit so the owner can update the real state
(``ResourceTracker``); engine harnesses leave it None.
"""

from dataclasses import dataclass

from golden.wdist.formats import FAIL, Cause, Mode
from golden.wdist.multicast import mc_place
from golden.wdist.waterfill import lb_place

__all__ = ["Resp", "Shadow", "place"]


@dataclass(frozen=True)
class Resp:
    """A mock-GPC query response. ``a``: CTAs per local SM; ``parts``: the innermost placement
    units in emission order, as (cpc index or None, a) — one part for levels GPC and GPU."""
    valid: int
    cause: int
    speed: int = 0
    a: tuple = ()
    credit: int = 0
    parts: tuple = ()


def place(p, f, n, mode):
    """One engine run (G-A2 or G-A3) over local free counts ``f``: (a, speed) or FAIL."""
    if mode == Mode.LB:
        r = lb_place(f, n, p.FREE_W)
    else:
        r = mc_place(f, n, p.tpcs(len(f)), p.FREE_W)
    return FAIL if r is FAIL else (r.a, r.speed)


class Shadow:
    def __init__(self, params):
        self.p = params
        self.FS = [0] * params.N_SM
        self.LS = [0] * params.N_SM
        self.CS = [0] * params.N_GPC
        self.LC = [0] * params.N_GPC
        self.empty = 0
        self.commit_hook = None

    def snapshot(self, free, credit, empty):
        """WD-F4: load FS and CS, clear LS and LC."""
        p = self.p
        if len(free) != p.N_SM or len(credit) != p.N_GPC:
            raise ValueError("snapshot: free needs N_SM entries and credit N_GPC entries")
        self.FS = list(free)
        self.CS = list(credit)
        self.reset()
        self.empty = int(bool(empty))

    def reset(self):
        """WD-F6 reset: all launch registers and counts to 0."""
        self.LS = [0] * self.p.N_SM
        self.LC = [0] * self.p.N_GPC

    def f(self, g):
        """Effective free counts of GPC g (local order)."""
        return [self.FS[s] - self.LS[s] for s in self.p.sms(g)]

    def c(self, g):
        return self.CS[g] - self.LC[g]

    def fs(self, g):
        return [self.FS[s] for s in self.p.sms(g)]

    def query(self, g, n, mode, engine=None):
        """G-Q for GPC g and a CGA of ``n`` CTAs. ``engine(f) -> (a, speed, parts) | FAIL``
        replaces the plain engine (level CPC, ``golden.wdist.cpc``)."""
        c = self.c(g)
        if c < 1:
            return Resp(0, Cause.CREDIT, credit=c)
        f = self.f(g)
        if engine is None:
            r = place(self.p, f, n, mode)
            if r is not FAIL:
                r = (r[0], r[1], ((None, r[0]),))
        else:
            r = engine(f)
        if r is FAIL:
            return Resp(0, Cause.SLOTS, credit=c)
        a, speed, parts = r
        self.reserve(g, a)
        return Resp(1, Cause.OK, speed, tuple(a), c, parts)

    def reserve(self, g, a, count=1):
        for s, k in zip(self.p.sms(g), a):
            self.LS[s] += k
        self.LC[g] += count

    def commit(self, g, a, cga=True):
        """WD-F6 commit of a reservation (``cga=False``: PLAIN / GPU_FLAT, no credit)."""
        for s, k in zip(self.p.sms(g), a):
            self.FS[s] -= k
            self.LS[s] -= k
        if cga:
            self.CS[g] -= 1
            self.LC[g] -= 1
        if self.commit_hook is not None:
            self.commit_hook(g, a, cga)

    def cancel(self, g, a):
        for s, k in zip(self.p.sms(g), a):
            self.LS[s] -= k
        self.LC[g] -= 1
