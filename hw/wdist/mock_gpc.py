"""``wd_mock_gpc``: one GPC's shadow registers and its query (WD-F4, WD-F5, WD-F6, WD-F11; G-Q).

The session controller asks every mock GPC the same question against the shadow state, not the
real one, so placements can be tried and dropped: a query sees f = FS − LS and c = CS − LC,
a valid answer reserves (LS += a, LC += 1), and the controller later commits, cancels or resets.
The placement itself is :class:`~hw.wdist.engine.PlaceEngine`.
"""

from enum import IntEnum

from amaranth import C, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.common.fields import Fields
from golden.wdist.formats import Cause
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, nonzero
from hw.common.params import check_int, reject
from hw.wdist.engine import PlaceEngine, n_width

__all__ = ["MockGpc", "Op", "CREDIT_W", "query_fields", "resp_fields"]

CREDIT_W = 8


class Op(IntEnum):
    """``op_kind`` codes. COMMIT, CANCEL and RESET are WD-F6 on the last reservation.
    COMMIT_A commits ``op_a`` with no reservation behind it (a GPC's share of a plain or
    GPU_FLAT global fill: golden ``reserve(g, a, count=0)`` then ``commit(g, a, cga=False)``)."""
    COMMIT = 0
    CANCEL = 1
    RESET = 2
    COMMIT_A = 3


def query_fields(n_sm, free_w):
    return Fields(("n", n_width(n_sm, free_w)), ("mode", 1))


def resp_fields(n_sm, free_w, cnt_w):
    """G-Q ``Resp``: ``credit`` is c = CS − LC at the query; speed and a are 0 unless valid."""
    return Fields(("valid", 1), ("cause", 2), ("speed", free_w),
                  ("a", cnt_w, "unsigned", n_sm), ("credit", CREDIT_W))


class MockGpc(wiring.Component):
    """The mock GPC of one GPC of ``n_sm`` SMs.

    A query is accepted while the block is idle (``busy = 0``). With c < 1 the answer is
    ``cause = CREDIT`` one cycle later (the credit is checked first, WD-F11); otherwise the
    engine runs on f = FS − LS and the answer comes after the engine latency (LVL_W + 2 cycles,
    WD-P4), ``cause = SLOTS`` on FAIL. When a valid answer transfers, LS += a and LC += 1 and a
    is kept as the last reservation for ``op``. Pass I leaves several reservations outstanding
    and then RESETs; a step follows each query with one COMMIT or CANCEL.

    The controller applies ``snap`` and ``op`` only while ``busy = 0`` (the engine works on f as
    it was at the query). In one cycle ``snap`` wins over ``op``, and both over the reservation.

    Parameters
    ----------
    n_sm : int
        SMs of the GPC (SM_PER_GPC[g]), 2..32.
    free_w : int
        FREE_W, 1..6.
    sm_per_tpc : int
        SM_PER_TPC, 1..4, dividing ``n_sm``.
    cnt_w : int
        CNT_W, width of a[i], free_w..16.
    debug : bool
        Build the outputs only a testbench reads: ``c`` and the engine's ``dbg_*`` trace. Off
        inside the launcher, where nothing reads them (Verilator UNUSEDSIGNAL).

    Members
    -------
    snap : In(1)
        One-cycle strobe (WD-F4): FS = ``snap_free``, CS = ``snap_credit``, LS = 0, LC = 0.
    snap_free : In(ArrayLayout(free_w, n_sm))
    snap_credit : In(8)
    q : In(stream.Signature(query_fields))
        ``n`` (CTAs of the CGA), ``mode`` (formats.Mode).
    resp : Out(stream.Signature(resp_fields))
        ``valid``, ``cause`` (formats.Cause), ``speed``, ``a[n_sm]``, ``credit``.
    op : In(1)
        One-cycle strobe of ``op_kind`` (:class:`Op`). COMMIT: FS −= a, LS −= a and, with
        ``op_cga = 1``, CS −= 1, LC −= 1 (``op_cga = 0`` for PLAIN / GPU_FLAT leaves CS and LC);
        CANCEL: LS −= a, LC −= 1; RESET: LS = LC = 0; COMMIT_A: FS −= ``op_a``.
    op_kind : In(2)
    op_cga : In(1)
    op_a : In(ArrayLayout(cnt_w, n_sm))
    fs : Out(ArrayLayout(free_w, n_sm))
        free_slot_reg (the snapshot less the commits), for the trace SNAP record.
    f : Out(ArrayLayout(free_w, n_sm))
        Effective free counts FS − LS, what the next query sees.
    c : Out(8)
        Effective credit CS − LC (only with ``debug``).
    busy : Out(1)
        A query is being answered (accepted, response not yet transferred).
    dbg_step, dbg_probe, dbg_vol, dbg_more, dbg_cand : Out
        The engine's level-search trace (WD-GV4 replay at ``wd_mock_gpc`` level), see
        :class:`~hw.wdist.engine.PlaceEngine` (only with ``debug``).
    """

    def __init__(self, n_sm=8, free_w=6, sm_per_tpc=2, cnt_w=6, debug=False):
        self.n_sm = check_int(self, "n_sm", n_sm, 2, 32)
        self.free_w = check_int(self, "free_w", free_w, 1, 6)
        self.sm_per_tpc = check_int(self, "sm_per_tpc", sm_per_tpc, 1, 4)
        if n_sm % sm_per_tpc:
            reject(self, f"sm_per_tpc must divide n_sm = {n_sm}, got {sm_per_tpc}")
        self.cnt_w = check_int(self, "cnt_w", cnt_w, free_w, 16)
        self.query_fields = query_fields(n_sm, free_w)
        self.resp_fields = resp_fields(n_sm, free_w, cnt_w)
        self.debug = bool(debug)
        vec = data.ArrayLayout(free_w, n_sm)
        members = {
            "snap": In(1), "snap_free": In(vec), "snap_credit": In(CREDIT_W),
            "q": In(stream.Signature(struct_layout(self.query_fields))),
            "resp": Out(stream.Signature(struct_layout(self.resp_fields))),
            "op": In(1), "op_kind": In(2), "op_cga": In(1),
            "op_a": In(data.ArrayLayout(cnt_w, n_sm)),
            "fs": Out(vec), "f": Out(vec), "busy": Out(1),
        }
        if self.debug:
            members.update({
                "c": Out(CREDIT_W), "dbg_step": Out(1), "dbg_probe": Out(free_w + 1),
                "dbg_vol": Out(n_width(n_sm, free_w)), "dbg_more": Out(1),
                "dbg_cand": Out(ceil_log2(n_sm + 1))})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        S, W = self.n_sm, self.free_w
        m.submodules.engine = eng = PlaceEngine(S, W, self.sm_per_tpc, self.cnt_w, self.debug)
        if self.debug:
            m.d.comb += [getattr(self, name).eq(getattr(eng, name))
                         for name in ("dbg_step", "dbg_probe", "dbg_vol", "dbg_more", "dbg_cand")]

        fs = [Signal(W, name=f"fs{k}") for k in range(S)]
        ls = [Signal(W, name=f"ls{k}") for k in range(S)]
        last = [Signal(self.cnt_w, name=f"last{k}") for k in range(S)]
        cs = Signal(CREDIT_W)
        lc = Signal(CREDIT_W)
        busy = self.busy
        credit_pend = Signal()             # a CREDIT answer is waiting
        credit_q = Signal(CREDIT_W)        # c at the query

        eff = [self.f[k] for k in range(S)]                     # FS − LS
        m.d.comb += [eff[k].eq((fs[k] - ls[k])[:W]) for k in range(S)]
        c = (cs - lc)[:CREDIT_W]                                # CS − LC
        if self.debug:
            m.d.comb += self.c.eq(c)
        m.d.comb += [self.fs[k].eq(fs[k]) for k in range(S)]

        # query: credit first (WD-F11), then the engine on f = FS − LS
        credit_ok = nonzero(c)
        m.d.comb += [self.q.ready.eq(~busy & eng.i.ready),
                     eng.i.valid.eq(self.q.valid & ~busy & credit_ok),
                     eng.i.payload.n.eq(self.q.payload.n),
                     eng.i.payload.mode.eq(self.q.payload.mode)]
        m.d.comb += [eng.i.payload.f[k].eq(eff[k]) for k in range(S)]
        with m.If(self.q.valid & self.q.ready):
            m.d.sync += [busy.eq(1), credit_q.eq(c), credit_pend.eq(~credit_ok)]

        # response: the CREDIT answer or the engine's result
        r, e = self.resp.payload, eng.o.payload
        good = ~credit_pend & e.ok
        m.d.comb += [
            self.resp.valid.eq(credit_pend | eng.o.valid),
            eng.o.ready.eq(self.resp.ready),
            r.valid.eq(good),
            r.cause.eq(Mux(credit_pend, C(Cause.CREDIT, 2),
                           Mux(e.ok, C(Cause.OK, 2), C(Cause.SLOTS, 2)))),
            r.speed.eq(Mux(good, e.speed, 0)),
            r.credit.eq(credit_q),
        ]
        m.d.comb += [r.a[k].eq(Mux(good, e.a[k], 0)) for k in range(S)]

        # reservation (WD-F5), then op (WD-F6), then snapshot (WD-F4): later wins
        with m.If(self.resp.valid & self.resp.ready):
            m.d.sync += [busy.eq(0), credit_pend.eq(0)]
            with m.If(good):
                m.d.sync += lc.eq(lc + 1)
                m.d.sync += [ls[k].eq(ls[k] + e.a[k]) for k in range(S)]
                m.d.sync += [last[k].eq(e.a[k]) for k in range(S)]
        kind = self.op_kind
        with m.If(self.snap):
            m.d.sync += [cs.eq(self.snap_credit), lc.eq(0)]
            m.d.sync += [fs[k].eq(self.snap_free[k]) for k in range(S)]
            m.d.sync += [ls[k].eq(0) for k in range(S)]
        with m.Elif(self.op & eq_const(kind, Op.COMMIT)):
            m.d.sync += [fs[k].eq(fs[k] - last[k]) for k in range(S)]
            m.d.sync += [ls[k].eq(ls[k] - last[k]) for k in range(S)]
            with m.If(self.op_cga):
                m.d.sync += [cs.eq(cs - 1), lc.eq(lc - 1)]
        with m.Elif(self.op & eq_const(kind, Op.CANCEL)):
            m.d.sync += [ls[k].eq(ls[k] - last[k]) for k in range(S)]
            m.d.sync += lc.eq(lc - 1)
        with m.Elif(self.op & eq_const(kind, Op.RESET)):
            m.d.sync += [ls[k].eq(0) for k in range(S)]
            m.d.sync += lc.eq(0)
        with m.Elif(self.op & eq_const(kind, Op.COMMIT_A)):
            m.d.sync += [fs[k].eq(fs[k] - self.op_a[k]) for k in range(S)]
        return m
