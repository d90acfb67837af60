"""HeadTracker: the check slots of every tracking-queue head, the fill CAM compare with its
same-cycle bypass and ``ready[N_Q]`` (spec trackq.md §2 item 3, §4.4 STEP 3-4, TQ-F12..F18)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, eq_const, nonzero, shift_left
from hw.common.params import check_int

__all__ = ["HeadTracker"]


class HeadTracker(wiring.Component):
    """Per queue: valid, dslot[BANKS], used[BANKS] and missing[BANKS][SECTORS] of the head.

    A head is checked exactly once, when it is promoted: missing[b] = need[b] & ~SVT[b][dslot[b]]
    with the SVT after this cycle's inval and fill (the check ports of the
    :class:`~hw.trackq.sectors.SectorValidTable` deliver exactly that). After that only fills
    clear missing bits: a fill {b, d, s} clears bit s of missing[b] in every head whose dslot[b]
    = d, in parallel, and counts for this cycle's readiness (bypass, TQ-F15). An inval never sets
    missing bits again (TQ-F13).

    Two promotions can happen per cycle (TQ-F18): the successor of the popped head (port a) and
    a request inserted into an empty queue (port b); the top guarantees that they name different
    queues.

    Parameters
    ----------
    n_q : int
        Number of tracking queues.
    banks : int
        Tag banks per request.
    sectors : int
        Sectors per dslot.
    dslot_w : int
        dslot width.

    Members
    -------
    fill_valid, fill_bank, fill_dslot, fill_sector : In
        This cycle's fill.
    inval_bank, inval_dslot : In
        This cycle's inval address.
    inval_live : Out(1)
        Some valid head uses {inval_bank, inval_dslot} (used[b] and dslot[b] = d, TQ-E5).
    ready : Out(n_q)
        Queue q's head exists and has no missing sector after this cycle's fill (TQ-F17).
    pop_valid, pop_q, pop_succ : In
        The head of queue pop_q pops this cycle; pop_succ: the queue has a successor, which is
        promoted with the check of port a (else the check slot empties).
    a_dslot, a_need, a_svt : In(ArrayLayout)
        Port a: the successor's dslots and needs, and the SVT masks at its dslots.
    ins_valid, ins_q : In
        A request is inserted into the empty queue ins_q and promoted (port b).
    b_dslot, b_need, b_svt : In(ArrayLayout)
        Port b: the inserted request's dslots, needs and SVT masks.
    """

    def __init__(self, n_q, banks, sectors, dslot_w):
        self.n_q = check_int(self, "n_q", n_q, 1, 64)
        self.banks = check_int(self, "banks", banks, 1, 8)
        self.sectors = check_int(self, "sectors", sectors, 4, 4)
        self.dslot_w = check_int(self, "dslot_w", dslot_w, 1, 12)
        self.q_w = max(1, (n_q - 1).bit_length())
        self.bank_w = max(1, (banks - 1).bit_length())
        arr_d = data.ArrayLayout(dslot_w, banks)
        arr_s = data.ArrayLayout(sectors, banks)
        super().__init__({
            "fill_valid": In(1), "fill_bank": In(self.bank_w), "fill_dslot": In(dslot_w),
            "fill_sector": In(2),
            "inval_bank": In(self.bank_w), "inval_dslot": In(dslot_w), "inval_live": Out(1),
            "ready": Out(n_q),
            "pop_valid": In(1), "pop_q": In(self.q_w), "pop_succ": In(1),
            "a_dslot": In(arr_d), "a_need": In(arr_s), "a_svt": In(arr_s),
            "ins_valid": In(1), "ins_q": In(self.q_w),
            "b_dslot": In(arr_d), "b_need": In(arr_s), "b_svt": In(arr_s),
        })

    def _missing(self, need, svt):
        return Cat(*[need[b] & ~svt[b] for b in range(self.banks)])

    def elaborate(self, platform):
        m = Module()
        nb, sw = self.banks, self.sectors
        miss_a = self._missing(self.a_need, self.a_svt)
        miss_b = self._missing(self.b_need, self.b_svt)
        used_a = Cat(*[nonzero(self.a_need[b]) for b in range(nb)])
        used_b = Cat(*[nonzero(self.b_need[b]) for b in range(nb)])
        fill_bit = shift_left(m, C(1, 1), self.fill_sector, sw, name="fill_bit")
        fill_in = [self.fill_valid & eq_const(self.fill_bank, b) for b in range(nb)]
        inval_in = [eq_const(self.inval_bank, b) for b in range(nb)]
        live = []
        ready = []
        for q in range(self.n_q):
            valid = Signal(name=f"valid{q}")
            dslot = Signal(data.ArrayLayout(self.dslot_w, nb), name=f"dslot{q}")
            used = Signal(nb, name=f"used{q}")
            miss = Signal(nb * sw, name=f"miss{q}")
            # fill CAM compare: clear bit s of missing[b] where dslot[b] matches
            clear = Cat(*[Mux(fill_in[b] & eq(dslot[b], self.fill_dslot), fill_bit, 0)
                          for b in range(nb)])
            miss_now = Signal(nb * sw, name=f"miss_now{q}")
            m.d.comb += miss_now.eq(miss & ~clear)
            ready.append(valid & ~miss_now.any())
            live.append(valid & Cat(*[used[b] & eq(dslot[b], self.inval_dslot) & inval_in[b]
                                      for b in range(nb)]).any())
            m.d.sync += miss.eq(miss_now)
            with m.If(self.pop_valid & eq_const(self.pop_q, q)):
                with m.If(self.pop_succ):
                    m.d.sync += [dslot.eq(self.a_dslot), used.eq(used_a), miss.eq(miss_a)]
                with m.Else():
                    m.d.sync += [valid.eq(0), used.eq(0), miss.eq(0)]
            with m.If(self.ins_valid & eq_const(self.ins_q, q)):
                m.d.sync += [valid.eq(1), dslot.eq(self.b_dslot), used.eq(used_b),
                             miss.eq(miss_b)]
        m.d.comb += [self.ready.eq(Cat(*ready)), self.inval_live.eq(Cat(*live).any())]
        return m
