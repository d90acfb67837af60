"""The page table of xlate (spec §2.3, §4.1): PT_ENTRIES stored PTEs and the REF and ND bit
arrays, each one memory with one write port (the top chooses the writer) and synchronous read
ports that see a write of the same cycle."""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.memrouter.layouts import PTE_W

__all__ = ["PageTable"]


class PageTable(wiring.Component):
    """Page table, REF and ND.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams

    Members
    -------
    w_en, w_addr, w_data : In
        PT write.
    a_addr, b_addr : In; a_data, b_data : Out
        Two PT read ports; data of the address given in cycle t is on ``*_data`` in t + 1.
    ref_w_en, ref_w_addr, ref_w_data, ref_r_addr, ref_r_data : REF write and read ports.
    nd_w_en, nd_w_addr, nd_w_data, nd_r_addr, nd_r_data : ND write and read ports.
    """

    def __init__(self, params):
        self.p = params
        pw = (params.PT_ENTRIES - 1).bit_length()
        super().__init__({
            "w_en": In(1), "w_addr": In(pw), "w_data": In(PTE_W),
            "a_addr": In(pw), "a_data": Out(PTE_W), "b_addr": In(pw), "b_data": Out(PTE_W),
            "ref_w_en": In(1), "ref_w_addr": In(pw), "ref_w_data": In(1),
            "ref_r_addr": In(pw), "ref_r_data": Out(1),
            "nd_w_en": In(1), "nd_w_addr": In(pw), "nd_w_data": In(1),
            "nd_r_addr": In(pw), "nd_r_data": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.p.PT_ENTRIES
        m.submodules.pt = pt = Memory(shape=PTE_W, depth=n, init=[])
        wp = pt.write_port()
        ra = pt.read_port(transparent_for=[wp])
        rb = pt.read_port(transparent_for=[wp])
        m.d.comb += [wp.en.eq(self.w_en), wp.addr.eq(self.w_addr), wp.data.eq(self.w_data),
                     ra.addr.eq(self.a_addr), self.a_data.eq(ra.data),
                     rb.addr.eq(self.b_addr), self.b_data.eq(rb.data)]
        for name in ("ref", "nd"):
            m.submodules[name] = bits = Memory(shape=1, depth=n, init=[])
            bw = bits.write_port()
            br = bits.read_port(transparent_for=[bw])
            m.d.comb += [bw.en.eq(getattr(self, f"{name}_w_en")),
                         bw.addr.eq(getattr(self, f"{name}_w_addr")),
                         bw.data.eq(getattr(self, f"{name}_w_data")),
                         br.addr.eq(getattr(self, f"{name}_r_addr")),
                         getattr(self, f"{name}_r_data").eq(br.data)]
        return m
