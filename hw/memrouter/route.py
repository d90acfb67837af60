"""The routing stage: the page-table half of req_check and xlate's routing (spec §4.3, §4.4,
MR-F2..F4, MR-F10, MR-F37, MR-E4, MR-E5).

Requests are taken from the intake queue one at a time, in acceptance order, and their parts
routed in order: a part that must wait (its page is MIGRATING) holds every later one, which
makes same-sector order (MR-F46) hold by construction. Per request: the range verdict of the
intake or the UNMAPPED check of both pages decides a rejection (no side effect but the response
and the write beats consumed); otherwise each part is issued to the port of its PT entry with
the class of its pool. The cycles in which REF of each page and ND of a NEAR write part are set
are kept (LOOK1, REF1, the part's first beat); the REF and ND arrays themselves are built with
the migration engine that reads them.
"""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, eq_const, gt_const, is_zero, nonzero, select
from hw.common.statereg import StateReg
from hw.memrouter.layouts import PTE_W, pte_fields, slot_add
from hw.memrouter.intake import req_fields
from hw.memrouter.tags import KIND_RD, KIND_WR

assert (KIND_RD, KIND_WR) == (0, 1)         # take_kind is the request's wr bit

__all__ = ["Route"]

E_RANGE, E_UNMAPPED = 1, 2
UNMAPPED, MIGRATING = 0, 2
NEAR, FAR = 0, 1


class Route(wiring.Component):
    """Routing stage.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    tag_w : int
        Width of a memory-port tag (:class:`~hw.memrouter.tags.PortTags`).

    Members
    -------
    req_* : In, req_pop : Out
        Head of the intake's request queue.
    wd_valid, wd_data, wd_be : In; wd_pop : Out
        Head of the write-data queue.
    pt_addr : Out; pt_data : In
        Page-table read port (data one cycle after the address).
    mode : In(1)
        CTRL.MODE. (CTRL.MIG_STALL concerns only the migration engine, not built yet.)
    tag_ok : In(ports); tag_next : In, one per port
    iss_valid, iss_port, iss_cls, iss_tag, iss_sect, iss_frame, iss_len, iss_wr, iss_data, iss_be,
    iss_last : Out; iss_ready : In
        One mreq beat for the NEAR or FAR class queue of port ``iss_port``; its device address
        is ``iss_frame`` · G + ``iss_sect`` · 32.
    take_en, take_kind, take_proc, take_slot, take_ab : Out
        The tag taken with a request's first beat (``take_kind``: KIND_WR or KIND_RD, that is
        ``req_wr``).
    c_en, c_proc, c_slot, c_err : Out; c_grant : In
        A rejection on the completion bus (both flags, the error code).
    sect_hbm, sect_nearm, sect_fard : Out(5)
        Sectors routed directly, by where they go (SECT_HBM, SECT_NEARM, SECT_FARD).
    err_range, err_unmapped : Out(1)
        One rejected request (ERR_RANGE, ERR_UNMAPPED).
    busy : Out(1)
        A request is being routed.
    """

    def __init__(self, params, tag_w=4):
        self.p = params
        self.ports = params.N_OFF + 1
        self.pw = (params.PT_ENTRIES - 1).bit_length()
        self.sw = (params.ROB_BEATS - 1).bit_length()
        self.tw = tag_w
        members = {f"req_{name}": In(w) for name, w in req_fields(params)}
        members.update({
            "req_valid": In(1), "req_pop": Out(1),
            "wd_valid": In(1), "wd_data": In(256), "wd_be": In(32), "wd_pop": Out(1),
            "pt_addr": Out(self.pw), "pt_data": In(PTE_W),
            "mode": In(1),
            "tag_ok": In(self.ports), "tag_next": In(self.tw).array(self.ports),
            "iss_valid": Out(1), "iss_ready": In(1), "iss_port": Out(3), "iss_cls": Out(1),
            "iss_tag": Out(self.tw), "iss_sect": Out(params.LOG2G - 5),
            "iss_frame": Out(24 - params.LOG2G), "iss_len": Out(4), "iss_wr": Out(1),
            "iss_data": Out(256), "iss_be": Out(32), "iss_last": Out(1),
            "take_en": Out(1), "take_kind": Out(1), "take_proc": Out(2),
            "take_slot": Out(self.sw), "take_ab": Out(2),
            "c_en": Out(1), "c_proc": Out(2), "c_slot": Out(self.sw), "c_err": Out(2),
            "c_grant": In(1),
            "sect_hbm": Out(5), "sect_nearm": Out(5), "sect_fard": Out(5),
            "err_range": Out(1), "err_unmapped": Out(1), "busy": Out(1),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        lg, ns, pw = p.LOG2G, p.NS, self.pw
        sec_w = lg - 5

        addr, nb, wr = self.req_addr, self.req_nb, self.req_wr
        p0 = Signal(pw)
        s0 = Signal(sec_w)
        m.d.comb += [p0.eq(addr[lg:lg + pw]), s0.eq(addr[5:lg])]
        tail = Signal(max(sec_w, 5) + 1)        # s0 + nb: beyond NS means a split
        m.d.comb += tail.eq(s0 + nb)
        split = Signal()
        m.d.comb += split.eq(gt_const(tail, ns))
        n1 = Signal(5)                          # sectors of part 0
        m.d.comb += n1.eq(Mux(split, (C(ns, 5) - s0)[:5], nb))

        part = Signal()                         # the part being routed
        ppn = Signal(pw)
        m.d.comb += ppn.eq(Mux(part, (p0 + 1)[:pw], p0))
        ps0 = self.iss_sect
        pn = Signal(5)
        pb0 = Signal(5)
        m.d.comb += [ps0.eq(Mux(part, 0, s0)), pn.eq(Mux(part, (nb - n1)[:5], n1)),
                     pb0.eq(Mux(part, n1, 0))]
        unm = Signal()
        code = self.c_err                       # the rejection's error code
        wk = Signal(5)                          # write beat within the part, or beats drained

        state, pool, port, frame = pte_fields(self.pt_data)
        e_pool = self.iss_cls                   # the entry of the part being issued
        e_port = self.iss_port
        e_frame = self.iss_frame
        e_pool_r = Signal()
        e_port_r = Signal(3)
        e_frame_r = Signal(len(e_frame))
        tag_ok = Signal()
        m.d.comb += tag_ok.eq(select([self.tag_ok[j] for j in range(self.ports)], e_port))
        m.d.comb += [
            self.iss_tag.eq(select(list(self.tag_next), e_port)),
            self.iss_len.eq(pn - 1), self.iss_wr.eq(wr),
            self.iss_data.eq(self.wd_data), self.iss_be.eq(self.wd_be),
            self.take_proc.eq(self.req_proc), self.take_kind.eq(wr),
            self.take_slot.eq(Mux(wr, self.req_base,
                                  slot_add(self.req_base, pb0, p.ROB_BEATS))),
            self.take_ab.eq(Mux(split, Mux(part, 2, 1), 3)),
            self.c_proc.eq(self.req_proc),
            self.c_slot.eq(slot_add(self.req_base, wk, p.ROB_BEATS)),
            self.pt_addr.eq(ppn),
        ]
        route_now = Signal()                    # count and ND at the part's first beat
        n_now = Signal(5)
        m.d.comb += n_now.eq(Mux(route_now, pn, 0))
        m.d.comb += [self.sect_hbm.eq(Mux(~e_pool & is_zero(e_port), n_now, 0)),
                     self.sect_nearm.eq(Mux(~e_pool & nonzero(e_port), n_now, 0)),
                     self.sect_fard.eq(Mux(e_pool, n_now, 0))]

        fsm = StateReg(("IDLE", "LOOK0", "LOOK1", "REF1", "PLOOK", "PROUTE", "WBEAT", "NEXT",
                  "REJECT", "DRAIN"), "IDLE")
        at, goto = fsm.at, fsm.goto

        with m.If(at("IDLE")):
            m.d.comb += self.pt_addr.eq(p0)
            m.d.sync += [part.eq(0), unm.eq(0), wk.eq(0)]
            with m.If(self.req_valid):
                with m.If(self.req_rng):
                    m.d.sync += code.eq(E_RANGE)
                    m.d.sync += goto("REJECT")
                with m.Else():
                    m.d.sync += goto("LOOK0")
        with m.Elif(at("LOOK0")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += self.pt_addr.eq(p0 + 1)
            m.d.sync += unm.eq(eq_const(state, UNMAPPED))
            m.d.sync += goto("LOOK1")
        with m.Elif(at("LOOK1")):
            m.d.comb += self.busy.eq(1)
            with m.If(unm | (split & eq_const(state, UNMAPPED))):
                m.d.sync += code.eq(E_UNMAPPED)
                m.d.sync += goto("REJECT")
            with m.Else():
                # (REF of page 0 (part = 0) is set here once the REF array is built)
                with m.If(split):
                    m.d.sync += part.eq(1)
                    m.d.sync += goto("REF1")
                with m.Else():
                    m.d.sync += goto("PLOOK")
        with m.Elif(at("REF1")):
            m.d.comb += self.busy.eq(1)             # (REF of page 1)
            m.d.sync += part.eq(0)
            m.d.sync += goto("PLOOK")
        with m.Elif(at("PLOOK")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += wk.eq(0)
            m.d.sync += goto("PROUTE")
        with m.Elif(at("PROUTE")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += [e_pool.eq(pool), e_port.eq(port), e_frame.eq(frame[:len(e_frame)])]
            m.d.sync += [e_pool_r.eq(pool), e_port_r.eq(port), e_frame_r.eq(frame[:len(e_frame)])]
            hold = Signal()
            m.d.comb += hold.eq(eq_const(state, MIGRATING))
            with m.If(hold):
                m.d.sync += goto("PLOOK")
            with m.Elif(wr):
                m.d.sync += goto("WBEAT")
            with m.Else():
                m.d.comb += [self.iss_valid.eq(tag_ok), self.iss_last.eq(1)]
                with m.If(tag_ok & self.iss_ready):
                    m.d.comb += [self.take_en.eq(1), route_now.eq(1)]
                    m.d.sync += goto("NEXT")
        with m.Elif(at("WBEAT")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += [e_pool.eq(e_pool_r), e_port.eq(e_port_r), e_frame.eq(e_frame_r)]
            first = Signal()
            m.d.comb += first.eq(is_zero(wk))
            m.d.comb += [self.iss_valid.eq(self.wd_valid & (~first | tag_ok)),
                         self.iss_last.eq(eq(wk + 1, pn))]
            with m.If(self.iss_valid & self.iss_ready):
                m.d.comb += [self.wd_pop.eq(1), self.take_en.eq(first),
                             route_now.eq(first)]
                m.d.sync += wk.eq(wk + 1)
                with m.If(self.iss_last):
                    m.d.sync += goto("NEXT")
        with m.Elif(at("NEXT")):
            m.d.comb += self.busy.eq(1)
            with m.If(split & ~part):
                m.d.sync += part.eq(1)
                m.d.sync += goto("PLOOK")
            with m.Else():
                m.d.comb += self.req_pop.eq(1)
                m.d.sync += goto("IDLE")
        with m.Elif(at("REJECT")):
            # every slot the request reserved gets the code: nb for a read that passed the
            # range check, else 1 (the response buffer's flags are written once per lap)
            m.d.comb += [self.busy.eq(1), self.c_en.eq(1)]
            more = Signal()
            m.d.comb += more.eq(~wr & ~self.req_rng & ~eq(wk + 1, nb))
            with m.If(self.c_grant & more):
                m.d.sync += wk.eq(wk + 1)
            with m.Elif(self.c_grant):
                m.d.comb += [self.err_range.eq(eq_const(code, E_RANGE)),
                             self.err_unmapped.eq(eq_const(code, E_UNMAPPED))]
                m.d.sync += wk.eq(0)
                with m.If(wr):
                    m.d.sync += goto("DRAIN")
                with m.Else():
                    m.d.comb += self.req_pop.eq(1)
                    m.d.sync += goto("IDLE")
        with m.Elif(at("DRAIN")):
            m.d.comb += [self.busy.eq(1), self.wd_pop.eq(self.wd_valid)]
            with m.If(self.wd_valid):
                m.d.sync += wk.eq(wk + 1)
                with m.If(eq(wk + 1, nb)):
                    m.d.comb += self.req_pop.eq(1)
                    m.d.sync += goto("IDLE")

        # (ND of the page is set at route_now & mode & wr & ~e_pool once the ND array is built)
        return m
