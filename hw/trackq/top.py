"""TrackingQueues: the top of the tracking-queue block (spec trackq.md §2, §3, §4.4).

Router, group tracker, fast FIFO, commit FIFO, output merge, counters and the error register,
around the modules of the spec's table: QueueMapper, EntryPool, LinkedQueues, SectorValidTable,
HeadTracker, CommitPicker and the pop RoundRobinArbiter, plus Oldest (G).
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.trackq.formats import (COUNTER_W, COUNTERS, ERR_W, SRC_FAST, TEX, cmt_fields,
                                   fill_fields, inval_fields, pop_fields, req_fields, resp_fields)
from golden.trackq.params import RANGES, TrackqParams, clog2
from hw.common.arbiter import RoundRobinArbiter
from hw.common.layout import always_ready_stream, struct_layout
from hw.common.lintops import (bit_at, eq, eq_const, ge, gt_const, is_zero, lt_const, nonzero,
                                select)
from hw.common.params import check_int
from hw.trackq.commit import CommitPicker
from hw.trackq.heads import HeadTracker
from hw.trackq.mapper import QueueMapper
from hw.trackq.oldest import Oldest
from hw.trackq.pool import EntryPool
from hw.trackq.queues import LinkedQueues
from hw.common.regfifo import RegFifo
from hw.trackq.sectors import SectorValidTable

__all__ = ["TrackingQueues", "check_params", "payload_layout"]

PARAM_NAMES = ("N_Q", "POOL", "N_WARPS", "BANKS", "SECTORS", "DSLOTS", "ID_W", "FAST_PATH",
               "FAST_DEPTH", "COMMIT_DEPTH", "FREELIST", "SEQ_W")


def check_params(component, values):
    """A :class:`TrackqParams` from constructor arguments; ValueError naming the parameter and
    its legal range (TQ-C1..C12, TQ-C17)."""
    for name, (lo, hi) in RANGES.items():
        check_int(component, name, values[name], lo, hi)
    check_int(component, "SEQ_W", values["SEQ_W"], clog2(values["POOL"]) + 3, 32)
    return TrackqParams(**values)


def payload_layout(p):
    """What the payload RAM stores per slot: the request fields after the class rewrite, the
    status bit, the queue and the sequence number."""
    return data.StructLayout({
        "id": p.ID_W, "warp": p.WARP_W, "cls": 2, "status": 1, "q": p.Q_W, "seq": p.SEQ_W,
        "dslot": data.ArrayLayout(p.DSLOT_W, p.BANKS),
        "need": data.ArrayLayout(p.SECTORS, p.BANKS),
    })


def stream_ports(p):
    """The six streams both ``TrackingQueues`` and ``SingleFifo`` have (TQ-I1..I8, TQ-I13)."""
    return {
        "req": In(stream.Signature(struct_layout(req_fields(p)))),
        "fill": In(always_ready_stream(struct_layout(fill_fields(p)))),
        "inval": In(always_ready_stream(struct_layout(inval_fields(p)))),
        "resp": Out(stream.Signature(struct_layout(resp_fields(p)))),
        "pop": Out(always_ready_stream(struct_layout(pop_fields(p)))),
        "cmt": Out(always_ready_stream(struct_layout(cmt_fields(p)))),
    }


class TrackingQueues(wiring.Component):
    """Out-of-order memory request tracking queues (spec trackq.md), cycle-exact with
    ``golden.trackq.model.TrackingQueuesModel``.

    Accepted requests are routed to the fast FIFO (L/G or TTU hits with ``fast_path``), the
    status queue (``is_status``) or, through the :class:`~hw.trackq.mapper.QueueMapper`, one of
    N_Q tracking queues: linked lists (:class:`~hw.trackq.queues.LinkedQueues`) over the shared
    :class:`~hw.trackq.pool.EntryPool`. The head of every tracking queue is checked once against
    the :class:`~hw.trackq.sectors.SectorValidTable` and then woken by fills in the
    :class:`~hw.trackq.heads.HeadTracker`; the pop arbiter (round robin) moves one ready head
    per cycle into its checked queue; the :class:`~hw.trackq.commit.CommitPicker` moves one
    entry per cycle into the commit FIFO; ``resp`` merges the fast FIFO and the commit FIFO with
    the hold rule of TQ-F42. The group tracker applies forced eog (TQ-F28) and the retroactive
    marks (TQ-F35..F37) at insertion. Everything follows the step order of §4.4.

    Parameters
    ----------
    N_Q, POOL, N_WARPS, BANKS, SECTORS, DSLOTS, ID_W, FAST_PATH, FAST_DEPTH, COMMIT_DEPTH,
    FREELIST, SEQ_W : int
        Build parameters of §3.3 (TQ-C1..C12); defaults are the test defaults. Illegal values
        raise ``ValueError`` naming the parameter (TQ-C17).

    Members
    -------
    req : In(stream.Signature(req layout))
        Requests (TQ-I1); ``ready`` depends on registered state only (TQ-I2).
    fill : In(always_ready_stream(fill layout))
        Sector fills (TQ-I3): valid and payload, no ready (never back-pressured).
    inval : In(always_ready_stream(inval layout))
        dslot invalidations (TQ-I4), no ready.
    resp : Out(stream.Signature(resp layout))
        Delivered entries (TQ-I5).
    pop, cmt : Out(always_ready_stream(...))
        Observation of every pop (TQ-I7) and commit (TQ-I8).
    cfg_mode, cfg_lgq, cfg_cgm, cfg_reclaim, err_clr : In
        Run-time configuration, sampled every cycle (TQ-I6).
    occ, st_occ, fast_occ, pool_used, pool_full, ready_vec, lock_valid, lock_q, reclaim_mode : Out
        Status outputs (TQ-I9).
    cnt_req_stall, cnt_pool_full, cnt_resp_stall, cnt_pop, cnt_commit, cnt_interlock, cnt_fast,
    cnt_err : Out(32)
        Wrapping event counters (TQ-I10).
    err : Out(6)
        Sticky error flags (TQ-I11).
    """

    def __init__(self, N_Q=4, POOL=16, N_WARPS=8, BANKS=4, SECTORS=4, DSLOTS=16, ID_W=8,
                 FAST_PATH=1, FAST_DEPTH=2, COMMIT_DEPTH=4, FREELIST=1, SEQ_W=16):
        values = dict(N_Q=N_Q, POOL=POOL, N_WARPS=N_WARPS, BANKS=BANKS, SECTORS=SECTORS,
                      DSLOTS=DSLOTS, ID_W=ID_W, FAST_PATH=FAST_PATH, FAST_DEPTH=FAST_DEPTH,
                      COMMIT_DEPTH=COMMIT_DEPTH, FREELIST=FREELIST, SEQ_W=SEQ_W)
        self.p = p = check_params(self, values)
        ports = {
            **stream_ports(p),
            "cfg_mode": In(2), "cfg_lgq": In(p.Q_W), "cfg_cgm": In(p.CGM_W),
            "cfg_reclaim": In(1), "err_clr": In(1),
            "occ": Out(data.ArrayLayout(p.OCC_W, p.N_Q)), "st_occ": Out(p.OCC_W),
            "fast_occ": Out(p.FAST_OCC_W), "pool_used": Out(p.OCC_W), "pool_full": Out(1),
            "ready_vec": Out(p.N_Q), "lock_valid": Out(1), "lock_q": Out(p.Q_W),
            "reclaim_mode": Out(1),
        }
        for name in COUNTERS:
            ports[name] = Out(COUNTER_W)
        ports["err"] = Out(ERR_W)
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        n_q, sw = p.N_Q, (p.POOL - 1).bit_length()
        pl = payload_layout(p)

        m.submodules.mapper = mapper = QueueMapper(n_q, p.WARP_W)
        m.submodules.svt = svt = SectorValidTable(p.BANKS, p.DSLOTS, p.SECTORS,
                                                  miss_b=bool(p.FAST_PATH))
        m.submodules.heads = heads = HeadTracker(n_q, p.BANKS, p.SECTORS, p.DSLOT_W)
        # read ports: 0 status-queue successor, 1 commit, 2 commit-FIFO head, 3 pop, 4 the
        # entry behind the popped queue's second (the second-level head cache)
        m.submodules.pool = pool = EntryPool(p.POOL, pl, p.FREELIST, n_read=5)
        head_tag = data.StructLayout({"seq": p.SEQ_W, "tex": 1})
        m.submodules.queues = queues = LinkedQueues(n_q, p.POOL, tag=head_tag)
        m.submodules.oldest = oldest = Oldest(n_q + 1, p.SEQ_W)
        m.submodules.picker = picker = CommitPicker(n_q, p.SEQ_W)
        m.submodules.pop_arb = pop_arb = RoundRobinArbiter(n_q)
        m.submodules.cf = cf = RegFifo(sw, p.COMMIT_DEPTH)
        ff_layout = data.StructLayout({"id": p.ID_W, "warp": p.WARP_W, "cls": 2, "eoi": 1,
                                       "eog": 1, "tsnap": p.SEQ_W})
        if p.FAST_PATH:
            m.submodules.ff = ff = RegFifo(ff_layout.size, p.FAST_DEPTH)
            ff_rdy, ff_level = ff.r_rdy, ff.level
            ff_head = ff_layout(ff.r_data)
        else:
            ff = None
            ff_rdy, ff_level = C(0, 1), C(0, 1)

        req = self.req.payload
        seq_next = Signal(p.SEQ_W)

        # ---- STEP 0: legalise the config (TQ-E6..E8) ---------------------------------------
        cgm_low = is_zero(self.cfg_cgm)
        cgm_high = gt_const(self.cfg_cgm, p.POOL)
        cgm = Signal(p.CGM_W)
        m.d.comb += cgm.eq(Mux(cgm_low, 1, Mux(cgm_high, p.POOL, self.cfg_cgm)))
        bad = [cgm_low, cgm_high]
        if n_q == 1:
            mode_1_of_2_3 = eq_const(self.cfg_mode, 1) | eq_const(self.cfg_mode, 2)
            mode = Signal(2)
            m.d.comb += mode.eq(Mux(mode_1_of_2_3, 0, self.cfg_mode))
            lgq = self.cfg_lgq
            bad.append(mode_1_of_2_3)
        else:
            mode = self.cfg_mode
            lgq_low = is_zero(self.cfg_lgq)
            lgq_high = gt_const(self.cfg_lgq, n_q - 1)
            lgq = Signal(p.Q_W)
            m.d.comb += lgq.eq(Mux(lgq_low, 1, Mux(lgq_high, n_q - 1, self.cfg_lgq)))
            bad.append(eq_const(self.cfg_mode, 2) & (lgq_low | lgq_high))
        if not p.FREELIST:
            bad.append(self.cfg_reclaim)
        err_cfg = Cat(*bad).any()
        if p.FREELIST:
            m.d.comb += pool.cfg_reclaim.eq(self.cfg_reclaim)

        # ---- queue-head caches (seq and TEX bit of every list head) -----------------------
        # tracking and status queues here; the checked queues' (two levels) in LinkedQueues
        tq_seq = [Signal(p.SEQ_W, name=f"tq_seq{k}") for k in range(n_q + 1)]
        tq_tex = [Signal(name=f"tq_tex{k}") for k in range(n_q)]
        cq_seq = [queues.cq_tag[k].seq for k in range(n_q)]
        tcnt = [Signal(p.OCC_W, name=f"tcnt{k}") for k in range(n_q)]
        # a retroactive term of the previous cycle, added to tcnt one cycle late (the count of
        # terms in checked queue k is tcnt + retro_pend): the group tracker's mark, which
        # waits for the pop arbiter and the fast-path test, then ends at a flip-flop instead
        # of the counter's adder
        retro_pend = [Signal(name=f"retro_pend{k}") for k in range(n_q)]
        tq_cnt, cq_cnt = queues.tq_count, queues.cq_count
        cq_busy = queues.cq_nonempty

        # ---- STEP 1: G, req.ready, resp ----------------------------------------------------
        for q in range(n_q):                       # G candidates: CQ head, else TQ head
            m.d.comb += [oldest.valid[q].eq(cq_busy[q] | nonzero(tq_cnt[q])),
                         oldest.seq[q].eq(Mux(cq_busy[q], cq_seq[q], tq_seq[q]))]
        sq_valid = Signal()
        m.d.comb += [sq_valid.eq(nonzero(tq_cnt[n_q])), oldest.valid[n_q].eq(sq_valid),
                     oldest.seq[n_q].eq(tq_seq[n_q]), oldest.seq_next.eq(seq_next)]

        used = pool.used
        req_ready = self.req.ready
        ff_ok = lt_const(ff_level, p.FAST_DEPTH) if p.FAST_PATH else C(1, 1)
        m.d.comb += req_ready.eq(lt_const(used, p.POOL) & ff_ok & oldest.span_ok)
        accept = Signal()
        m.d.comb += accept.eq(self.req.valid & req_ready)

        hold_cf = Signal()
        which_cf = Signal()
        resp_valid = self.resp.valid
        m.d.comb += [which_cf.eq(hold_cf | (~ff_rdy & cf.r_rdy)),
                     resp_valid.eq(hold_cf | ff_rdy | cf.r_rdy)]
        cf_slot = cf.r_data
        m.d.comb += pool.rd2_addr.eq(cf_slot)
        cf_pl = pool.rd2_data
        rp = self.resp.payload
        with m.If(which_cf):
            m.d.comb += [rp.id.eq(cf_pl.id), rp.warp.eq(cf_pl.warp), rp.cls.eq(cf_pl.cls),
                         rp.src.eq(cf_pl.status), rp.q.eq(cf_pl.q),
                         rp.eoi.eq(bit_at(pool.eoi, cf_slot)),
                         rp.eog.eq(bit_at(pool.eog, cf_slot))]
        if p.FAST_PATH:
            with m.Else():
                m.d.comb += [rp.id.eq(ff_head.id), rp.warp.eq(ff_head.warp),
                             rp.cls.eq(ff_head.cls), rp.src.eq(SRC_FAST), rp.q.eq(0),
                             rp.eoi.eq(ff_head.eoi), rp.eog.eq(ff_head.eog)]
        fire = Signal()
        m.d.comb += fire.eq(resp_valid & self.resp.ready)

        # ---- STEP 2: commit decision --------------------------------------------------------
        for q in range(n_q):
            m.d.comb += [
                picker.cq_valid[q].eq(cq_busy[q]),
                picker.cq_has_term[q].eq(nonzero(tcnt[q]) | retro_pend[q]),
                picker.cq_upartial[q].eq(bit_at(pool.upartial, queues.cq_head[q])),
                picker.cq_seq[q].eq(cq_seq[q]),
                picker.cq_tex[q].eq(queues.cq_tag[q].tex),
                picker.cq_is_g[q].eq(oldest.is_g[q] & cq_busy[q]),
            ]
        m.d.comb += [picker.sq_valid.eq(sq_valid), picker.sq_seq.eq(tq_seq[n_q]),
                     picker.sq_is_g.eq(oldest.is_g[n_q]),
                     picker.cf_room.eq(lt_const(cf.level, p.COMMIT_DEPTH))]
        if p.FAST_PATH:
            m.d.comb += [picker.ff_valid.eq(ff_rdy), picker.ff_tsnap.eq(ff_head.tsnap)]
        cm_valid, cm_status = picker.cm_valid, picker.cm_status
        cm_cq = Signal()
        m.d.comb += cm_cq.eq(cm_valid & ~cm_status)
        cm_slot = Signal(sw)
        m.d.comb += [
            queues.sq_pop_en.eq(cm_valid & cm_status),
            queues.cmt_en.eq(cm_cq), queues.cmt_q.eq(picker.cm_q),
            cm_slot.eq(Mux(cm_status, queues.tq_head[n_q], queues.cmt_slot)),
        ]
        # What a checked-queue commit needs of its head is looked up at every head in parallel
        # with the decision and then selected by cm_q (the picker uses these only for cm_cq).
        cq_head = [queues.cq_head[k] for k in range(n_q)]

        def at_cm_head(lookup):
            return select([lookup(cq_head[k]) for k in range(n_q)], picker.cm_q)

        m.d.comb += [picker.h_term.eq(at_cm_head(lambda s: bit_at(pool.term, s))),
                     picker.h_eog.eq(at_cm_head(lambda s: bit_at(pool.eog, s))),
                     picker.h_eoi.eq(at_cm_head(lambda s: bit_at(pool.eoi, s)))]

        # ---- STEP 3: inval then fill --------------------------------------------------------
        fl, iv = self.fill.payload, self.inval.payload
        m.d.comb += [
            heads.inval_bank.eq(iv.bank), heads.inval_dslot.eq(iv.dslot),
            svt.inval_valid.eq(self.inval.valid), svt.inval_bank.eq(iv.bank),
            svt.inval_dslot.eq(iv.dslot), svt.inval_ignore.eq(heads.inval_live),
        ]
        for unit in (svt, heads):
            m.d.comb += [unit.fill_valid.eq(self.fill.valid), unit.fill_bank.eq(fl.bank),
                         unit.fill_dslot.eq(fl.dslot), unit.fill_sector.eq(fl.sector)]

        # ---- STEP 4: readiness and pop ------------------------------------------------------
        pop_valid, pop_q = pop_arb.valid, pop_arb.grant_idx
        pop_at = pop_arb.grant                     # one-hot: queue k pops this cycle
        m.d.comb += [pop_arb.req.eq(heads.ready), pop_arb.advance.eq(heads.ready.any()),
                     queues.pop_en.eq(pop_valid), queues.pop_q.eq(pop_q),
                     pool.rd3_addr.eq(queues.pop_slot)]
        # Second-level head cache: what promoting a tracking queue's second entry needs (its
        # check fields, seq and TEX bit), in registers, so that the successor's check against
        # the SVT starts from a register select after the pop arbiter instead of a pool read.
        # Refreshed exactly when queues.tq_second changes: from the pool at the popped queue's
        # third slot (queues.tq_third, itself read at registers: one RAM level before the
        # register), or from an insert landing right behind the head. (Reading the third of
        # every queue in parallel, one pool port each, made Yosys 0.70's abc9 fail an assertion.)
        sec_layout = data.StructLayout({"dslot": pl["dslot"].shape, "need": pl["need"].shape,
                                        "seq": p.SEQ_W, "tex": 1})
        sec = [Signal(sec_layout, name=f"tq_sec{k}") for k in range(n_q)]
        m.d.comb += pool.rd4_addr.eq(select([queues.tq_third[k] for k in range(n_q)], pop_q))
        succ = sec_layout(select([sec[k].as_value() for k in range(n_q)], pop_q))
        m.d.comb += [
            svt.a_dslot.eq(succ.dslot),
            heads.pop_valid.eq(pop_valid), heads.pop_q.eq(pop_q),
            heads.pop_succ.eq(queues.pop_succ_valid),
            heads.a_dslot.eq(succ.dslot), heads.a_need.eq(succ.need), heads.a_svt.eq(svt.a_valid),
        ]
        pop_term = bit_at(pool.term, queues.pop_slot)

        # ---- STEP 6: insert (router, mapper, group tracker) ---------------------------------
        cls_eff = Signal(2)
        m.d.comb += cls_eff.eq(Mux(eq_const(req.cls, 3), 0, req.cls))
        cls_tex = eq_const(cls_eff, TEX)
        m.d.comb += svt.b_dslot.eq(req.dslot)
        is_status = req.is_status
        if p.FAST_PATH:
            m.d.comb += svt.b_need.eq(req.need)
            miss_any = svt.b_miss                  # a needed sector is invalid
            to_fast = Signal()
            m.d.comb += to_fast.eq(req.fast_path & ~is_status & ~cls_tex & ~miss_any)
        else:
            to_fast = C(0, 1)
        to_tq = Signal()
        ins_slow = Signal()
        m.d.comb += [to_tq.eq(accept & ~is_status & ~to_fast), ins_slow.eq(accept & ~to_fast)]
        m.d.comb += [mapper.cls.eq(cls_eff), mapper.warp.eq(req.warp), mapper.mode.eq(mode),
                     mapper.lgq.eq(lgq), mapper.en.eq(to_tq)]
        q = mapper.q
        decode_q = [eq_const(q, k) for k in range(n_q)]    # one-hot of the mapped queue (a list:
        # slicing a Cat would lower the whole Cat at every use)
        if p.FAST_PATH:
            refused = to_tq & req.fast_path
            err_fast_tex, err_fast_miss = refused & cls_tex, refused & miss_any
        else:
            err_fast_tex = err_fast_miss = C(0, 1)

        # group tracker registers
        inst_open = Signal()
        inst_q = Signal(p.Q_W)
        last_slot = Signal(sw)
        last_committed = Signal()
        last_popped = Signal()
        gfirst_slot = Signal(sw)
        gfirst_committed = Signal()
        grp_open = Signal()
        grp_cnt = Signal(p.CGM_W)

        cm_last = Signal()                          # this cycle's commit is last_slot
        cm_gfirst = Signal()                        # ... is gfirst_slot
        m.d.comb += [cm_last.eq(cm_cq & at_cm_head(lambda s: eq(s, last_slot))),
                     cm_gfirst.eq(cm_cq & at_cm_head(lambda s: eq(s, gfirst_slot)))]
        last_cm_now = Signal()
        gfirst_cm_now = Signal()
        last_in_cq = Signal()
        m.d.comb += [
            last_cm_now.eq(last_committed | cm_last),
            gfirst_cm_now.eq(gfirst_committed | cm_gfirst),
            last_in_cq.eq((last_popped | (pop_valid & eq(queues.pop_slot, last_slot)))
                          & ~last_cm_now),
        ]
        tex_slow = Signal()
        close_eog = Signal()
        split = Signal()
        eoi_mark = Signal()
        unlock = Signal()
        # The TEX terms do not wait for the fast-path test (the SVT check): to_fast excludes TEX,
        # so a TEX request goes to a tracking queue exactly when accepted as a non-status one,
        # and cnt (used only under tex_slow) takes the split of a TEX insert as given.
        split_if = Signal()                         # a TEX insert would split the instruction
        m.d.comb += [
            tex_slow.eq(accept & ~is_status & cls_tex),
            close_eog.eq(ins_slow & ~tex_slow & grp_open),
            split_if.eq(inst_open & ~eq(inst_q, q)),
            split.eq(tex_slow & split_if),
            eoi_mark.eq(split & ~last_cm_now),
            unlock.eq(split & last_cm_now & picker.lock_valid_next
                      & eq(picker.lock_q_next, inst_q)),
            picker.lock_clr.eq(unlock),
        ]
        cnt = Signal(p.CGM_W + 1)
        eog_e = Signal()
        term_e = Signal()
        m.d.comb += [cnt.eq(Mux(split_if, 0, grp_cnt) + 1),
                     eog_e.eq(req.eog | ge(cnt, cgm)),
                     term_e.eq(req.eoi | eog_e)]
        cnt_one = eq_const(cnt, 1)
        retro_term = Signal()
        m.d.comb += retro_term.eq((close_eog | (eoi_mark & grp_open)) & last_in_cq)

        alloc = pool.alloc_data
        m.d.comb += [
            pool.alloc_en.eq(ins_slow),
            alloc.id.eq(req.id), alloc.warp.eq(req.warp), alloc.cls.eq(cls_eff),
            alloc.status.eq(is_status), alloc.q.eq(Mux(is_status, 0, q)), alloc.seq.eq(seq_next),
            alloc.dslot.eq(req.dslot), alloc.need.eq(req.need),
            pool.alloc_eoi.eq(req.eoi),
            pool.alloc_eog.eq(Mux(tex_slow, eog_e, req.eog)),
            pool.alloc_term.eq(Mux(tex_slow, term_e, 1)),
            pool.alloc_upartial.eq(tex_slow & cnt_one & term_e & eog_e & ~req.eoi),
            pool.mark_en.eq(close_eog | eoi_mark), pool.mark_slot.eq(last_slot),
            pool.mark_eog.eq(close_eog), pool.mark_eoi.eq(eoi_mark),
            pool.up_slot.eq(gfirst_slot),
        ]
        with m.If(close_eog):
            m.d.comb += [pool.up_en.eq(~gfirst_cm_now), pool.up_val.eq(1)]
        with m.Elif(eoi_mark):
            m.d.comb += [pool.up_en.eq(~gfirst_cm_now), pool.up_val.eq(0)]
        with m.Elif(tex_slow & term_e & ~cnt_one):
            m.d.comb += [pool.up_en.eq(~gfirst_cm_now), pool.up_val.eq(eog_e & ~req.eoi)]

        with m.If(pop_valid & eq(queues.pop_slot, last_slot)):
            m.d.sync += last_popped.eq(1)
        with m.If(cm_last):
            m.d.sync += last_committed.eq(1)
        with m.If(cm_gfirst):
            m.d.sync += gfirst_committed.eq(1)
        with m.If(close_eog):
            m.d.sync += [grp_open.eq(0), grp_cnt.eq(0)]
        with m.If(tex_slow):
            m.d.sync += [last_slot.eq(pool.alloc_slot), last_committed.eq(0),
                         last_popped.eq(0), inst_q.eq(q), inst_open.eq(~req.eoi),
                         grp_open.eq(~term_e), grp_cnt.eq(Mux(term_e, 0, cnt))]
            with m.If(cnt_one):
                m.d.sync += [gfirst_slot.eq(pool.alloc_slot), gfirst_committed.eq(0)]

        ins_list = Signal(queues.l_w)
        m.d.comb += [ins_list.eq(Mux(is_status, n_q, q)), queues.ins_en.eq(ins_slow),
                     queues.ins_list.eq(ins_list), queues.ins_slot.eq(pool.alloc_slot)]
        tq_after = (select([tq_cnt[k] for k in range(n_q)], q) - (pop_at & Cat(*decode_q)).any())
        ins_promote = Signal()
        m.d.comb += [
            ins_promote.eq(to_tq & is_zero(tq_after[:p.OCC_W])),
            heads.ins_valid.eq(ins_promote), heads.ins_q.eq(q),
            heads.b_dslot.eq(req.dslot), heads.b_need.eq(req.need), heads.b_svt.eq(svt.b_valid),
        ]
        with m.If(ins_slow):
            m.d.sync += seq_next.eq(seq_next + 1)
        if p.FAST_PATH:
            ent = Signal(ff_layout)
            m.d.comb += [ent.id.eq(req.id), ent.warp.eq(req.warp), ent.cls.eq(cls_eff),
                         ent.eoi.eq(req.eoi), ent.eog.eq(req.eog), ent.tsnap.eq(seq_next),
                         ff.w_data.eq(ent), ff.w_en.eq(accept & to_fast)]

        # ---- head caches and terminator counts ----------------------------------------------
        m.d.comb += [pool.rd0_addr.eq(queues.sq_succ), pool.rd1_addr.eq(cm_slot),
                     queues.pop_tag.seq.eq(select(tq_seq[:n_q], pop_q)),
                     queues.pop_tag.tex.eq(select(tq_tex, pop_q))]
        for k in range(n_q):
            push_k = pop_at[k]
            cm_k = cm_cq & eq_const(picker.cm_q, k)
            with m.If(push_k & queues.pop_succ_valid):
                m.d.sync += [tq_seq[k].eq(sec[k].seq), tq_tex[k].eq(sec[k].tex)]
            with m.If(ins_promote & decode_q[k]):
                m.d.sync += [tq_seq[k].eq(seq_next), tq_tex[k].eq(cls_tex)]
            third = pool.rd4_data              # the popped queue's third entry
            with m.If(push_k):
                m.d.sync += [sec[k].dslot.eq(third.dslot), sec[k].need.eq(third.need),
                             sec[k].seq.eq(third.seq), sec[k].tex.eq(eq_const(third.cls, TEX))]
            with m.If(to_tq & decode_q[k] & eq_const((tq_cnt[k] - push_k)[:p.OCC_W], 1)):
                m.d.sync += [sec[k].dslot.eq(req.dslot), sec[k].need.eq(req.need),
                             sec[k].seq.eq(seq_next), sec[k].tex.eq(cls_tex)]
            inc = (push_k & pop_term) + retro_pend[k]
            dec = cm_k & picker.h_term
            m.d.sync += [tcnt[k].eq(tcnt[k] + inc - dec),
                         retro_pend[k].eq(retro_term & eq_const(inst_q, k))]
        with m.If(cm_valid & cm_status & queues.sq_succ_valid):
            m.d.sync += tq_seq[n_q].eq(pool.rd0_data.seq)
        sq_left = (tq_cnt[n_q] - (cm_valid & cm_status))[:p.OCC_W]
        with m.If(accept & is_status & is_zero(sq_left)):
            m.d.sync += tq_seq[n_q].eq(seq_next)

        # ---- STEP 5 commit FIFO, STEP 7 output, release -------------------------------------
        m.d.comb += [cf.w_en.eq(cm_valid), cf.w_data.eq(cm_slot),
                     cf.r_en.eq(fire & which_cf),
                     pool.rel_en.eq(fire & which_cf), pool.rel_slot.eq(cf_slot)]
        if p.FAST_PATH:
            m.d.comb += ff.r_en.eq(fire & ~which_cf)
        m.d.sync += hold_cf.eq(resp_valid & which_cf & ~self.resp.ready)

        # ---- observation and status outputs -------------------------------------------------
        m.d.comb += [
            self.pop.valid.eq(pop_valid), self.pop.payload.q.eq(pop_q),
            self.pop.payload.id.eq(pool.rd3_data.id),
            self.cmt.valid.eq(cm_valid), self.cmt.payload.src.eq(cm_status),
            self.cmt.payload.q.eq(Mux(cm_status, 0, picker.cm_q)),
            self.cmt.payload.id.eq(pool.rd1_data.id),
            self.st_occ.eq(tq_cnt[n_q]), self.fast_occ.eq(ff_level),
            self.pool_used.eq(used), self.pool_full.eq(eq_const(used, p.POOL)),
            self.ready_vec.eq(heads.ready), self.lock_valid.eq(picker.lock_valid),
            self.lock_q.eq(picker.lock_q),
        ]
        if p.FREELIST:
            m.d.comb += self.reclaim_mode.eq(pool.reclaim_mode)
        for k in range(n_q):
            m.d.comb += self.occ[k].eq(tq_cnt[k] + cq_cnt[k])

        # ---- STEP 8: counters and error flags -----------------------------------------------
        errs = Cat(accept & eq_const(req.cls, 3), err_fast_tex, err_fast_miss, split,
                   self.inval.valid & heads.inval_live, err_cfg)
        events = {
            "cnt_req_stall": self.req.valid & ~req_ready,
            "cnt_pool_full": eq_const(used, p.POOL),
            "cnt_resp_stall": resp_valid & ~self.resp.ready,
            "cnt_pop": pop_valid, "cnt_commit": cm_valid,
            "cnt_interlock": picker.interlocked,
            "cnt_fast": accept & to_fast,
            "cnt_err": errs.any(),
        }
        for name in COUNTERS:                      # the registers are the output ports
            reg = getattr(self, name)
            with m.If(events[name]):
                m.d.sync += reg.eq(reg + 1)
        m.d.sync += self.err.eq(Mux(self.err_clr, 0, self.err) | errs)
        return m
