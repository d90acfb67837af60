"""MemFifo: a first-word-fall-through FIFO in a memory, for queues too deep for registers (the
memory router's free lists hold up to PT_ENTRIES descriptors, its QoS request-length queues
64 entries)."""

from amaranth import Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.lintops import nonzero, wrap_inc
from hw.common.params import check_int

__all__ = ["MemFifo"]


class MemFifo(wiring.Component):
    """A circular buffer of ``depth`` entries in a memory; the head is on ``r_data`` in the
    cycle it becomes the head (the same interface and cycles as
    :class:`hw.common.regfifo.RegFifo`). ``clear`` empties it; a write in the same cycle is
    dropped. The user never writes a full FIFO or reads an empty one.

    The read port is synchronous, so FPGA block RAM (ECP5 DP16KD) can hold the entries: it
    reads the address the read pointer will hold in the next cycle, and is transparent to the
    write port, so an entry written into the empty FIFO is the head one cycle later, as with
    an asynchronous read. (Asynchronous reads map to LUT RAM only: the memory router's QoS
    queues alone took about 16,000 ECP5 LUTs that way.)

    Parameters
    ----------
    width : int
        Entry width in bits.
    depth : int
        Number of entries, 2..65536.

    Members
    -------
    w_en, w_data : In
        Append ``w_data``.
    r_en : In(1)
        Remove the head.
    clear : In(1)
        Empty the FIFO.
    r_data, r_rdy : Out
        The head, and whether there is one.
    level : Out(bit_length(depth))
        Number of entries.
    """

    def __init__(self, width, depth):
        self.width = check_int(self, "width", width, 1, 4096)
        self.depth = check_int(self, "depth", depth, 2, 1 << 16)
        super().__init__({"w_en": In(1), "w_data": In(width), "r_en": In(1), "clear": In(1),
                          "r_data": Out(width), "r_rdy": Out(1),
                          "level": Out(depth.bit_length())})

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.submodules.mem = mem = Memory(shape=self.width, depth=depth, init=[])
        wp = mem.write_port()
        rp = mem.read_port(transparent_for=[wp])
        ptr_w = (depth - 1).bit_length()
        # the pointers are the memory ports' addresses and the head is r_data itself, so the
        # Verilog has no unread copies
        rd = Signal(ptr_w, name="rd")
        rd_next = rp.addr = Signal(ptr_w, name="rd_next")
        wr = wp.addr = Signal(ptr_w, name="wr")
        rp.data = self.r_data
        wp.data = self.w_data

        m.d.comb += [self.r_rdy.eq(nonzero(self.level)), wp.en.eq(self.w_en & ~self.clear)]
        # a reset empties the FIFO like clear, so the read port follows rd there too
        with m.If(self.clear | ResetSignal()):
            m.d.comb += rd_next.eq(0)
        with m.Elif(self.r_en):
            m.d.comb += rd_next.eq(wrap_inc(rd, depth))
        with m.Else():
            m.d.comb += rd_next.eq(rd)
        m.d.sync += rd.eq(rd_next)
        with m.If(self.clear):
            m.d.sync += [wr.eq(0), self.level.eq(0)]
        with m.Else():
            with m.If(self.w_en):
                m.d.sync += wr.eq(wrap_inc(wr, depth))
            m.d.sync += self.level.eq(self.level + self.w_en - self.r_en)
        return m
