"""The ``trace`` port's record unit (WD-I11): the session controller's events become records.

A session event is either a **batch** (a snapshot: one SNAP record per GPC; or a step's, Pass I
round's or Pass II step's answers: one QUERY record per GPC) or a **single** record (SELECT,
FAIL). A batch is copied into a buffer in the cycle of its strobe and emitted one record per
cycle from there, so the controller goes on (the next query runs while the records drain);
singles wait in a queue of two behind the batch. Order is kept by accepting a batch only when
no single is waiting (``batch_ready``), so a record never overtakes an earlier one. The
controller waits for ``batch_ready`` / ``single_ready`` before the event, so while ``trace`` is
not ready it stalls and no record is dropped.

``ts`` is a free-running cycle counter, sampled at the event; ``sess`` counts snapshots (the
first session is 0); ``lat`` is the controller's issue-to-response count of each QUERY.
"""

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import TraceKind, trace_fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, lt_const, nonzero, select
from hw.common.params import reject
from hw.common.regfifo import RegFifo

__all__ = ["TraceUnit"]


class TraceUnit(wiring.Component):
    """Records of one session controller.

    Parameters
    ----------
    params : WdistParams
    batches : bool
        Build the SNAP / QUERY path. The legacy baseline traces only FAIL records, so its unit
        has none (``snap``, ``query``, ``select`` and their data are then absent).

    Members
    -------
    snap : In(1)
        Strobe: a snapshot of ``free`` (every SM), ``credit`` (every GPC) and ``empty``; the
        batch of SNAP records. Takes effect only with ``batch_ready``.
    query : In(1)
        Strobe: the answers of every GPC (``q_valid``, ``q_cause``, ``q_speed``, ``q_credit``,
        ``q_lat`` per GPC, ``q_a`` per global SM); the batch of QUERY records.
    select, fail : In(1)
        Strobes of a SELECT record (``best``, ``win_mask``) and a FAIL record (``never_fits``).
        Take effect only with ``single_ready``.
    step, pass_, grid_id : In
        The context every record of the strobe's cycle carries.
    batch_ready, single_ready : Out(1)
        The strobe may be given this cycle.
    trace : Out(stream.Signature(trace_fields))
    idle : Out(1)
        Nothing buffered.
    """

    def __init__(self, params, batches=True):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        p = self.p = params
        self.batches = bool(batches)
        self.rec_layout = struct_layout(trace_fields(p))
        G, W = p.N_GPC, p.FREE_W
        members = {
            "fail": In(1), "never_fits": In(1), "grid_id": In(p.GRID_ID_W),
            "single_ready": Out(1),
            "trace": Out(stream.Signature(self.rec_layout)),
            "idle": Out(1),
        }
        if self.batches:
            members.update({
                "snap": In(1), "free": In(data.ArrayLayout(W, p.N_SM)),
                "credit": In(data.ArrayLayout(8, G)), "empty": In(1),
                "query": In(1), "q_valid": In(G), "q_cause": In(data.ArrayLayout(2, G)),
                "q_speed": In(data.ArrayLayout(W, G)), "q_credit": In(data.ArrayLayout(8, G)),
                "q_lat": In(data.ArrayLayout(8, G)),
                "q_a": In(data.ArrayLayout(p.CNT_W, p.N_SM)),
                "select": In(1), "best": In(W), "win_mask": In(G),
                "step": In(8), "pass_": In(2), "batch_ready": Out(1),
            })
        super().__init__(members)

    def elaborate(self, platform):
        p = self.p
        m = Module()
        G, W = p.N_GPC, p.FREE_W
        lay = self.rec_layout

        ts = Signal(32)
        m.d.sync += ts.eq(ts + 1)
        out = self.trace
        if not self.batches:                       # FAIL records: only ts, grid_id, never_fits
            fl = data.StructLayout({"ts": 32, "grid_id": p.GRID_ID_W, "never_fits": 1})
            m.submodules.fails = fq = RegFifo(fl.size, 2)
            w, r = data.View(fl, fq.w_data), data.View(fl, fq.r_data)
            m.d.comb += [self.single_ready.eq(lt_const(fq.level, 2)),
                         w.ts.eq(ts), w.grid_id.eq(self.grid_id),
                         w.never_fits.eq(self.never_fits),
                         fq.w_en.eq(self.fail & self.single_ready),
                         out.valid.eq(fq.r_rdy), out.payload.kind.eq(TraceKind.FAIL),
                         out.payload.ts.eq(r.ts), out.payload.grid_id.eq(r.grid_id),
                         out.payload.never_fits.eq(r.never_fits),
                         fq.r_en.eq(fq.r_rdy & out.ready), self.idle.eq(~fq.r_rdy)]
            return m
        m.submodules.singles = sq = RegFifo(lay.size, 2)
        single = data.View(lay, sq.w_data)
        m.d.comb += [self.single_ready.eq(lt_const(sq.level, 2)),
                     single.ts.eq(ts), single.grid_id.eq(self.grid_id)]
        sess = Signal(16)
        started = Signal()                         # sess counts from 0 at the first snapshot

        # ---- the batch buffer ------------------------------------------------------------
        b_kind = Signal(2)
        b_left = Signal(range(G + 1))              # records still to emit
        b_idx = Signal(range(max(2, G)))           # the GPC of the next record
        b_ts = Signal(32)
        b_sess = Signal(16)
        b_step = Signal(8)
        b_pass = Signal(2)
        b_grid = Signal(p.GRID_ID_W)
        b_empty = Signal()
        b_vec = [Signal(W, name=f"b_vec{s}") for s in range(p.N_SM)]
        b_credit = [Signal(8, name=f"b_credit{g}") for g in range(G)]
        b_valid = Signal(G)
        b_cause = [Signal(2, name=f"b_cause{g}") for g in range(G)]
        b_speed = [Signal(W, name=f"b_speed{g}") for g in range(G)]
        b_lat = [Signal(8, name=f"b_lat{g}") for g in range(G)]

        # ---- singles: SELECT / FAIL records, complete, in a queue of two -------------------
        m.d.comb += self.batch_ready.eq(~nonzero(b_left) & ~sq.r_rdy)
        cur_sess = Mux(self.snap & self.batch_ready, Mux(started, sess + 1, 0), sess)
        m.d.comb += [single.sess.eq(cur_sess), single.step.eq(self.step),
                     single.pass_.eq(self.pass_),
                     single.kind.eq(Mux(self.fail, TraceKind.FAIL, TraceKind.SELECT)),
                     single.best.eq(Mux(self.fail, 0, self.best)),
                     single.win_mask.eq(Mux(self.fail, 0, self.win_mask)),
                     single.never_fits.eq(self.fail & self.never_fits),
                     sq.w_en.eq((self.select | self.fail) & self.single_ready)]

        # ---- accept a batch ----------------------------------------------------------------
        take_snap = self.snap & self.batch_ready
        take_query = self.query & self.batch_ready
        with m.If(take_snap):
            m.d.sync += [started.eq(1), sess.eq(cur_sess), b_kind.eq(TraceKind.SNAP),
                         b_empty.eq(self.empty)]
            m.d.sync += [b_vec[s].eq(self.free[s]) for s in range(p.N_SM)]
            m.d.sync += [b_credit[g].eq(self.credit[g]) for g in range(G)]
        with m.If(take_query):
            m.d.sync += [b_kind.eq(TraceKind.QUERY), b_valid.eq(self.q_valid), b_empty.eq(0)]
            for g in range(G):
                m.d.sync += [b_credit[g].eq(self.q_credit[g]), b_cause[g].eq(self.q_cause[g]),
                             b_speed[g].eq(self.q_speed[g]), b_lat[g].eq(self.q_lat[g])]
                m.d.sync += [b_vec[s].eq(Mux(self.q_valid[g], self.q_a[s], 0))
                             for s in p.sms(g)]
        with m.If(take_snap | take_query):             # SNAP records carry step 0, pass 0
            m.d.sync += [b_left.eq(G), b_idx.eq(0), b_ts.eq(ts), b_sess.eq(cur_sess),
                         b_step.eq(Mux(take_snap, 0, self.step)),
                         b_pass.eq(Mux(take_snap, 0, self.pass_)), b_grid.eq(self.grid_id)]

        # ---- emit: the batch first, then the singles ----------------------------------------
        rec = data.View(lay, Signal(lay.size))
        is_query = eq_const(b_kind, TraceKind.QUERY)
        gi = b_idx if G > 1 else Const(0, 1)
        m.d.comb += [rec.kind.eq(b_kind), rec.ts.eq(b_ts), rec.sess.eq(b_sess),
                     rec.step.eq(b_step), rec.pass_.eq(b_pass), rec.grid_id.eq(b_grid),
                     rec.gpc.eq(b_idx), rec.credit.eq(select(b_credit, gi)),
                     rec.empty.eq(~is_query & b_empty),
                     rec.valid.eq(is_query & select([b_valid[g] for g in range(G)], gi)),
                     rec.cause.eq(Mux(is_query, select(b_cause, gi), 0)),
                     rec.speed.eq(Mux(is_query, select(b_speed, gi), 0)),
                     rec.lat.eq(Mux(is_query, select(b_lat, gi), 0))]
        for i in range(p.S_MAX):
            v = Const(0, W)
            for g in range(G):
                if i < p.SM_PER_GPC[g]:
                    v = Mux(eq_const(gi, g), b_vec[p.base(g) + i], v)
            m.d.comb += rec.vec[i].eq(v)
        batch_out = nonzero(b_left)
        m.d.comb += [out.valid.eq(batch_out | sq.r_rdy),
                     out.payload.eq(Mux(batch_out, rec.as_value(), sq.r_data)),
                     sq.r_en.eq(~batch_out & sq.r_rdy & out.ready)]
        with m.If(batch_out & out.ready):
            m.d.sync += [b_left.eq(b_left - 1), b_idx.eq(b_idx + 1)]
        m.d.comb += self.idle.eq(~batch_out & ~sq.r_rdy)
        return m
