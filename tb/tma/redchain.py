"""Test-only wrapper: the TMA unit ``hw.tma.Tma`` with the memory-side reduction unit
``hw.tma.TmaRedUnit`` in front of a memory that only reads and writes (spec tma.md §2.2, "Same
package, memory side: l2_req/l2_resp -> TmaRedUnit -> dn_req/dn_resp -> memory").

::

    cmd, desc_rd, smem_wr, smem_rd, mbar, err, done, idle, outstanding   (the Tma's, unchanged)
    Tma.l2_req  --> TmaRedUnit.up_req      TmaRedUnit.dn_req  --> l2_req   (READ/WRITE/PREFETCH)
    Tma.l2_resp <-- TmaRedUnit.up_resp     TmaRedUnit.dn_resp <-- l2_resp
    tma_l2_req  (passive copy of the Tma's own l2_req: valid, ready and payload, all outputs)

The memory side keeps the names ``l2_req`` / ``l2_resp`` so that ``tb.tma.top_tb.TopBench``
drives the chain like the bare ``Tma``; ``tma_l2_req`` lets the bench compare the TMA's own
request stream (RED requests included) with the golden model. Not a registry block; built
through ``tb.tma.builds.REDCHAIN``.
"""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from golden.tma.formats import l2_req_fields
from hw.common.layout import struct_layout
from hw.tma import Tma, TmaRedUnit

__all__ = ["TmaRedChain"]

_INNER = ("l2_req", "l2_resp")          # the Tma ports the reduction unit takes over


class TmaRedChain(wiring.Component):
    """``Tma`` -> ``TmaRedUnit`` -> memory, for RTL integration tests.

    Parameters
    ----------
    addr_w, smem_aw, id_w, q_depth, dc_entries, trk_entries, nb_w : int
        The ``Tma`` parameters (TMA-C1..C7); ``addr_w`` and ``trk_entries`` are also the
        reduction unit's, so both sides use the same ``l2_req`` / ``l2_resp`` layouts.
    lanes, stages : int
        The reduction unit's datapath lanes and pipeline registers.

    Members
    -------
    cmd, desc_rd_req, desc_rd_resp, smem_wr, smem_rd_req, smem_rd_resp, mbar, err, done,
    idle, outstanding
        The ``Tma``'s ports, unchanged (``idle`` and ``outstanding`` are the Tma's).
    l2_req : Out(stream l2_req)
        The reduction unit's ``dn_req``: READ, WRITE, PREFETCH to the memory.
    l2_resp : In(stream l2_resp)
        The reduction unit's ``dn_resp``.
    tma_l2_req : Out({valid, ready, payload})
        A passive copy of the handshake and payload between ``Tma.l2_req`` and
        ``TmaRedUnit.up_req`` (debug/monitor port; drives nothing inside).
    """

    def __init__(self, addr_w=64, smem_aw=18, id_w=8, q_depth=4, dc_entries=4, trk_entries=32,
                 nb_w=20, lanes=2, stages=1):
        self.tma = Tma(addr_w=addr_w, smem_aw=smem_aw, id_w=id_w, q_depth=q_depth,
                       dc_entries=dc_entries, trk_entries=trk_entries, nb_w=nb_w)
        self.red = TmaRedUnit(addr_w=addr_w, trk_entries=trk_entries, lanes=lanes,
                              stages=stages)
        members = {name: member for name, member in self.tma.signature.members.items()
                   if name not in _INNER}
        members["l2_req"] = self.red.signature.members["dn_req"]
        members["l2_resp"] = self.red.signature.members["dn_resp"]
        members["tma_l2_req"] = Out(wiring.Signature({
            "valid": Out(1), "ready": Out(1),
            "payload": Out(struct_layout(l2_req_fields(self.tma.p)))}))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        tma, red = self.tma, self.red
        m.submodules.tma = tma
        m.submodules.red = red
        flip = wiring.flipped
        wiring.connect(m, tma.l2_req, red.up_req)
        wiring.connect(m, red.up_resp, tma.l2_resp)
        wiring.connect(m, red.dn_req, flip(self.l2_req))
        wiring.connect(m, flip(self.l2_resp), red.dn_resp)
        for name, member in tma.signature.members.items():
            if name in _INNER:
                continue
            if member.is_port:                      # idle, outstanding
                m.d.comb += getattr(self, name).eq(getattr(tma, name))
            else:
                wiring.connect(m, flip(getattr(self, name)), getattr(tma, name))
        tap = self.tma_l2_req
        m.d.comb += [tap.valid.eq(tma.l2_req.valid), tap.ready.eq(tma.l2_req.ready),
                     tap.payload.eq(tma.l2_req.payload)]
        return m
