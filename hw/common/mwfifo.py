"""MultiWriteFifo: a small register FIFO that takes several ordered writes in one cycle (the
work distributor's ``err`` queue, where a ``cfg`` error, a command error, a completion error and a
flush error can all arise in the same cycle, WD-I10)."""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq_const, ge_const, lt_const, nonzero, select
from hw.common.params import check_int

__all__ = ["MultiWriteFifo"]


class MultiWriteFifo(wiring.Component):
    """First-word-fall-through FIFO of ``depth`` registers with ``ports`` write ports.

    The enabled writes of one cycle are appended in port order (port 0 first). A write that
    finds no room is refused (``w_ok`` low) and so is every enabled write after it in that cycle;
    the user decides whether a refused write waits (holds ``w_en``) or is counted as lost. A read
    in the same cycle frees its entry for that cycle's writes. Writes become visible the next
    cycle.

    Parameters
    ----------
    width : int
        Entry width in bits.
    depth : int
        Entries, 1..64.
    ports : int
        Write ports, 1..8.

    Members
    -------
    w_en_<k>, w_data_<k> : In
        Write port k.
    w_ok_<k> : Out(1)
        Combinational: port k's write is taken this cycle.
    r_en : In(1)
        Remove the head (only while ``r_rdy``).
    r_data, r_rdy : Out
        The head and whether there is one.
    level : Out(bit_length(depth))
        Entries at the start of the cycle.
    """

    def __init__(self, width, depth, ports):
        self.width = check_int(self, "width", width, 1, 4096)
        self.depth = check_int(self, "depth", depth, 1, 64)
        self.ports = check_int(self, "ports", ports, 1, 8)
        members = {"r_en": In(1), "r_data": Out(width), "r_rdy": Out(1),
                   "level": Out(depth.bit_length())}
        for k in range(ports):
            members.update({f"w_en_{k}": In(1), f"w_data_{k}": In(width), f"w_ok_{k}": Out(1)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        n = self.depth
        idx_w = max(1, (n - 1).bit_length())
        regs = [Signal(self.width, name=f"e{i}") for i in range(n)]
        head = Signal(idx_w)
        level = self.level

        def wrap(v):
            """``v`` mod n for 0 <= v < 2n (a 1-entry FIFO has the one slot 0)."""
            if n == 1:
                return C(0, idx_w)
            return Mux(ge_const(v, n), v - n, v)[:idx_w] if n & (n - 1) else v[:idx_w]

        take = self.r_en & self.r_rdy
        m.d.comb += [self.r_rdy.eq(nonzero(level)), self.r_data.eq(select(regs, head))]
        used = level - take                       # entries left after this cycle's read
        # Port k is taken iff it is enabled and the enabled ports before it fit with it: a
        # refused write refuses every later one, so the writes taken before k are exactly the
        # enabled ones while they fit. Counting the enables (not the earlier w_ok) keeps the
        # ports' decisions parallel instead of a chain of adders through every port.
        ens = [getattr(self, f"w_en_{k}") for k in range(self.ports)]
        oks = [getattr(self, f"w_ok_{k}") for k in range(self.ports)]
        for k in range(self.ports):
            before = sum(ens[:k]) if k else 0
            m.d.comb += oks[k].eq(ens[k] & lt_const(used + before, n))
            # physical slot head + level + (earlier writes) < 2n for a taken write; a slot
            # read this cycle may be rewritten
            slot = wrap(head + level + before)
            for i in range(n):
                with m.If(oks[k] & eq_const(slot, i)):
                    m.d.sync += regs[i].eq(getattr(self, f"w_data_{k}"))
        m.d.sync += level.eq(used + sum(oks))
        with m.If(take):
            m.d.sync += head.eq(wrap(head + 1))
        return m
