"""RegFifo: a small first-word-fall-through FIFO in registers (trackq's commit and fast FIFOs,
spec trackq.md §2; the tma store path's pending pieces)."""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq_const, nonzero, select, wrap_inc
from hw.common.params import check_int

__all__ = ["RegFifo"]


class RegFifo(wiring.Component):
    """A circular buffer of ``depth`` registers with the behaviour of
    ``amaranth.lib.fifo.SyncFIFO``: the head is on ``r_data`` while ``r_rdy``; a write becomes
    visible from the next cycle; ``level`` counts the entries at the start of the cycle.

    Written out here instead of using ``SyncFIFO`` because that one's generated Verilog keeps
    unread copies of its pointers and level, which ``verilator -Wall`` rejects. The user never
    writes a full FIFO or reads an empty one (it checks ``level`` or ``r_rdy`` first).

    Parameters
    ----------
    width : int
        Entry width in bits.
    depth : int
        Number of entries, 1..64.

    Members
    -------
    w_en, w_data : In
        Append ``w_data``.
    r_en : In(1)
        Remove the head.
    r_data, r_rdy : Out
        The head, and whether there is one.
    level : Out(bit_length(depth))
        Number of entries.
    """

    def __init__(self, width, depth):
        self.width = check_int(self, "width", width, 1, 4096)
        self.depth = check_int(self, "depth", depth, 1, 64)
        super().__init__({"w_en": In(1), "w_data": In(width), "r_en": In(1),
                          "r_data": Out(width), "r_rdy": Out(1),
                          "level": Out(depth.bit_length())})

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.d.comb += self.r_rdy.eq(nonzero(self.level))
        if depth == 1:                      # the output port is the one register
            with m.If(self.w_en):
                m.d.sync += self.r_data.eq(self.w_data)
        else:
            storage = [Signal(self.width, name=f"entry{k}") for k in range(depth)]
            ptr_w = (depth - 1).bit_length()
            rd = Signal(ptr_w)
            wr = Signal(ptr_w)

            m.d.comb += self.r_data.eq(select(storage, rd))
            with m.If(self.w_en):
                m.d.sync += wr.eq(wrap_inc(wr, depth))
            with m.If(self.r_en):
                m.d.sync += rd.eq(wrap_inc(rd, depth))
            for k in range(depth):
                with m.If(self.w_en & eq_const(wr, k)):
                    m.d.sync += storage[k].eq(self.w_data)
        m.d.sync += self.level.eq(self.level + self.w_en - self.r_en)
        return m
