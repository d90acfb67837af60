"""The memory router top (spec memrouter.md §2.3): processor ports, intake, routing through the
page table, per-port class queues and QoS arbiters, tags and the response buffers, PT_INIT and
the CSR block.

The direct path (NEAR parts, and FAR parts with FAR_ALLOC = 0), the line service of the
migration cache (parts of pages with a line, allocation with FAR_ALLOC = 1, demand fills,
eviction with write-back, FLUSH, LINE_STATUS, ALLOC / EVICT events) and the migration engine
(hw/memrouter/engine.py), with every check, split, merge, error response and counter of them.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.memrouter.params import Config, MemrouterParams
from golden.memrouter.router import COUNTERS
from hw.common.layout import always_ready_stream
from hw.common.lintops import eq_const, nonzero
from hw.common.memfifo import MemFifo
from hw.memrouter.csr import PORT_BEATS, CsrBlock
from hw.memrouter.engine import MigEngine
from hw.memrouter.linestore import LineStore
from hw.memrouter.intake import Intake, req_fields
from hw.memrouter.layouts import (CSRREQ_L, CSRRSP_L, DESC_W, EVT_L, MREQ_L, MRSP_L, PREQ_L,
                                  PRSP_L, pt_data_pte, word_desc)
from hw.memrouter.pagetable import page_table
from hw.memrouter.ptinit import PtInit
from hw.memrouter.qos_port import QosPort
from hw.memrouter.rob import RespRob, comp_signature
from hw.memrouter.route import Route
from hw.memrouter.tags import PortTags

__all__ = ["Memrouter", "default_reset_cfg"]


def default_reset_cfg(params):
    """RESET_CFG (MR-C11): CFG-B's configuration with T_SECT = NS/4, cut to N_OFF ports."""
    cfg = Config()
    cfg.T_SECT = params.NS // 4
    cfg.QOS = cfg.QOS[:params.N_OFF + 1]
    return cfg


class Memrouter(wiring.Component):
    """Base-layer memory router.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    reset_cfg : golden.memrouter.params.Config or None
        Reset values of the CSRs (MR-C11); default :func:`default_reset_cfg`. It must be a
        legal configuration: PT_INIT runs with it after reset.
    ntags : int
        Requests in flight per memory port (queued in its class queues, in the port, or
        answering).
    qdepth : int
        Beats per class queue. Queues deep enough to hold a backlog of both classes let the
        QoS arbiter keep its shares (MR-P4); with shallow queues the port's own request queue
        holds everything and requests are served in arrival order.
    poison : bool
        Test builds: block-RAM reads that collide with a write in the same cycle (the QoS
        beat queues) return the inverted word, so a test comparing with the golden model sees
        any use of such a read (``hw.common.bram``).

    Members
    -------
    preq : In(stream.Signature(PReq)).array(N_PROC)
    prsp : Out(stream.Signature(PRsp)).array(N_PROC)
    mreq : Out(stream.Signature(MReq)).array(1 + N_OFF)
        Port 0 is the HBM, port 1 + m module m.
    mrsp : In(stream.Signature(MRsp)).array(1 + N_OFF)
    csr_req : In(stream.Signature(CsrReq)); csr_rsp : Out(stream.Signature(CsrRsp))
    evt : Out(always_ready_stream(Evt))
        Events (MR-I6): never back-pressured, so no ``ready``.
    """

    def __init__(self, params=None, reset_cfg=None, ntags=64, qdepth=64, poison=False):
        self.p = params or MemrouterParams()
        self.poison = bool(poison)
        self.reset_cfg = reset_cfg or default_reset_cfg(self.p)
        self.ntags = ntags
        self.qdepth = qdepth
        self.ports = self.p.N_OFF + 1
        super().__init__({
            "preq": In(stream.Signature(PREQ_L)).array(self.p.N_PROC),
            "prsp": Out(stream.Signature(PRSP_L)).array(self.p.N_PROC),
            "mreq": Out(stream.Signature(MREQ_L)).array(self.ports),
            "mrsp": In(stream.Signature(MRSP_L)).array(self.ports),
            "csr_req": In(stream.Signature(CSRREQ_L)),
            "csr_rsp": Out(stream.Signature(CSRRSP_L)),
            "evt": Out(always_ready_stream(EVT_L)),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        nports, nproc = self.ports, p.N_PROC

        m.submodules.csr = csr = CsrBlock(p, self.reset_cfg)
        m.submodules.ptinit = ptinit = PtInit(p)
        m.submodules.nfree = nfree = MemFifo(DESC_W, p.PT_ENTRIES)
        m.submodules.ffree = ffree = MemFifo(DESC_W, p.PT_ENTRIES)
        m.submodules.intake = intake = Intake(p)
        tag_w = (self.ntags - 1).bit_length()
        pw = (p.PT_ENTRIES - 1).bit_length()
        m.submodules.lines = ls = LineStore(p, pw)
        m.submodules.route = route = Route(p, ls, tag_w=tag_w)
        m.submodules.engine = eng = MigEngine(p, ls, tag_w)
        m.submodules.tags = tags = PortTags(p, self.ntags)
        robs = []
        for i in range(nproc):
            rob = RespRob(p, i)
            m.submodules[f"rob{i}"] = rob
            robs.append(rob)
        qports = []
        for j in range(nports):
            qp = QosPort(qden=p.QDEN, max_len=p.MAX_LEN, depth=self.qdepth,
                         poison_collisions=self.poison)
            m.submodules[f"qos{j}"] = qp
            qports.append(qp)

        self.units = dict(csr=csr, ptinit=ptinit, intake=intake, route=route, tags=tags,
                          robs=robs, qports=qports, lines=ls, engine=eng)   # simulation probes
        wiring.connect(m, wiring.flipped(self.csr_req), csr.csr_req)
        wiring.connect(m, csr.csr_rsp, wiring.flipped(self.csr_rsp))
        ctrl = csr.ctrl
        mode, mig_stall, far_alloc, uth_en = ctrl[0], ctrl[1], ctrl[5], ctrl[8]

        # PT_INIT: waits for the router to be quiet, holds the intake while it runs
        quiet = Signal()
        idle_ports = Cat(~nonzero(tags.inflight[j]) for j in range(nports)).all()
        m.d.comb += quiet.eq(~route.busy & ~intake.req_valid & idle_ports & ~eng.busy)
        m.d.comb += [
            ptinit.start.eq(csr.init_start), csr.quiet.eq(quiet),
            ptinit.mode.eq(mode), ptinit.slot_len.eq(csr.slot_len), ptinit.slots.eq(csr.slots),
            ptinit.near_frames.eq(csr.near_frames), ptinit.near_reserve.eq(csr.near_reserve),
            ptinit.hbm_frames.eq(csr.hbm_frames), ptinit.mod_frames.eq(csr.mod_frames),
            csr.init_busy.eq(ptinit.busy),
            csr.init_accepted.eq(ptinit.accepted), csr.init_refused.eq(ptinit.refused),
            csr.pages.eq(ptinit.pages), csr.hand.eq(eng.hand),
        ]

        # the line store, and the migration engine
        m.d.comb += [
            ls.f_en.eq(tags.f_en), ls.f_addr.eq(tags.f_addr), ls.f_poison.eq(tags.f_poison),
            ls.f_data.eq(tags.c_data), ls.inval_all.eq(ptinit.accepted),
            ls.window.eq(csr.window), ls.csr_ppn.eq(csr.pt_addr), csr.pt_has_line.eq(ls.csr_hit),
        ]
        m.d.comb += [ls.status_line.eq(csr.line_sel), csr.line_status.eq(ls.status)]
        m.d.comb += [
            eng.mode.eq(mode), eng.walk_pause.eq(ctrl[6]), eng.walk_stop_en.eq(ctrl[7]),
            eng.walk_stop.eq(csr.walk_stop), eng.mig_outstanding.eq(csr.mig_outstanding),
            eng.pages.eq(ptinit.pages),
            eng.cmd_we.eq(csr.mig_cmd_we), eng.cmd_op.eq(csr.wdata[0:4]),
            eng.cmd_page.eq(csr.wdata[16:32]), eng.cmd_arg.eq(csr.mig_arg),
            csr.cmd_full.eq(eng.cmd_full), csr.mig_status.eq(eng.mig_status),
            csr.eng_busy.eq(eng.busy),
            eng.trig_en.eq(route.trig_en), eng.trig_ppn.eq(route.trig_ppn),
            eng.trig_src.eq(route.trig_src), route.trig_ok.eq(eng.trig_ok),
            route.en_acc.eq(ctrl[3]), route.en_sect.eq(ctrl[4]),
            route.t_acc.eq(csr.t_acc), route.t_sect.eq(csr.t_sect),
            route.eng_hold.eq(eng.hold), eng.safe.eq(route.eng_safe),
            route.ealloc_req.eq(eng.alloc_req), route.ealloc_ppn.eq(eng.alloc_ppn),
            eng.alloc_done.eq(route.ealloc_done), eng.alloc_line.eq(route.ealloc_line),
            route.eevict_req.eq(eng.evict_req), route.eevict_line.eq(eng.evict_line),
            eng.evict_done.eq(route.eevict_done),
            route.eng_idle.eq(~eng.busy), eng.walk_ok.eq(route.walk_ok),
            eng.ref_en.eq(route.ref_en), eng.ref_ppn.eq(route.ref_ppn),
            eng.nd_en.eq(route.nd_en), eng.nd_ppn.eq(route.nd_ppn),
            eng.init.eq(ptinit.accepted), eng.init_w.eq(ptinit.pt_w_en),
            eng.home_en.eq(ptinit.pt_w_en & mode), eng.home_ppn.eq(ptinit.pt_w_addr),
            eng.home_desc.eq(ptinit.pt_w_data[3:3 + DESC_W]),
            eng.f_en.eq(tags.f_en), eng.f_addr.eq(tags.f_addr), eng.f_poison.eq(tags.f_poison),
            eng.f_walker.eq(tags.f_walker), eng.w_ack.eq(tags.w_ack),
            csr.clr_mig.eq(eng.clr_mig), csr.prevalid_en.eq(eng.prevalid_en),
            csr.prevalid.eq(eng.prevalid),
        ]
        for k in range(3 * nports):
            m.d.comb += [eng.issued[k].eq(tags.issued[k]), eng.done[k].eq(tags.done[k])]

        # page table writers: PT_INIT, the engine, then the CSR block
        # (read port a: the routing stage, b: the CSR block, c: the engine)
        m.d.comb += [csr.pt_grant.eq(~ptinit.pt_w_en & ~eng.pt_wen),
                     eng.pt_wok.eq(~ptinit.pt_w_en)]
        page_table(
            m, p,
            write=(ptinit.pt_w_en | eng.pt_wen | csr.pt_w_en,
                   Mux(ptinit.pt_w_en, ptinit.pt_w_addr,
                       Mux(eng.pt_wen, eng.pt_waddr, csr.pt_addr)),
                   Mux(ptinit.pt_w_en, ptinit.pt_w_data,
                       Mux(eng.pt_wen, eng.pt_wdata, pt_data_pte(csr.wdata)))),
            reads=((route.pt_addr, route.pt_data), (csr.pt_addr, csr.pt_data),
                   (eng.pt_raddr, eng.pt_rdata)))

        # free lists: PT_INIT and the CSR block push, the engine pops and pushes
        m.d.comb += [
            nfree.clear.eq(ptinit.accepted), ffree.clear.eq(ptinit.accepted),
            nfree.w_en.eq(ptinit.nfree_push | csr.nfree_push | eng.nfree_push),
            nfree.w_data.eq(Mux(ptinit.nfree_push, ptinit.nfree_desc,
                                Mux(csr.nfree_push, word_desc(csr.wdata), eng.push_data))),
            ffree.w_en.eq(csr.ffree_push | eng.ffree_push),
            ffree.w_data.eq(Mux(csr.ffree_push, word_desc(csr.wdata), eng.push_data)),
            csr.nfree_cnt.eq(nfree.level), csr.ffree_cnt.eq(ffree.level),
            eng.push_ok.eq(~ptinit.nfree_push & ~csr.nfree_push & ~csr.ffree_push),
            eng.nfree_rdy.eq(nfree.r_rdy), eng.nfree_data.eq(nfree.r_data),
            nfree.r_en.eq(eng.nfree_pop),
            eng.ffree_rdy.eq(ffree.r_rdy), eng.ffree_data.eq(ffree.r_data),
            ffree.r_en.eq(eng.ffree_pop),
        ]

        # intake and response buffers
        for i in range(nproc):
            wiring.connect(m, wiring.flipped(self.preq[i]), intake.preq[i])
            wiring.connect(m, robs[i].prsp, wiring.flipped(self.prsp[i]))
            m.d.comb += [intake.rob_free[i].eq(robs[i].free), intake.rob_tail[i].eq(robs[i].tail),
                         robs[i].rsv_en.eq(intake.rsv_en[i]),
                         robs[i].rsv_id.eq(intake.rsv_id), robs[i].rsv_nb.eq(intake.rsv_nb),
                         robs[i].rsv_wr.eq(intake.rsv_wr), robs[i].rsv_res.eq(intake.rsv_res)]
        m.d.comb += [intake.hold.eq(ptinit.busy | csr.init_pending),
                     intake.pages.eq(ptinit.pages)]

        # routing stage
        for name, _ in req_fields(p):
            m.d.comb += getattr(route, f"req_{name}").eq(getattr(intake, f"req_{name}"))
        m.d.comb += [
            route.req_valid.eq(intake.req_valid), intake.req_pop.eq(route.req_pop),
            route.wd_valid.eq(intake.wd_valid), route.wd_data.eq(intake.wd_data),
            route.wd_be.eq(intake.wd_be), intake.wd_pop.eq(route.wd_pop),
            route.mode.eq(mode), route.mig_stall.eq(mig_stall), route.far_alloc.eq(far_alloc),
            route.flush.eq(csr.flush), csr.flushing.eq(route.flushing),
            route.tag_ok.eq(tags.avail), eng.tag_ok.eq(tags.avail),
            eng.route_taking.eq(route.take_en),
            # tags: the routing stage first, the engine in cycles where it takes none
            tags.take_en.eq(route.take_en | eng.take_en),
            tags.take_port.eq(Mux(route.take_en, route.iss_port, eng.iss_port)),
            tags.take_kind.eq(Mux(route.take_en, route.take_kind, eng.take_kind)),
            tags.take_proc.eq(route.take_proc),
            tags.take_slot.eq(Mux(route.take_en, route.take_slot, eng.take_slot)),
            tags.take_ab.eq(Mux(route.take_en, route.take_ab, eng.take_ab)),
            tags.take_cls.eq(Mux(route.take_en, route.iss_cls, 2)),
        ]
        for j in range(nports):
            m.d.comb += [route.tag_next[j].eq(tags.next_tag[j]),
                         eng.tag_next[j].eq(tags.next_tag[j])]

        # class queues and QoS per port. One write beat for all four ports' beat memories: the
        # routing stage's when its beat transfers (to any port), else the migration engine's.
        # (Each port choosing between the two buses itself cost four 289-bit multiplexers and
        # both buses' long wires to every port: the default ECP5 build's congestion.)
        ready = Signal(nports * 2)
        mig_ready = Signal(nports)
        route_go = Signal()
        m.d.comb += route_go.eq(route.iss_valid & route.iss_ready)
        beat = Signal(MREQ_L)
        m.d.comb += [
            beat.tag.eq(Mux(route_go, route.iss_tag, eng.iss_tag)),
            beat.addr.eq(Cat(C(0, 5), Mux(route_go, route.iss_sect, eng.iss_sect),
                             Mux(route_go, route.iss_frame, eng.iss_frame))),
            beat.len.eq(Mux(route_go, route.iss_len, eng.iss_len)),
            beat.wr.eq(Mux(route_go, route.iss_wr, eng.iss_wr)),
            beat.cls.eq(Mux(route_go, route.iss_cls, 2)),
            beat.data.eq(Mux(route_go, route.iss_data, eng.iss_data)),
            beat.be.eq(Mux(route_go, route.iss_be, Mux(eng.iss_wr, (1 << 32) - 1, 0))),
            beat.last.eq(Mux(route_go, route.iss_last, eng.iss_last)),
        ]
        for j, qp in enumerate(qports):
            for cls, inp in ((0, qp.near), (1, qp.far)):
                mine = Signal(name=f"iss{j}_{cls}")
                m.d.comb += mine.eq(eq_const(route.iss_port, j) & eq_const(route.iss_cls, cls))
                m.d.comb += [inp.valid.eq(route.iss_valid & mine), ready[2 * j + cls].eq(
                    inp.ready & mine), inp.payload.eq(beat)]
            mine = Signal(name=f"iss{j}_mig")
            m.d.comb += mine.eq(eq_const(eng.iss_port, j))
            m.d.comb += [qp.mig.valid.eq(eng.iss_valid & mine & ~route_go),
                         mig_ready[j].eq(qp.mig.ready & mine & ~route_go),
                         qp.mig.payload.eq(beat)]
            m.d.comb += [qp.mig_block.eq(0),
                         qp.rate_n.eq(csr.port_rate_n[j]), qp.rate_f.eq(csr.port_rate_f[j]),
                         qp.burst_n.eq(csr.port_burst_n[j][:8]),
                         qp.burst_f.eq(csr.port_burst_f[j][:8]),
                         qp.uth_en.eq(uth_en), qp.uth.eq(csr.port_uth[j]),
                         qp.uw.eq(csr.uw[:16]), qp.mig_starve.eq(csr.mig_starve[:16])]
            wiring.connect(m, qp.mreq, wiring.flipped(self.mreq[j]))
            wiring.connect(m, wiring.flipped(self.mrsp[j]), tags.mrsp[j])
            # per-port beat counters: sectors, counted when a request's beats transfer
            hdr = self.mreq[j].payload
            for k, name in enumerate(PORT_BEATS):
                wr, cls = k // 3, k % 3
                hit = Signal(name=f"cnt{j}_{name.lower()}")
                m.d.comb += hit.eq(qp.beat_xfer & eq_const(qp.beat_cls, cls)
                                   & (qp.beat_wr if wr else ~qp.beat_wr))
                m.d.comb += getattr(csr, f"beat_{j}_{name.lower()}").eq(
                    hit if wr else Mux(hit, hdr.len + 1, 0))
        m.d.comb += [route.iss_ready.eq(ready.any()), eng.iss_ready.eq(mig_ready.any())]

        # completion bus: responses first, then the routing stage's rejections
        for name in comp_signature(p):
            bus = Signal(len(getattr(tags, f"c_{name}")), name=f"comp_{name}")
            if name == "en":
                m.d.comb += bus.eq(tags.c_en | route.c_en)
            elif name in ("proc", "slot", "err"):
                m.d.comb += bus.eq(Mux(tags.c_en, getattr(tags, f"c_{name}"),
                                       getattr(route, f"c_{name}")))
            else:
                m.d.comb += bus.eq(Mux(tags.c_en, getattr(tags, f"c_{name}"),
                                       getattr(route, f"c_{name}")))
            for rob in robs:
                m.d.comb += getattr(rob, f"c_{name}").eq(bus)
        m.d.comb += route.c_grant.eq(~tags.c_en)

        # counters (§3.3 0x200)
        incs = {
            "PREQ_BEATS": intake.beat,
            "PRSP_BEATS": sum(rob.beat_sent for rob in robs),
            "SECT_HBM": route.sect_hbm, "SECT_NEARM": route.sect_nearm,
            "SECT_FARD": route.sect_fard, "SECT_LINE": route.sect_line,
            "SECT_FILL": route.sect_fill, "EVICTS": route.evicts, "WB_SECT": route.wb_sect,
            "MIG_WALK_FILLS": eng.inc_walk, "MIG_DEMAND_FILLS": route.mig_demand,
            "MIG_FULL_WRITES": route.mig_full, "MIG_DONE": eng.inc_done,
            "MIG_ABORT": eng.inc_abort,
            "ERR_RANGE": route.err_range, "ERR_UNMAPPED": route.err_unmapped,
            "ERR_POISON": sum(rob.poison_sent for rob in robs),
        }
        for name in COUNTERS:
            if name != "MIG_PREVALID":
                m.d.comb += getattr(csr, f"inc_{name.lower()}").eq(incs.get(name, 0))
        empty = Cat(rob.empty for rob in robs).all()
        m.d.comb += csr.status_idle.eq(quiet & empty)
        ev = self.evt.payload
        r_ev = route.evt_valid
        m.d.comb += [self.evt.valid.eq(r_ev | eng.ev_valid), eng.ev_ok.eq(~r_ev),
                     ev.code.eq(Mux(r_ev, route.evt_code, eng.ev_code)),
                     ev.line.eq(Mux(r_ev, route.evt_line, eng.ev_line)),
                     ev.ppn.eq(Mux(r_ev, route.evt_ppn, eng.ev_ppn)),
                     ev.arg.eq(Mux(r_ev, route.evt_arg, eng.ev_arg))]
        return m
