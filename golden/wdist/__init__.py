"""Golden model of the work distributor (spec wdist.md §4): pure Python, never imports Amaranth
or cocotb.

Free slots (G-A1), the water-fill and multicast engines (G-A2, G-A3), the mock-GPC shadow
(G-Q), the GPU2GPC selection step (G-A5, G-CPC), the launch sessions (G-SESS-*) with their beats
(G-EMIT) and trace, the GPM (G-GPM), the per-SM rasterizer (G-RAST, A9), the legacy baseline
(G-LEGACY), a closed-loop top model with SM stubs, and the golden vectors of §5. See
``docs/wdist.md``.
"""
