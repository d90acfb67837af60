"""SingleFifo: the single in-order T2D FIFO baseline (spec trackq.md §4.5, TQ-F46, TQ-F47,
TQ-I13), built from the same EntryPool, LinkedQueues, SectorValidTable and HeadTracker as
``TrackingQueues`` with one queue."""

from amaranth import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from golden.trackq.fifo import SINGLE_FIFO_COUNTERS
from golden.trackq.formats import COUNTER_W, SRC_TQ
from hw.common.arbiter import RoundRobinArbiter
from hw.common.lintops import eq_const, is_zero, lt_const
from hw.trackq.heads import HeadTracker
from hw.trackq.pool import EntryPool
from hw.trackq.queues import LinkedQueues
from hw.common.regfifo import RegFifo
from hw.trackq.sectors import SectorValidTable
from hw.trackq.top import check_params, stream_ports

__all__ = ["SingleFifo"]


class SingleFifo(wiring.Component):
    """The baseline: one in-order tracking queue over a POOL-slot pool, cycle-exact with
    ``golden.trackq.fifo.SingleFifoModel``.

    The head is checked once against the sector-valid table when it becomes head and is then
    woken by fills (same-cycle bypass); one ready head pops per cycle into the checked queue;
    one checked entry per cycle moves into the commit FIFO while it has room (COMMIT_DEPTH);
    ``resp`` presents the commit-FIFO head. Slots are released at ``resp`` and reclaimed in
    order, one per cycle. is_status and fast_path are ordinary slow entries; cls, eoi and eog
    pass through unchanged; there are no config inputs, commit units, status or interlock rules
    and no error flags (TQ-F47). An inval of the head's {bank, dslot} is ignored, as in
    ``TrackingQueues`` (TQ-E5), without a flag. On the equivalence domain of TQ-V15 it equals
    ``TrackingQueues`` in mode 1 cycle by cycle.

    Parameters
    ----------
    N_Q, POOL, N_WARPS, BANKS, SECTORS, DSLOTS, ID_W, FAST_PATH, FAST_DEPTH, COMMIT_DEPTH,
    FREELIST, SEQ_W : int
        The parameters of ``TrackingQueues``, checked the same way (TQ-C17), so that both have
        the same port layouts (TQ-I13); the baseline uses POOL, N_WARPS, BANKS, SECTORS, DSLOTS,
        ID_W and COMMIT_DEPTH, and N_Q only for the width of the ``q`` fields (always 0).

    Members
    -------
    req, fill, inval, resp, pop, cmt
        As ``TrackingQueues`` (TQ-I1, I3, I4, I5, I7, I8).
    ready_vec : Out(1)
        The head is ready this cycle.
    pool_used, pool_full : Out
        Allocated slots; pool_used = POOL.
    cnt_req_stall, cnt_pool_full, cnt_resp_stall, cnt_pop, cnt_commit : Out(32)
        The counters of TQ-I10 that apply.
    """

    def __init__(self, N_Q=4, POOL=16, N_WARPS=8, BANKS=4, SECTORS=4, DSLOTS=16, ID_W=8,
                 FAST_PATH=1, FAST_DEPTH=2, COMMIT_DEPTH=4, FREELIST=1, SEQ_W=16):
        values = dict(N_Q=N_Q, POOL=POOL, N_WARPS=N_WARPS, BANKS=BANKS, SECTORS=SECTORS,
                      DSLOTS=DSLOTS, ID_W=ID_W, FAST_PATH=FAST_PATH, FAST_DEPTH=FAST_DEPTH,
                      COMMIT_DEPTH=COMMIT_DEPTH, FREELIST=FREELIST, SEQ_W=SEQ_W)
        self.p = p = check_params(self, values)
        ports = {
            **stream_ports(p),
            "ready_vec": Out(1), "pool_used": Out(p.OCC_W), "pool_full": Out(1),
        }
        for name in SINGLE_FIFO_COUNTERS:
            ports[name] = Out(COUNTER_W)
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        sw = (p.POOL - 1).bit_length()
        layout = data.StructLayout({
            "id": p.ID_W, "warp": p.WARP_W, "cls": 2, "eoi": 1, "eog": 1,
            "dslot": data.ArrayLayout(p.DSLOT_W, p.BANKS),
            "need": data.ArrayLayout(p.SECTORS, p.BANKS)})
        m.submodules.svt = svt = SectorValidTable(p.BANKS, p.DSLOTS, p.SECTORS)
        m.submodules.head = head = HeadTracker(1, p.BANKS, p.SECTORS, p.DSLOT_W)
        m.submodules.pool = pool = EntryPool(p.POOL, layout, freelist=0, n_read=4)
        m.submodules.queues = queues = LinkedQueues(1, p.POOL, status=False)
        m.submodules.pop_arb = pop_arb = RoundRobinArbiter(1)
        m.submodules.cf = cf = RegFifo(sw, p.COMMIT_DEPTH)
        req = self.req.payload
        used = pool.used

        ready = self.req.ready
        m.d.comb += ready.eq(lt_const(used, p.POOL))
        accept = Signal()
        m.d.comb += accept.eq(self.req.valid & ready)

        # resp from the commit-FIFO head; release at the transfer
        m.d.comb += pool.rd1_addr.eq(cf.r_data)
        out = pool.rd1_data
        rp = self.resp.payload
        m.d.comb += [self.resp.valid.eq(cf.r_rdy),
                     rp.id.eq(out.id), rp.warp.eq(out.warp), rp.cls.eq(out.cls),
                     rp.src.eq(SRC_TQ), rp.q.eq(0), rp.eoi.eq(out.eoi), rp.eog.eq(out.eog)]
        fire = Signal()
        m.d.comb += [fire.eq(cf.r_rdy & self.resp.ready), cf.r_en.eq(fire),
                     pool.rel_en.eq(fire), pool.rel_slot.eq(cf.r_data)]

        # commit: checked-queue head into the commit FIFO while it has room
        commit = self.cmt.valid
        m.d.comb += [commit.eq(queues.cq_nonempty[0] & lt_const(cf.level, p.COMMIT_DEPTH)),
                     queues.cmt_en.eq(commit), queues.cmt_q.eq(0),
                     cf.w_en.eq(commit), cf.w_data.eq(queues.cmt_slot),
                     pool.rd3_addr.eq(queues.cmt_slot)]

        # inval, fill, check and pop
        fl, iv = self.fill.payload, self.inval.payload
        m.d.comb += [head.inval_bank.eq(iv.bank), head.inval_dslot.eq(iv.dslot),
                     svt.inval_valid.eq(self.inval.valid), svt.inval_bank.eq(iv.bank),
                     svt.inval_dslot.eq(iv.dslot), svt.inval_ignore.eq(head.inval_live)]
        for unit in (svt, head):
            m.d.comb += [unit.fill_valid.eq(self.fill.valid), unit.fill_bank.eq(fl.bank),
                         unit.fill_dslot.eq(fl.dslot), unit.fill_sector.eq(fl.sector)]
        pop = pop_arb.grant[0]
        m.d.comb += [pop_arb.req.eq(head.ready), pop_arb.advance.eq(head.ready.any()),
                     queues.pop_en.eq(pop), queues.pop_q.eq(0),
                     pool.rd0_addr.eq(queues.pop_succ), pool.rd2_addr.eq(queues.pop_slot),
                     svt.a_dslot.eq(pool.rd0_data.dslot),
                     head.pop_valid.eq(pop), head.pop_q.eq(0),
                     head.pop_succ.eq(queues.pop_succ_valid),
                     head.a_dslot.eq(pool.rd0_data.dslot), head.a_need.eq(pool.rd0_data.need),
                     head.a_svt.eq(svt.a_valid)]

        # insert
        alloc = pool.alloc_data
        m.d.comb += [pool.alloc_en.eq(accept),
                     alloc.id.eq(req.id), alloc.warp.eq(req.warp), alloc.cls.eq(req.cls),
                     alloc.eoi.eq(req.eoi), alloc.eog.eq(req.eog), alloc.dslot.eq(req.dslot),
                     alloc.need.eq(req.need),
                     queues.ins_en.eq(accept), queues.ins_list.eq(0),
                     queues.ins_slot.eq(pool.alloc_slot),
                     svt.b_dslot.eq(req.dslot),
                     head.ins_valid.eq(accept & is_zero((queues.tq_count[0] - pop)[:p.OCC_W])),
                     head.ins_q.eq(0), head.b_dslot.eq(req.dslot), head.b_need.eq(req.need),
                     head.b_svt.eq(svt.b_valid)]

        # outputs and counters
        m.d.comb += [self.pop.valid.eq(pop), self.pop.payload.id.eq(pool.rd2_data.id),
                     self.cmt.payload.id.eq(pool.rd3_data.id),
                     self.ready_vec.eq(pop),
                     self.pool_used.eq(used), self.pool_full.eq(eq_const(used, p.POOL))]
        events = {"cnt_req_stall": self.req.valid & ~ready, "cnt_pool_full": eq_const(used, p.POOL),
                  "cnt_resp_stall": cf.r_rdy & ~self.resp.ready, "cnt_pop": pop,
                  "cnt_commit": commit}
        for name in SINGLE_FIFO_COUNTERS:             # the registers are the output ports
            reg = getattr(self, name)
            with m.If(events[name]):
                m.d.sync += reg.eq(reg + 1)
        return m
