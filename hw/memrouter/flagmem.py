"""FlagMemory: one bit per page (the migration engine's REF and ND, MR-F35..F37) in a memory with
one write port, so FPGA block RAM holds it instead of flip-flops with a write decoder per port."""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq
from hw.common.params import check_int

__all__ = ["FlagMemory"]


class FlagMemory(wiring.Component):
    """``depth`` bits with a set port, a write port and a synchronous read port, behaving as a
    memory with those two write ports (the write port declared last, so it wins when both
    address one bit in a cycle) and a read transparent to both: ``rd_data`` in cycle t + 1 is
    the bit at ``rd_addr`` after the writes of cycle t.

    The memory itself has one write port and a read without transparency (one ECP5 DP16KD; two
    write ports and a transparent read made Yosys build it from flip-flops, with a 1,024-sink
    decoder per port). A set that finds the port taken by a write waits in one pending entry
    and is written in the next cycle without a write; the read ORs the pending and the
    same-cycle set in, and a write to the same bit cancels them (it is the later one).

    Contract: a set to another bit never arrives while a set is pending and a write takes the
    port (two sets would wait). The memory router keeps it: REF's writes are the CLOCK clears,
    at most every other cycle, and the routing stage sets REF in at most two consecutive
    cycles; ND's writes are single engine cycles, and the routing stage sets ND on the beats
    of one write, all to one page.

    Parameters
    ----------
    depth : int
        Number of bits, 2..65536.

    Members
    -------
    set_en, set_addr : In
        Set the bit at ``set_addr``.
    wr_en, wr_addr, wr_data : In
        Write ``wr_data`` to the bit at ``wr_addr``.
    rd_addr : In; rd_data : Out(1)
        The read (see above).
    """

    def __init__(self, depth):
        self.depth = check_int(self, "depth", depth, 2, 1 << 16)
        aw = (depth - 1).bit_length()
        super().__init__({"set_en": In(1), "set_addr": In(aw),
                          "wr_en": In(1), "wr_addr": In(aw), "wr_data": In(1),
                          "rd_addr": In(aw), "rd_data": Out(1)})

    def elaborate(self, platform):
        m = Module()
        aw = len(self.set_addr)
        m.submodules.bits = mem = Memory(shape=1, depth=self.depth, init=[])
        wp = mem.write_port()
        rp = mem.read_port(transparent_for=[])
        rp.addr = self.rd_addr

        pend_v = Signal()                       # a set waiting for the port
        pend_a = Signal(aw)
        wr = self.wr_en
        # the pending set and the new set, minus what a write to the same bit overrides
        p_live = Signal()
        s_live = Signal()
        m.d.comb += [p_live.eq(pend_v & ~(wr & eq(pend_a, self.wr_addr))),
                     s_live.eq(self.set_en & ~(wr & eq(self.set_addr, self.wr_addr)))]
        m.d.comb += [
            wp.en.eq(wr | p_live | s_live),
            wp.addr.eq(Mux(wr, self.wr_addr, Mux(p_live, pend_a, self.set_addr))),
            wp.data.eq(Mux(wr, self.wr_data, C(1, 1))),
        ]
        # the set left over: the pending one or the new one while a write takes the port; the
        # new one when the pending one takes it (unless both are the same bit)
        with m.If(wr):
            m.d.sync += [pend_v.eq(p_live | s_live), pend_a.eq(Mux(p_live, pend_a, self.set_addr))]
        with m.Elif(p_live):
            m.d.sync += [pend_v.eq(s_live & ~eq(self.set_addr, pend_a)), pend_a.eq(self.set_addr)]
        with m.Else():
            m.d.sync += pend_v.eq(0)

        # the read: the memory's bit before this cycle's write, overridden by this cycle's write
        # to the bit, else ORed with a live set of it (written now or waiting)
        w_hit = Signal()
        w_val = Signal()
        s_hit = Signal()
        m.d.sync += [w_hit.eq(wr & eq(self.wr_addr, self.rd_addr)), w_val.eq(self.wr_data),
                     s_hit.eq((p_live & eq(pend_a, self.rd_addr))
                              | (s_live & eq(self.set_addr, self.rd_addr)))]
        m.d.comb += self.rd_data.eq(Mux(w_hit, w_val, rp.data | s_hit))
        return m
