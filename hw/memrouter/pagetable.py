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
        previous cycle.

    The memory ports are bound to the given values, so the Verilog has no copies of them.
    """
    n = params.PT_ENTRIES
    m.submodules.pt_entries = entries = Memory(shape=PTE_W, depth=n, init=[])
    wp = entries.write_port()
    wp.en, wp.addr, wp.data = write
    for addr, data in reads:
        rp = entries.read_port(transparent_for=[wp])
        rp.addr, rp.data = addr, data
