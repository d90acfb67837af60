"""Block-RAM reads whose read/write collision is a don't-care, so Yosys maps them to FPGA block
RAM without collision-emulation logic.

Amaranth 0.5 emits every synchronous read port as "old data on a same-address write in the
same cycle" (RTLIL ``COLLISION_X_MASK`` 0). The ECP5 block RAM in its one-write-port, one-
read-port mode (``PDPW16KD``) does not define that case, so Yosys emulates it: a register per
bit of the write data and address, and a multiplexer per bit of the read data. For a 328-bit
QoS beat queue that is about 690 flip-flops and 328 LUTs in front of 10 block RAMs. Yosys'
``no_rw_check`` memory attribute drops the emulation, but only ``memory_dff`` reads it, for read
ports it assembles from an asynchronous read and the register behind it; so the read is
written in that form here.

Simulation still returns the old data. A user must not depend on the data read in a cycle
whose address the write port writes: with ``poison`` (test builds) that data comes out
inverted, so a testbench comparing against a golden model sees any such use.
"""

from amaranth import Mux, Signal
from amaranth.lib.memory import Memory

__all__ = ["collision_free_memory", "registered_read"]


def collision_free_memory(*, shape, depth, init=()):
    """A :class:`Memory` marked ``no_rw_check``: reads colliding with a write are undefined."""
    return Memory(shape=shape, depth=depth, init=init, attrs={"no_rw_check": 1})


def registered_read(m, memory, addr, *, write_port=None, poison=False, en=None, into=None):
    """The registered read of ``memory`` at ``addr``: in cycle t + 1, the word at ``addr`` of cycle
    t as it was before cycle t's write. ``en`` (default always) holds the register.

    ``poison`` (needs ``write_port``): the word comes out inverted when ``write_port`` wrote
    the same address in cycle t. ``into``: the signal to use as the register (a component's
    output port, so that the Verilog has no unread copy of it); default a new reset-less one.
    Returns the register."""
    if poison and write_port is None:
        raise ValueError("registered_read: poison needs the write port")
    rp = memory.read_port(domain="comb")
    rp.addr = addr
    data = Signal(rp.data.shape(), name="rd_data", reset_less=True) if into is None else into
    word = rp.data
    if poison:
        word = Mux(write_port.en.any() & (write_port.addr == addr), ~rp.data, rp.data)
    if en is None:
        m.d.sync += data.eq(word)
    else:
        with m.If(en):
            m.d.sync += data.eq(word)
    return data
