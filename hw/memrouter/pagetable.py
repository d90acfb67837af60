"""The page table of xlate (spec §2.3, §4.1): PT_ENTRIES stored PTEs in one memory with one
write port (the top chooses the writer) and synchronous read ports that see a write of the
same cycle.

The memory is built in the parent's module (:func:`page_table`), not in a module of its own:
such a module would hold only a memory, and its reset input would be unused. The REF and ND
bit arrays of §4.1 are not built yet: nothing reads them before the migration engine (CLOCK
walk) and the line controller exist, and a memory that is only written is an unused signal
in the Verilog.
"""

from amaranth.lib.memory import Memory

from hw.memrouter.layouts import PTE_W

__all__ = ["page_table"]


def page_table(m, params, write, reads):
    """Add the page-table memories to module ``m``.

    Parameters
    ----------
    m : Module
    params : golden.memrouter.params.MemrouterParams
    write : (en, addr, data)
        The PT write port.
    reads : sequence of (addr, data)
        PT read ports: ``data`` (a signal, driven here) holds the entry at the ``addr`` of the
        previous cycle. A ``data`` narrower than ``PTE_W`` gets the low bits of the entry.

    The memory ports are bound to the given values, so the Verilog has no copies of them.
    When a read port is narrower than ``PTE_W``, the entries are stored in two memories split
    at that width (the low bits, the rest), so that port reads only the bits it uses; the
    behaviour is that of one memory.
    """
    n = params.PT_ENTRIES
    en, waddr, wdata = write
    reads = list(reads)
    lo_w = min(len(data) for _, data in reads) if reads else PTE_W
    assert 0 < lo_w <= PTE_W and all(len(data) in (lo_w, PTE_W) for _, data in reads)
    if lo_w == PTE_W:
        m.submodules.pt_entries = entries = Memory(shape=PTE_W, depth=n, init=[])
        wp = entries.write_port()
        wp.en, wp.addr, wp.data = en, waddr, wdata
        for addr, data in reads:
            rp = entries.read_port(transparent_for=[wp])
            rp.addr, rp.data = addr, data
        return
    m.submodules.pt_entries = lo = Memory(shape=lo_w, depth=n, init=[])
    m.submodules.pt_entries_hi = hi = Memory(shape=PTE_W - lo_w, depth=n, init=[])
    wlo, whi = lo.write_port(), hi.write_port()
    wlo.en, wlo.addr, wlo.data = en, waddr, wdata[:lo_w]
    whi.en, whi.addr, whi.data = en, waddr, wdata[lo_w:]
    for addr, data in reads:
        rp = lo.read_port(transparent_for=[wlo])
        rp.addr, rp.data = addr, data[:lo_w]
        if len(data) > lo_w:
            rp = hi.read_port(transparent_for=[whi])
            rp.addr, rp.data = addr, data[lo_w:]
