"""CommitPicker: release granularity, commit units, instruction lock, status ordering,
oldest-first and the fast/slow interlock (spec trackq.md §4.4 STEP 2 and STEP 5,
TQ-F22..F34, TQ-F39, TQ-F40)."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hw.common.arbiter import RoundRobinArbiter
from hw.common.lintops import bit_at, eq, eq_const, select
from hw.common.params import check_int

__all__ = ["CommitPicker"]


class CommitPicker(wiring.Component):
    """Chooses at most one entry per cycle to move into the commit FIFO.

    The decision reads only registered state (the start-of-cycle queue heads and this
    component's registers), so it can be made before the pop of the same cycle:

    - nothing moves unless the commit FIFO has room (TQ-F24);
    - a started multi-entry TEX unit continues alone from its checked queue (unit lock, TQ-F25),
      stalling in place when its next entry fails the interlock (TQ-F40);
    - otherwise the status-queue head commits if it is the oldest uncommitted slow entry
      (``seq = G``, TQ-F33) and passes the interlock; else the first eligible checked queue at
      or after ``crr`` is granted by the shared :class:`~hw.common.arbiter.RoundRobinArbiter`
      (TQ-F26). A TEX head is eligible only with a terminator in its checked queue (TQ-F23), when
      no other queue holds the instruction lock (TQ-F29), when it is older than the status-queue
      head (TQ-F34) and, for a partial unit, when its queue holds the lock or it is the oldest
      (TQ-F30). L/G and TTU heads ignore the lock and status packets (TQ-F31);
    - the interlock (TQ-F39): a slow entry moves only if the fast FIFO is empty or its seq is
      below the fast-FIFO head's tsnap.

    Seqs are compared as ``older(a, b)`` = the sign of ``a − b`` modulo 2^SEQ_W: every live seq
    and tsnap lies well within 2^(SEQ_W−1) of ``seq_next`` (the age-span rule; a fast-FIFO head
    leaves before the commit FIFO on ``resp``, so no more than about POOL slow entries are
    accepted behind its tsnap), so the sign gives the order of §4.4 with one subtraction, no
    age (``seq_next − seq``) computed first.

    At the clock edge (STEP 5) a checked-queue commit updates ``crr`` (when no unit was
    continuing), the unit register (a TEX entry without term starts/continues a unit) and the
    lock (a TEX entry with eog and not eoi sets it, one with eoi from the locking queue clears
    it); ``lock_clr`` then releases the lock (TQ-F36, applied after the commit).

    Parameters
    ----------
    n_q : int
        Number of checked queues.
    seq_w : int
        Sequence-number (age) width.

    Members
    -------
    cq_valid, cq_tex, cq_has_term, cq_upartial : In(n_q)
        Per checked queue: non-empty; head is TEX; some entry has term; head has upartial.
    cq_seq : In(ArrayLayout(seq_w, n_q))
        Seq of each checked-queue head.
    sq_valid, sq_seq : In
        Status-queue head present, and its seq.
    cq_is_g, sq_is_g : In
        Each checked-queue head, and the status-queue head: present and is G (the oldest
        uncommitted slow entry, ``seq = G``).
    ff_valid, ff_tsnap : In
        Fast-FIFO head present, and its tsnap.
    cf_room : In(1)
        The commit FIFO holds fewer than COMMIT_DEPTH entries.
    h_term, h_eog, h_eoi : In(1)
        Flags of the entry being committed (read by the top at the chosen slot).
    lock_clr : In(1)
        Release the lock after this cycle's commit (TQ-F36).
    cm_valid, cm_status, cm_q : Out
        An entry commits this cycle; from the status queue; else from checked queue cm_q.
    interlocked : Out(1)
        No commit although the commit FIFO has room and a candidate failed only the interlock.
    lock_valid, lock_q : Out
        The instruction lock at the start of the cycle.
    lock_valid_next, lock_q_next : Out
        The lock after this cycle's commit (before ``lock_clr``).
    """

    def __init__(self, n_q, seq_w):
        self.n_q = check_int(self, "n_q", n_q, 1, 64)
        self.seq_w = check_int(self, "seq_w", seq_w, 4, 32)
        self.q_w = max(1, (n_q - 1).bit_length())
        super().__init__({
            "cq_valid": In(n_q), "cq_tex": In(n_q), "cq_has_term": In(n_q),
            "cq_upartial": In(n_q), "cq_seq": In(data.ArrayLayout(seq_w, n_q)),
            "sq_valid": In(1), "sq_seq": In(seq_w), "cq_is_g": In(n_q), "sq_is_g": In(1),
            "ff_valid": In(1), "ff_tsnap": In(seq_w), "cf_room": In(1),
            "h_term": In(1), "h_eog": In(1), "h_eoi": In(1), "lock_clr": In(1),
            "cm_valid": Out(1), "cm_status": Out(1), "cm_q": Out(self.q_w),
            "interlocked": Out(1), "lock_valid": Out(1), "lock_q": Out(self.q_w),
            "lock_valid_next": Out(1), "lock_q_next": Out(self.q_w),
        })

    def elaborate(self, platform):
        m = Module()
        n_q = self.n_q
        m.submodules.arb = arb = RoundRobinArbiter(n_q)

        unit_valid = Signal()
        unit_q = Signal(self.q_w)
        lock_valid = self.lock_valid         # the register is the output port
        lock_q = Signal(self.q_w)
        m.d.comb += self.lock_q.eq(Mux(lock_valid, lock_q, 0))

        w = self.seq_w

        def older(a, b):
            return (a - b)[w - 1]

        def ilk(seq):
            return ~self.ff_valid | older(seq, self.ff_tsnap)

        eligible, blocked = [], []
        for q in range(n_q):
            seq = self.cq_seq[q]
            own_lock = lock_valid & eq_const(lock_q, q)
            tex_ok = (self.cq_has_term[q]
                      & (~lock_valid | eq_const(lock_q, q))
                      & (~self.sq_valid | older(seq, self.sq_seq))
                      & (~self.cq_upartial[q] | own_lock | self.cq_is_g[q]))
            cand = self.cq_valid[q] & (~self.cq_tex[q] | tex_ok)
            eligible.append(cand & ilk(seq))
            blocked.append(cand & ~ilk(seq))
        st_cand = Signal()
        st_ok = Signal()
        m.d.comb += [
            st_cand.eq(self.sq_is_g),
            st_ok.eq(st_cand & ilk(self.sq_seq)),
        ]
        unit_seq = select([self.cq_seq[q] for q in range(n_q)], unit_q)
        unit_ok = Signal()
        m.d.comb += unit_ok.eq(ilk(unit_seq))
        m.d.comb += [
            arb.req.eq(Cat(*eligible)),
            arb.advance.eq(self.cf_room & ~unit_valid & ~st_ok & arb.valid),
        ]
        with m.If(self.cf_room):
            with m.If(unit_valid):
                m.d.comb += [self.cm_valid.eq(unit_ok), self.cm_q.eq(unit_q),
                             self.interlocked.eq(~unit_ok)]
            with m.Elif(st_ok):
                m.d.comb += [self.cm_valid.eq(1), self.cm_status.eq(1)]
            with m.Elif(arb.valid):
                m.d.comb += [self.cm_valid.eq(1), self.cm_q.eq(arb.grant_idx)]
            with m.Else():
                m.d.comb += self.interlocked.eq((st_cand & ~st_ok) | Cat(*blocked).any())

        # STEP 5: unit and lock registers. The committing entry is TEX: from the started unit's
        # queue, or from the arbiter's one-hot grant.
        h_tex = Mux(unit_valid, bit_at(self.cq_tex, unit_q), (self.cq_tex & arb.grant).any())
        cm_cq = self.cm_valid & ~self.cm_status
        ends = cm_cq & ~(h_tex & ~self.h_term)          # a checked-queue commit ends its unit
        set_lock = ends & h_tex & self.h_eog & ~self.h_eoi
        clr_lock = ends & h_tex & self.h_eoi & lock_valid & eq(lock_q, self.cm_q)
        with m.If(cm_cq):
            m.d.sync += unit_valid.eq(~ends)
            with m.If(~ends):
                m.d.sync += unit_q.eq(self.cm_q)
        m.d.comb += [self.lock_valid_next.eq(Mux(set_lock, 1, lock_valid & ~clr_lock)),
                     self.lock_q_next.eq(Mux(set_lock, self.cm_q, lock_q))]
        m.d.sync += [lock_valid.eq(self.lock_valid_next & ~self.lock_clr),
                     lock_q.eq(self.lock_q_next)]
        return m
