"""Work distributor (spec wdist.md): the shadow-state CTA/CGA launcher with load balancing.

Modules (spec §2 module table): the per-SM rasterizer :class:`~hw.wdist.raster.Rasterizer`
(``wd_raster``), the placement engine :class:`~hw.wdist.engine.PlaceEngine` (G-A2, G-A3) and the
mock GPC :class:`~hw.wdist.mock_gpc.MockGpc` (``wd_mock_gpc``). The prefix popcount is
``hw.common.popcount.PrefixPopcount``.
"""
