"""The N_SM rasterizers behind one lock-step fork of the broadcast (WD-I3, WD-I4).

A beat transfers only when every rasterizer (and the ``ext_ready`` of the other consumers: the
GPM stage and the ``bcast`` monitor port in ``wd_top``) accepts it, so every SM sees the same
beat sequence. Each rasterizer's ``valid`` is the beat's ``valid`` gated by everyone else's
``ready``; no ``ready`` depends on a ``valid``, so the fork has no combinational loop.
"""

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.params import WdistParams
from hw.common.lintops import eq_const
from hw.common.params import reject
from hw.wdist.raster import Rasterizer, prefix_width

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
        self.rasters = [Rasterizer(params) for _ in range(params.N_SM)]
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
        # each SM's own count and the count before it in its GPC: one prefix chain for all
        b = self.beat.payload
        cnt = [b.cnt[i] for i in range(self.p.S_MAX)]
        pw = prefix_width(self.p)
        before = [Const(0, pw)]
        for c in cnt[:-1]:
            before.append((before[-1] + c)[:pw])
        for_gpc = [eq_const(b.gpc, g) for g in range(self.p.N_GPC)]
        # everyone else's ready: the AND of the readys below s and of those above it, as two
        # chains of signals (O(N_SM) gates; Amaranth would emit an expression again at each use)
        n = len(readys)
        below = [self.ext_ready] + [Signal(name=f"rdy_below{s}") for s in range(1, n)]
        above = [None] + [Signal(name=f"rdy_above{s}") for s in range(1, n)] + [Const(1)]
        for s in range(1, n):
            m.d.comb += [below[s].eq(below[s - 1] & readys[s - 1]),
                         above[n - s].eq(above[n - s + 1] & readys[n - s])]
        all_ready = below[n - 1] & readys[n - 1]
        for s, r in enumerate(self.rasters):
            others = below[s] & above[s + 1]
            gpc, local = self.p.gpc_of(s)
            m.d.comb += [r.mine.eq(Mux(for_gpc[gpc], cnt[local], 0)),
                         r.prefix.eq(Mux(for_gpc[gpc], before[local], 0)),
                         r.beat.payload.eq(self.beat.payload),
                         r.beat.valid.eq(self.beat.valid & others)]
        idle = 1
        for r in self.rasters:
            idle = r.idle & idle
        m.d.comb += [self.beat.ready.eq(all_ready), self.idle.eq(idle)]
        return m
