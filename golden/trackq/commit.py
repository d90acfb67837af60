"""CommitPicker golden (spec §4.4 STEP 2 and STEP 5, TQ-F22..F34, TQ-F39, TQ-F40).

The decision reads only the state at the start of the cycle; it is applied after the pop. Rules:

- a unit is one L/G or TTU entry, or the run of TEX entries from the checked-queue head up to the
  first TEX entry with term = eoi | eog (TQ-F22); a TEX unit starts only when its terminator is in
  the checked queue (TQ-F23);
- at most one entry per cycle and only while the commit FIFO has room (TQ-F24);
- a started multi-entry unit moves alone, one entry per cycle (unit lock, TQ-F25);
- otherwise the status queue has priority (its head commits only when it is the oldest
  uncommitted slow entry, TQ-F33), then the first eligible checked queue at or after ``crr``
  (TQ-F26), with the shared round-robin arbiter (golden.common.arbiter);
- TEX units respect the instruction lock (TQ-F29), the oldest-first rule for partial units
  (TQ-F30) and status packets (TQ-F34); L/G, TTU and the status queue pass the lock (TQ-F31);
- the fast/slow interlock is checked per candidate (TQ-F39, TQ-F40): a slow entry may commit only
  if the fast FIFO was empty at the start of the cycle or its seq < tsnap of the fast-FIFO head.
"""

from dataclasses import dataclass

from golden.common.arbiter import RoundRobinArbiterModel
from golden.trackq.formats import TEX

__all__ = ["CommitPicker", "Decision", "STATUS"]

STATUS = "S"


@dataclass
class Decision:
    """One cycle's commit decision: ``src`` is a queue index or ``STATUS``; ``entry`` the entry
    that moves (None: no commit). ``interlocked``: no commit although the commit FIFO had room and
    a candidate was excluded only by the interlock (cnt_interlock, TQ-I10)."""
    src: object = None
    entry: object = None
    interlocked: bool = False
    eligible: int = 0


class CommitPicker:
    """State: ``unit_q`` (queue of the started unit), ``lock_q`` (instruction lock), and the
    commit arbiter's pointer ``crr``."""

    def __init__(self, n_q):
        self.n_q = n_q
        self.unit_q = None
        self.lock_q = None
        self.arb = RoundRobinArbiterModel(n_q)

    @property
    def crr(self):
        return self.arb.ptr

    def decide(self, cq_head, cq_has_term, sq_head, g, ff_tsnap, cf_len, commit_depth):
        """STEP 2. ``cq_head[q]``: head entry of checked queue q or None; ``cq_has_term[q]``: some
        entry of CQ[q] has term; ``sq_head``: status-queue head or None; ``g``: seq of the oldest
        uncommitted slow entry (None = ∞); ``ff_tsnap``: tsnap of the fast-FIFO head, None when the
        fast FIFO is empty."""

        def ilk(x):
            return ff_tsnap is None or x.seq < ff_tsnap

        if cf_len >= commit_depth:
            return Decision()
        if self.unit_q is not None:
            h = cq_head[self.unit_q]
            if ilk(h):
                return Decision(self.unit_q, h)
            return Decision(interlocked=True)
        blocked = False            # a candidate that fails only the interlock
        st_cand = sq_head is not None and g is not None and sq_head.seq == g
        if st_cand:
            if ilk(sq_head):
                return Decision(STATUS, sq_head)
            blocked = True
        lock_q = self.lock_q
        eligible = 0
        for q in range(self.n_q):
            h = cq_head[q]
            if h is None:
                continue
            if h.cls == TEX:
                if not cq_has_term[q]:
                    continue
                if lock_q is not None and lock_q != q:
                    continue
                if sq_head is not None and not h.seq < sq_head.seq:
                    continue
                if h.upartial and lock_q != q and h.seq != g:
                    continue
            if ilk(h):
                eligible |= 1 << q
            else:
                blocked = True
        if eligible:
            _, g_idx, _ = self.arb.outputs(eligible)
            return Decision(g_idx, cq_head[g_idx], eligible=eligible)
        return Decision(interlocked=blocked)

    def apply(self, d):
        """STEP 5 (the picker's registers): crr, unit_q and lock_q."""
        h = d.entry
        if h is None or d.src == STATUS:
            return
        q = d.src
        if self.unit_q is None:
            self.arb.clock(d.eligible, 1)          # crr = (grant + 1) mod N_Q
        if h.cls == TEX and not h.term:
            self.unit_q = q
        else:
            self.unit_q = None
            if h.cls == TEX and h.eog and not h.eoi:
                self.lock_q = q
            if h.cls == TEX and h.eoi and self.lock_q == q:
                self.lock_q = None
