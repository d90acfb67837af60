"""``wd_gpm[g]``: per-GPC CGA IDs, active-CTA counters and the completion path (WD-F21..F23,
WD-I7, WD-I8; G-GPM) [seed ¶0227, ¶0231–0233, ¶0258].

``IdPool`` is the ``gpc_local_cga_id`` free vector: the lowest free ID is allocated from the set
as it stood at the start of the cycle, and a release becomes allocatable on the next cycle (§4
cycle rules, WD-GV12). ``Gpm`` counts each GPC CGA's CTAs up on its beats and down on
``cta_complete``; when the count is 0 and the ``gcga_last`` beat has passed it asks for a DSMEM
flush, counts one ``dsmem_flush_done`` per CTA, then offers ``cga_complete``; the ID is recycled
and the credit returned in the cycle that ``cga_complete`` transfers.

The caller (``golden.wdist.model``) drives one cycle as: ``try_alloc`` for the head beat,
``accept_beat`` on its transfer, ``cta_complete``, the output transfers (``flush_sent``,
``complete_sent``), ``flush_done``, then ``tick``.
"""

from collections import deque
from dataclasses import dataclass

from golden.wdist.formats import Err

__all__ = ["IdPool", "FlushReq", "CgaComplete", "Gpm"]


class IdPool:
    def __init__(self, width):
        self.size = 1 << width
        self.free = set(range(self.size))
        self._released = []

    def alloc(self):
        """Lowest ID free at the start of this cycle, or None (the beat stalls)."""
        if not self.free:
            return None
        i = min(self.free)
        self.free.remove(i)
        return i

    def release(self, i):
        """Visible from the next cycle (``tick``)."""
        self._released.append(i)

    def tick(self):
        self.free.update(self._released)
        self._released = []

    @property
    def allocated(self):
        return self.size - len(self.free) - len(self._released)


@dataclass(frozen=True)
class FlushReq:
    gpc: int
    cga_id: int
    n_ctas: int


@dataclass(frozen=True)
class CgaComplete:
    gpc: int
    cga_id: int
    grid_id: int
    seq: int


class _Cga:
    __slots__ = ("active", "total", "last_seen", "flush_pending", "grid_id", "seq", "state")

    def __init__(self, grid_id, seq):
        self.active = 0
        self.total = 0
        self.last_seen = False
        self.flush_pending = 0
        self.grid_id, self.seq = grid_id, seq
        self.state = "RUN"          # RUN -> FLUSH_REQ -> FLUSH -> DONE


class Gpm:
    """The GPM of GPC ``g``."""

    def __init__(self, p, g, flush_q=None, complete_q=None):
        self.p, self.g = p, g
        self.pool = IdPool(p.GPC_CGA_ID_W)
        self.cgas = {}               # allocated ID -> _Cga
        self.open_id = None          # ID of the GPC CGA whose beats are passing (level CPC)
        # FlushReq / CgaComplete waiting for their output's ready, in issue order; the top model
        # passes queues shared by every GPC (flush_req and cga_complete are single streams)
        self.flush_q = deque() if flush_q is None else flush_q
        self.complete_q = deque() if complete_q is None else complete_q

    # beats -----------------------------------------------------------------------------------
    def try_alloc(self, beat):
        """The ``cga_id`` the head beat will carry, or None when it must stall (WAIT_CGA_ID)."""
        if not beat.is_cga:
            return 0
        if beat.gcga_first:
            if not self.pool.free:
                return None
            return min(self.pool.free)
        return self.open_id

    def accept_beat(self, beat, cga_id):
        """The beat transferred carrying ``cga_id`` (from ``try_alloc``)."""
        if not beat.is_cga:
            return
        if beat.gcga_first:
            got = self.pool.alloc()
            assert got == cga_id
            self.cgas[cga_id] = _Cga(beat.grid_id, beat.seq)
            self.open_id = cga_id
        c = self.cgas[cga_id]
        c.active += sum(beat.cnt)
        c.total += sum(beat.cnt)
        if beat.gcga_last:
            c.last_seen = True
            self.open_id = None
        self._check_done(cga_id)

    # completions -----------------------------------------------------------------------------
    def cta_complete_error(self, cga_id):
        c = self.cgas.get(cga_id)
        if c is None or c.active == 0 or c.state != "RUN":
            return Err.COMPLETE_BAD_CGA
        return None

    def cta_complete(self, cga_id):
        self.cgas[cga_id].active -= 1
        self._check_done(cga_id)

    def _check_done(self, cga_id):
        c = self.cgas[cga_id]
        if c.state == "RUN" and c.last_seen and c.active == 0:
            c.state = "FLUSH_REQ"
            self.flush_q.append(FlushReq(self.g, cga_id, c.total))

    def flush_sent(self, r):
        """``flush_req`` ``r`` (taken from ``flush_q``) transferred: the ID now waits for
        ``n_ctas`` flush acknowledgements."""
        c = self.cgas[r.cga_id]
        c.state, c.flush_pending = "FLUSH", r.n_ctas

    def flush_done_error(self, cga_id):
        c = self.cgas.get(cga_id)
        if c is None or c.state != "FLUSH" or c.flush_pending == 0:
            return Err.FLUSH_UNEXPECTED
        return None

    def flush_done(self, cga_id):
        c = self.cgas[cga_id]
        c.flush_pending -= 1
        if c.flush_pending == 0:
            c.state = "DONE"
            self.complete_q.append(CgaComplete(self.g, cga_id, c.grid_id, c.seq))

    def complete_sent(self, r):
        """``cga_complete`` ``r`` (taken from ``complete_q``) transferred: recycle the ID
        (allocatable next cycle). The caller returns the credit and sets ``dirty``."""
        del self.cgas[r.cga_id]
        self.pool.release(r.cga_id)

    def tick(self):
        self.pool.tick()

    # status ------------------------------------------------------------------------------------
    def full(self):
        return len(self.pool.free) == self.pool.size

    def idle(self):
        return not self.cgas and self.full()
