"""``wd_top``: the work distributor (spec wdist.md §2, WD-I1..WD-I13, WD-F28, WD-F31).

The command FIFO (CMD_FIFO_DEPTH) feeds the command checker (WD-E1..E4, the unit grid), whose
legal commands go to the launcher chosen by ``DISTRIBUTOR`` (the shadow ``Launcher`` or the
``Legacy`` baseline, same ports). The launcher places against the resource tracker's ``free`` and
``credit`` and writes beats; the beat stage fills in the CGA ID from the GPM of the beat's GPC
and forks the beat in lock step to every GPM, every rasterizer and the ``bcast`` monitor port.
Completions go to the tracker (used counters) and the GPMs (active counters, flush, ID pool);
the GPMs' ``flush_req`` and ``cga_complete`` streams are merged round-robin. Errors of every
source enter one ``err`` queue of depth 4 (several per cycle, in the golden model's order: cfg,
command / grid result, ``cta_complete``, ``dsmem_flush_done``); a command error waits for room
(``stall`` = WAIT_ERR), a protocol error that finds the queue full counts in ``err_lost``.

``dirty`` (WD-F14) is a register here: set at reset and by every applied ``cta_complete`` and
``cga_complete`` transfer, cleared by the launcher's ``attempt`` (set wins).
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import (Err, Kind, Stall, bcast_fields, cfg_fields, cga_complete_fields,
                                  cmd_fields, cta_complete_fields, err_fields, flush_done_fields,
                                  flush_req_fields)
from golden.wdist.params import WdistParams
from hw.common.arbiter import RoundRobinArbiter
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, ge_const, is_zero, lt_const, nonzero, select
from hw.common.mwfifo import MultiWriteFifo
from hw.common.params import reject
from hw.common.regfifo import RegFifo
from hw.wdist.cmdcheck import CommandCheck
from hw.wdist.gpm import Gpm, in_gpc
from hw.wdist.launcher import Launcher
from hw.wdist.legacy import Legacy
from hw.wdist.raster_array import RasterArray
from hw.wdist.trace import TraceUnit
from hw.wdist.tracker import ResourceTracker

__all__ = ["WdTop", "status_layout", "ERR_DEPTH"]

ERR_DEPTH = 4


def status_layout(p):
    """WD-I9 ``status``."""
    return data.StructLayout({"busy": 1, "quiescent": 1, "stall": 3, "fail": 1, "fail_cnt": 16,
                              "head_grid_id": p.GRID_ID_W, "err_lost": 8})


class WdTop(wiring.Component):
    """The work distributor top level.

    Parameters
    ----------
    params : WdistParams
        The build; ``DISTRIBUTOR`` picks the launcher.

    Members
    -------
    cmd : In(stream.Signature(cmd_fields))
        ``ready`` while the command FIFO is not full (WD-I1).
    cfg : In(stream.Signature(cfg_fields))
        Always ready; applied only when quiescent (WD-I2, WD-E9, WD-E10).
    bcast : Out(stream.Signature(bcast_fields))
        The broadcast after the GPM stage (WD-I3).
    cta_id_<s> : Out(stream.Signature(cta_id_fields)), s = 0..N_SM − 1
        SM s's CTA records (WD-I4).
    cta_complete : In(stream.Signature(cta_complete_fields))
        Always ready (WD-I5).
    dsmem_flush_done : In(stream.Signature(flush_done_fields))
        Always ready (WD-I6).
    flush_req, cga_complete : Out(stream)
        WD-I7, WD-I8: the GPCs' requests, round-robin between GPCs, each GPC's in event order.
    err : Out(stream.Signature(err_fields))
        WD-I10, from a queue of depth 4.
    status : Out(status_layout)
        WD-I9, registered.
    dbg_req : In(stream.Signature({sel: 4, idx: 16})), dbg_resp : Out(stream({data: 32}))
        WD-I12: one registered response per request, in order.
    trace : Out(stream.Signature(trace_fields))
        WD-I11, only when ``TRACE`` = 1 (``hw.wdist.trace.TraceUnit``); the launcher waits for
        it, no record is dropped.
    """

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        p = self.p = params
        self.launcher_cls = Legacy if p.DISTRIBUTOR == "legacy" else Launcher
        members = {
            "cmd": In(stream.Signature(struct_layout(cmd_fields(p)))),
            "cfg": In(stream.Signature(struct_layout(cfg_fields(p)))),
            "bcast": Out(stream.Signature(struct_layout(bcast_fields(p)))),
            "cta_complete": In(stream.Signature(struct_layout(cta_complete_fields(p)))),
            "dsmem_flush_done": In(stream.Signature(struct_layout(flush_done_fields(p)))),
            "flush_req": Out(stream.Signature(struct_layout(flush_req_fields(p)))),
            "cga_complete": Out(stream.Signature(struct_layout(cga_complete_fields(p)))),
            "err": Out(stream.Signature(struct_layout(err_fields(p)))),
            "status": Out(status_layout(p)),
            "dbg_req": In(stream.Signature(data.StructLayout({"sel": 4, "idx": 16}))),
            "dbg_resp": Out(stream.Signature(data.StructLayout({"data": 32}))),
        }
        if p.TRACE:
            self.trace_unit = TraceUnit(p, batches=p.DISTRIBUTOR != "legacy")
            members["trace"] = Out(stream.Signature(self.trace_unit.rec_layout))
        self.rasters = RasterArray(p)
        for s in range(p.N_SM):
            members[f"cta_id_{s}"] = Out(stream.Signature(self.rasters.rasters[0].rec_layout))
        super().__init__(members)

    def elaborate(self, platform):
        p = self.p
        m = Module()
        G = p.N_GPC
        st = self.status

        m.submodules.tracker = trk = ResourceTracker(p)
        m.submodules.check = chk = CommandCheck(p, levels=self.launcher_cls.LEVELS)
        m.submodules.launcher = lau = self.launcher_cls(p)
        m.submodules.rasters = ras = self.rasters
        gpms = []
        for g in range(G):
            gpm = Gpm(p)               # the same module for every GPC (no index inside)
            m.submodules[f"gpm{g}"] = gpm
            gpms.append(gpm)
        err_layout = struct_layout(err_fields(p))
        m.submodules.errq = errq = MultiWriteFifo(err_layout.size, ERR_DEPTH, 4)

        # ---- command FIFO (WD-F28, WD-I1) → checker ----------------------------------------
        cmd_layout = struct_layout(cmd_fields(p))
        m.submodules.cmd_fifo = cq = RegFifo(cmd_layout.size, p.CMD_FIFO_DEPTH)
        m.d.comb += [self.cmd.ready.eq(lt_const(cq.level, p.CMD_FIFO_DEPTH)),
                     cq.w_en.eq(self.cmd.valid & self.cmd.ready), cq.w_data.eq(self.cmd.payload),
                     chk.i.valid.eq(cq.r_rdy), chk.i.payload.eq(cq.r_data),
                     cq.r_en.eq(chk.i.valid & chk.i.ready)]

        # ---- the checker's verdict: a command error into the err queue, else the launcher ----
        verdict = chk.o.payload
        cmd_err = Signal()
        m.d.comb += cmd_err.eq(chk.o.valid & nonzero(verdict.err))
        m.d.comb += [lau.grid.valid.eq(chk.o.valid & is_zero(verdict.err)),
                     lau.grid.payload.cmd.eq(verdict.cmd),
                     lau.grid.payload.unit_x.eq(verdict.unit_x),
                     lau.grid.payload.unit_y.eq(verdict.unit_y),
                     lau.grid.payload.unit_z.eq(verdict.unit_z)]

        # ---- the launcher and the tracker -----------------------------------------------------
        dirty = Signal(init=1)
        m.d.comb += [lau.free.eq(trk.free), lau.credit.eq(trk.credit), lau.empty.eq(trk.empty),
                     lau.dirty.eq(dirty),
                     trk.shape.eq(lau.commit_shape), trk.commit.eq(lau.commit),
                     trk.commit_a.eq(lau.commit_a), trk.commit_shape.eq(lau.commit_shape),
                     trk.credit_dec.eq(lau.credit_dec)]
        head_grid = Mux(lau.busy, lau.grid_id, 0)      # the launcher's grid (0 when idle)
        res = lau.result
        res_err = Signal()
        m.d.comb += res_err.eq(res.valid & nonzero(res.payload.code))

        # ---- trace (WD-I11) ----------------------------------------------------------------
        if p.TRACE:
            m.submodules.trace = tu = self.trace_unit
            m.d.comb += [tu.fail.eq(lau.fail), tu.never_fits.eq(lau.never_fits),
                         tu.grid_id.eq(lau.grid_id), lau.tr_ok_single.eq(tu.single_ready)]
            if tu.batches:
                m.d.comb += [tu.snap.eq(lau.tr_snap), tu.free.eq(trk.free),
                             tu.credit.eq(trk.credit), tu.empty.eq(trk.empty),
                             tu.query.eq(lau.tr_query), tu.q_valid.eq(lau.tr_q_valid),
                             tu.q_cause.eq(lau.tr_q_cause), tu.q_speed.eq(lau.tr_q_speed),
                             tu.q_credit.eq(lau.tr_q_credit), tu.q_lat.eq(lau.tr_q_lat),
                             tu.q_a.eq(lau.tr_q_a), tu.select.eq(lau.tr_select),
                             tu.best.eq(lau.tr_best), tu.win_mask.eq(lau.tr_win_mask),
                             tu.step.eq(lau.tr_step), tu.pass_.eq(lau.tr_pass),
                             lau.tr_ok_batch.eq(tu.batch_ready)]
            wiring.connect(m, tu.trace, wiring.flipped(self.trace))
            trace_idle = tu.idle
        else:                            # no trace port: the launcher never waits for it
            m.d.comb += lau.tr_ok_single.eq(1)
            if self.launcher_cls is Launcher:
                m.d.comb += lau.tr_ok_batch.eq(1)
            trace_idle = Const(1, 1)

        # ---- beat stage: CGA ID from the beat's GPM, lock-step fork (WD-I3, WD-F21) ----------
        bt = lau.beat.payload
        id_stall = Signal()
        cga_id = Signal(p.GPC_CGA_ID_W)
        fork_ready = Signal()
        take = Signal()
        m.d.comb += [id_stall.eq(nonzero(Cat(*[gpm.beat_stall for gpm in gpms]))),
                     cga_id.eq(select([gpm.beat_cga_id for gpm in gpms], bt.gpc)
                               if G > 1 else gpms[0].beat_cga_id)]
        fwd = data.View(ras.beat.payload.shape(), Signal(ras.beat.payload.shape().size))
        m.d.comb += fwd.eq(bt)
        m.d.comb += fwd.cga_id.eq(Mux(eq_const(bt.kind, Kind.GRID), 0, cga_id))
        m.d.comb += [ras.beat.payload.eq(fwd), ras.ext_ready.eq(1),
                     ras.beat.valid.eq(lau.beat.valid & ~id_stall & self.bcast.ready),
                     fork_ready.eq(ras.beat.ready),
                     self.bcast.valid.eq(lau.beat.valid & ~id_stall & fork_ready),
                     take.eq(lau.beat.valid & ~id_stall & fork_ready & self.bcast.ready),
                     lau.beat.ready.eq(~id_stall & fork_ready & self.bcast.ready)]
        m.d.comb += [getattr(self.bcast.payload, name).eq(getattr(fwd, name))
                     for name, _ in self.bcast.payload.shape()]
        for s in range(p.N_SM):
            wiring.connect(m, getattr(ras, f"cta_id_{s}"),
                           wiring.flipped(getattr(self, f"cta_id_{s}")))
        for g, gpm in enumerate(gpms):  # the beat without its cga_id (no combinational loop)
            m.d.comb += [gpm.beat_valid.eq(lau.beat.valid), gpm.beat_take.eq(take),
                         gpm.beat_mine.eq(eq_const(bt.gpc, g))]
            m.d.comb += [getattr(gpm.beat, name).eq(getattr(bt, name))
                         for name, _ in gpm.beat.shape() if name != "cga_id"]

        # ---- completions (WD-I5, WD-I6) -------------------------------------------------------
        cc, fd = self.cta_complete, self.dsmem_flush_done
        m.d.comb += [cc.ready.eq(1), fd.ready.eq(1), trk.cta_complete.valid.eq(cc.valid),
                     trk.cta_complete.payload.eq(cc.payload),
                     trk.cc_veto.eq(nonzero(Cat(*[gpm.cc_bad_cga for gpm in gpms])))]
        credit_ret = Cat(*[gpm.credit_ret for gpm in gpms])
        m.d.comb += trk.credit_inc.eq(credit_ret)
        for g, gpm in enumerate(gpms):  # "this GPC's" decoded here: the GPMs stay identical
            m.d.comb += [gpm.cta_complete.valid.eq(cc.valid),
                         gpm.cta_complete.payload.eq(cc.payload),
                         gpm.cc_mine.eq(in_gpc(p, g, cc.payload.sm)),
                         gpm.cc_underflow.eq(trk.cc_underflow),
                         gpm.dsmem_flush_done.valid.eq(fd.valid),
                         gpm.dsmem_flush_done.payload.eq(fd.payload),
                         gpm.fd_mine.eq(in_gpc(p, g, fd.payload.sm))]
        with m.If(lau.attempt):
            m.d.sync += dirty.eq(0)
        with m.If(trk.completed | nonzero(credit_ret)):          # set wins
            m.d.sync += dirty.eq(1)

        # ---- flush_req / cga_complete: round-robin over the GPCs (WD-I7, WD-I8) -----------------
        # a GPM's payload is the port's without gpc; gpc is the granted GPM's index
        for port, name in ((self.flush_req, "flush_req"), (self.cga_complete, "cga_complete")):
            srcs = [getattr(gpm, name) for gpm in gpms]
            arb = RoundRobinArbiter(G)
            m.submodules[f"{name}_arb"] = arb
            m.d.comb += [arb.req.eq(Cat(*[s.valid for s in srcs])),
                         arb.advance.eq(port.ready), port.valid.eq(arb.valid),
                         port.payload.gpc.eq(arb.grant_idx if G > 1 else 0)]
            chosen = (select([s.payload.as_value() for s in srcs], arb.grant_idx) if G > 1
                      else srcs[0].payload.as_value())
            view = data.View(srcs[0].payload.shape(), chosen)
            m.d.comb += [getattr(port.payload, f).eq(getattr(view, f))
                         for f, _ in srcs[0].payload.shape()]
            m.d.comb += [s.ready.eq(arb.grant[g] & port.ready) for g, s in enumerate(srcs)]

        # ---- err queue (WD-I10): cfg, command / result, cta_complete, dsmem_flush_done ---------
        def err_word(code, grid_id, info):
            w = data.View(err_layout, Signal(err_layout.size))
            return w, [w.code.eq(code), w.grid_id.eq(grid_id), w.info.eq(info)]

        fd_out_of_range = fd.valid & ge_const(fd.payload.sm, p.N_SM)
        gpm_cc = nonzero(Cat(*[gpm.err_cc_valid for gpm in gpms]))
        gpm_fd = nonzero(Cat(*[gpm.err_fd_valid for gpm in gpms]))
        cfg_busy = eq_const(trk.err_cfg_code, Err.CFG_BUSY)
        # (valid, code, grid_id, info) in golden order; info as WD-E6..E10 define it
        sources = [
            (trk.err_cfg_valid, trk.err_cfg_code, head_grid,
             Mux(cfg_busy, 0, self.cfg.payload.sm)),
            (cmd_err | res_err, Mux(cmd_err, verdict.err, res.payload.code),
             Mux(cmd_err, verdict.cmd.grid_id, res.payload.grid_id),
             Mux(cmd_err, 0, res.payload.info)),
            (trk.err_cc_valid | gpm_cc, Mux(trk.err_cc_valid, trk.err_cc_code,
                                            Err.COMPLETE_BAD_CGA),
             head_grid, Mux(trk.err_cc_valid, cc.payload.sm, cc.payload.cga_id)),
            (gpm_fd | fd_out_of_range, Err.FLUSH_UNEXPECTED, head_grid, fd.payload.cga_id),
        ]
        lost = Signal(range(5))
        lost_terms = []
        for k, (valid, code, grid_id, info) in enumerate(sources):
            word, stmts = err_word(code, grid_id, info)
            m.d.comb += stmts
            m.d.comb += [getattr(errq, f"w_en_{k}").eq(valid),
                         getattr(errq, f"w_data_{k}").eq(word)]
            if k != 1:
                lost_terms.append(valid & ~getattr(errq, f"w_ok_{k}"))
        err_room = errq.w_ok_1
        m.d.comb += [chk.o.ready.eq(Mux(cmd_err, err_room, lau.grid.ready)),
                     res.ready.eq(~res_err | err_room)]
        m.d.comb += lost.eq(sum(lost_terms[1:], lost_terms[0]))
        err_lost_sum = st.err_lost + lost
        m.d.sync += st.err_lost.eq(Mux(nonzero(err_lost_sum[8:]), 0xFF, err_lost_sum[:8]))
        err_view = data.View(err_layout, errq.r_data)
        m.d.comb += [self.err.valid.eq(errq.r_rdy), self.err.payload.eq(err_view),
                     errq.r_en.eq(self.err.ready)]

        # ---- quiescence (WD-F31), status (WD-I9) ----------------------------------------------
        gpms_idle = Const(1, 1)
        for gpm in gpms:
            gpms_idle = gpms_idle & gpm.idle
        launch_idle = ~cq.r_rdy & chk.i.ready & ~chk.o.valid & ~lau.busy & ~lau.beat.valid
        quiescent = Signal()
        m.d.comb += [quiescent.eq(launch_idle & trk.all_used_zero & trk.credits_at_reset
                                  & gpms_idle),
                     trk.quiescent.eq(quiescent)]
        stall = Mux(lau.beat.valid & id_stall, Stall.WAIT_CGA_ID,
                    Mux(lau.beat.valid & ~(fork_ready & self.bcast.ready), Stall.WAIT_BCAST,
                        Mux(cmd_err & ~err_room, Stall.WAIT_ERR,
                            Mux(nonzero(lau.stall), lau.stall,
                                Mux(launch_idle, Stall.NONE, Stall.RUNNING)))))
        fail_cnt = st.fail_cnt
        # busy also while trace records drain; quiescence is WD-F31's list alone
        m.d.sync += [st.busy.eq(~launch_idle | ~trace_idle), st.quiescent.eq(quiescent),
                     st.stall.eq(stall),
                     st.fail.eq(lau.fail), st.head_grid_id.eq(head_grid)]
        with m.If(lau.fail):
            m.d.sync += fail_cnt.eq(fail_cnt + 1)

        # ---- cfg (WD-I2) and dbg (WD-I12) ------------------------------------------------------
        m.d.comb += [trk.cfg.valid.eq(self.cfg.valid), trk.cfg.payload.eq(self.cfg.payload),
                     self.cfg.ready.eq(1)]
        req, resp = self.dbg_req, self.dbg_resp
        sel, idx = req.payload.sel, req.payload.idx
        idx_ok_gpc = lt_const(idx, G)
        gidx = idx[:max(1, (G - 1).bit_length())]
        free_ids = select([gpm.free_ids for gpm in gpms], gidx) if G > 1 else gpms[0].free_ids
        alloc_ids = select([gpm.alloc_ids for gpm in gpms], gidx) if G > 1 else gpms[0].alloc_ids
        m.d.comb += [trk.dbg_sel.eq(sel), trk.dbg_idx.eq(idx)]
        answer = Mux(eq_const(sel, 5), Mux(idx_ok_gpc, free_ids, 0),
                     Mux(eq_const(sel, 6), Mux(idx_ok_gpc, alloc_ids, 0),
                         Mux(eq_const(sel, 7), cq.level,
                             Mux(eq_const(sel, 9), fail_cnt,
                                 Mux(eq_const(sel, 10), lau.next_seq,
                                     Mux(eq_const(sel, 11) & ~lau.busy, 0, trk.dbg_data))))))
        m.d.comb += req.ready.eq(~resp.valid | resp.ready)
        with m.If(resp.valid & resp.ready):
            m.d.sync += resp.valid.eq(0)
        with m.If(req.valid & req.ready):
            m.d.sync += [resp.valid.eq(1), resp.payload.data.eq(answer)]
        return m

