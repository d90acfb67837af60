"""Test builds of the TMA package's components that are not registry blocks: the memory-side
reduction unit ``hw.tma.TmaRedUnit`` (its RTL tests and ``gpublocks bench tma`` share them)."""

from hw.tma import TmaRedUnit
from sim.registry import Block, Param

__all__ = ["REDUNIT", "REDUNIT_BUILDS"]

REDUNIT = Block(
    name="tma_redunit", kind="test", summary="TmaRedUnit", spec="tma.md §2.2 TmaRedUnit",
    top=TmaRedUnit,
    params=(Param("addr_w", 64, "40..64", "ADDR_W (TMA-C1)"),
            Param("trk_entries", 32, "power of two, 4..256", "TRK_ENTRIES (TMA-C6)"),
            Param("lanes", 2, "1, 2, 4, 8, 16", "64-bit datapath lanes"),
            Param("stages", 1, "0..1", "pipeline registers in the arithmetic")),
)

REDUNIT_BUILDS = {"default": {}, "narrow": dict(addr_w=40, trk_entries=4, lanes=1, stages=0)}


# the TMA with its reduction unit in front of a read/write-only memory (tb/tma/redchain.py,
# tests/rtl/test_tma_redchain.py); parameters: the Tma's, then the reduction unit's. The top
# is named, not imported: it is loaded only when the chain is built.
REDCHAIN = Block(
    name="tma_redchain", kind="test", summary="Tma -> TmaRedUnit -> memory",
    spec="tma.md §2.2 (memory side)", top="tb.tma.redchain:TmaRedChain",
    params=(Param("addr_w", 64, "40..64", "ADDR_W (TMA-C1)"),
            Param("smem_aw", 18, "11..24", "SMEM_AW (TMA-C2)"),
            Param("id_w", 8, "1..16", "ID_W (TMA-C3)"),
            Param("q_depth", 4, "2..16", "Q_DEPTH (TMA-C4)"),
            Param("dc_entries", 4, "2..16", "DC_ENTRIES (TMA-C5)"),
            Param("trk_entries", 32, "power of two, 4..256", "TRK_ENTRIES (TMA-C6)"),
            Param("nb_w", 20, "1..28", "NB_W (TMA-C7)"),
            Param("lanes", 2, "1, 2, 4, 8, 16", "TmaRedUnit 64-bit datapath lanes"),
            Param("stages", 1, "0..1", "TmaRedUnit pipeline registers")),
)

REDCHAIN_BUILDS = {"default": {}}
__all__ += ["REDCHAIN", "REDCHAIN_BUILDS"]
