"""The N_SM rasterizers behind one lock-step fork of the broadcast (WD-I3, WD-I4).

A beat transfers only when every rasterizer (and the ``ext_ready`` of the other consumers: the
GPM stage and the ``bcast`` monitor port in ``wd_top``) accepts it, so every SM sees the same
beat sequence. Each rasterizer's ``valid`` is the beat's ``valid`` gated by everyone else's
``ready``; no ``ready`` depends on a ``valid``, so the fork has no combinational loop.
"""

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.params import WdistParams
from hw.common.params import reject
from hw.wdist.raster import Rasterizer

__all__ = ["RasterArray"]


class RasterArray(wiring.Component):
    """Every SM's ``wd_raster`` on one broadcast.

    Parameters
    ----------
    params : WdistParams
        The build.

    Members
    -------
    beat : In(stream.Signature(raster_beat_fields))
        The broadcast; ``ready`` = every rasterizer ready and ``ext_ready``.
    ext_ready : In(1)
        The other consumers of the fork accept the beat (tie high when there are none).
    cta_id_<s> : Out(stream.Signature(cta_id_fields)), s = 0..N_SM − 1
        SM s's ID records.
    idle : Out(1)
        Every rasterizer idle.
    """

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        self.p = params
        self.rasters = [Rasterizer(params, s) for s in range(params.N_SM)]
        first = self.rasters[0]
        members = {"beat": In(stream.Signature(first.beat_layout)), "ext_ready": In(1),
                   "idle": Out(1)}
        for s in range(params.N_SM):
            members[f"cta_id_{s}"] = Out(stream.Signature(first.rec_layout))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        readys = []
        for s, r in enumerate(self.rasters):
            m.submodules[f"raster{s}"] = r
            readys.append(r.beat.ready)
            wiring.connect(m, r.cta_id, wiring.flipped(getattr(self, f"cta_id_{s}")))
        all_ready = self.ext_ready
        for rdy in readys:
            all_ready = all_ready & rdy
        for s, r in enumerate(self.rasters):
            others = self.ext_ready
            for t, rdy in enumerate(readys):
                if t != s:
                    others = others & rdy
            m.d.comb += [r.beat.payload.eq(self.beat.payload),
                         r.beat.valid.eq(self.beat.valid & others)]
        idle = 1
        for r in self.rasters:
            idle = r.idle & idle
        m.d.comb += [self.beat.ready.eq(all_ready), self.idle.eq(idle)]
        return m
