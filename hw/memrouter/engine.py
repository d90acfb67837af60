"""mig_engine (spec §4.7, §4.8, MR-F19..F38, MR-E9..E11): the migration command FIFO and
automatic triggers, PROMOTE (Fig. 3B 355-380), the exclusive SWAP with two lines, DEMOTE by
relabel, copy or inclusive drop / copy-home, the FILL walker beside demand fills, the WRITE
sequencer with rewrites, FENCE, CLOCK victims with REF, ND, ABORT on a poisoned fill.

One command runs at a time as one state machine; FENCE, FILL, WRITE, line allocation and the
CLOCK walk are subroutines with return registers. The engine shares the line store with the
routing stage: it locks, fills, writes out and releases lines through the ``e_*`` inputs of
:class:`~hw.memrouter.linestore.LineStore`, and asks the routing stage for what only that stage
does (allocating a line, with eviction; evicting a line on ABORT). Steps that must not
interleave with a processor part (the start of a command, the final PT writes with the
releases, ABORT) run while the routing stage is held between parts (``hold`` / ``safe``).
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.memrouter.formats import (EV_ABORT, EV_DONE, EV_LINE_FULL, EV_PT_UPDATE, EV_REJECT,
                                      EV_START, OP_DEMOTE, OP_PROMOTE, OP_SWAP, REJ_FULL,
                                      REJ_NOFRAME, REJ_RANGE, REJ_STATE, SRC_EXPLICIT,
                                      ST_ABORTED, ST_BUSY, ST_DONE)
from hw.common.lintops import (bit_at, eq, eq_const, ge, ge_const, is_zero, lt, nonzero,
                               run_bits, select, tree_sum)
from hw.common.regfifo import RegFifo
from hw.common.statereg import StateReg
from hw.memrouter.flagmem import FlagMemory
from hw.memrouter.layouts import DESC_W, PTE_W, pte_fields, pte_value
from hw.memrouter.route import lowest_run
from hw.memrouter.tags import KIND_FILL, KIND_WB

__all__ = ["MigEngine"]

UNMAPPED, STABLE, MIGRATING = 0, 1, 2
NEAR, FAR, MIG = 0, 1, 2

STATES = (
    "IDLE", "POP", "V0", "V1", "V2", "SCAN0", "SCAN1", "REJECT",
    # PROMOTE / SWAP
    "P_HOLD", "P_LINE", "P_PT", "P_LOCK", "P_START", "P_FILLED", "P_DEST", "P_POPN",
    "P_POPW", "P_UPD", "P_UPDE", "P_INCLV",
    "SW_PT", "SW_LINE", "SW_LOCK", "SW_FILLED", "SW_UPD1", "SW_UPD2",
    # DEMOTE
    "D_HOLD", "D_PT", "D_SPLIT", "D_RELSTART", "D_RELUPD", "D_CPYLINE", "D_CPYLOCK",
    "D_CPYSTART", "D_CPYFILLED", "D_CPYUPD", "D_INCLSTART",
    # DEMOTE_INCL(x)
    "I_PT", "I_MIG", "I_FENCED", "I_LINE", "I_LOCK", "I_FILLED", "I_UPD", "I_PUSH",
    # end of a command
    "DONE", "AB_WAIT", "AB_HOLD", "AB_PTA", "AB_PTB", "AB_L1", "AB_L2", "AB_EVW", "AB_END",
    # subroutines
    "ALLOC", "ALLOCW", "FENCE", "FENCEW", "FILL", "WALK", "FDRAIN",
    "WFENCE2", "WDIRTY1", "WDIRTY2", "WLOOP", "WBEAT", "WFIN",
    "VIC", "VICR",
)


class MigEngine(wiring.Component):
    """The migration engine.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    lines : hw.memrouter.linestore.LineStore
        The line store shared with the routing stage (its ``e_*`` inputs are driven here).
    tag_w : int
        Width of a memory-port tag.

    Members
    -------
    mode, walk_pause, walk_stop_en, walk_stop, mig_outstanding, pages : In
        Configuration (CTRL bits, WALK_STOP, MIG_OUTSTANDING, PAGES).
    cmd_we, cmd_op, cmd_page, cmd_arg : In
        A MIG_CMD write with EN_EXPLICIT = 1: the word's OP (bits 3:0) and page (bits 31:16),
        MIG_ARG sampled with it.
    cmd_full : Out(1)
        The command FIFO is full (the write is answered err = 1, REJ_FULL, MR-E11).
    mig_status : Out(32); busy : Out(1); hand : Out
        MIG_STATUS, a command queued or running (STATUS[2]), the CLOCK hand.
    trig_ok : Out(1); trig_en, trig_ppn, trig_src : In
        Triggers are taken while idle with an empty FIFO (MR-F22).
    hold : Out(1); safe : In(1)
        Hold the routing stage between parts, and it is held.
    alloc_req, alloc_ppn : Out; alloc_done, alloc_line : In
        A locked line for a page, allocated (with eviction) by the routing stage.
    evict_req, evict_line : Out; evict_done : In
        Evict a line (ABORT of a near page's line).
    walk_ok : In(1)
        The routing stage is not deciding fills (no walker fill may be issued).
    ref_en, ref_ppn, nd_en, nd_ppn : In
        REF set for a routed part (MR-F37), ND set for a direct near write (MR-F35).
    init : In(1); init_w, home_en, home_ppn, home_desc : In
        PT_INIT accepted (HAND cleared); its PT write of page ``home_ppn`` (REF and ND of the
        page cleared) and, in inclusive mode, the page's far home.
    pt_raddr : Out; pt_rdata : In; pt_wen, pt_waddr, pt_wdata : Out; pt_wok : In
        Page-table read port and write requests.
    nfree_*, ffree_* : free lists (``rdy``, ``data``, ``pop``, ``push``, ``push_data``), ``push_ok``
    iss_* : Out; iss_ready, route_taking : In; tag_ok, tag_next : In
        MIG-class requests and their tags (a tag is taken when the routing stage takes none).
    take_kind, take_slot, take_ab : Out
    f_en, f_addr, f_poison, f_walker, w_ack : In
        Fill beats (walker fills), write-out acknowledgements.
    issued, done : In
        Per port and class (NEAR, FAR, MIG), 8-bit counts of requests issued and completed.
    ev_* : Out; ev_ok : In
        Events (the routing stage's have priority).
    inc_walk, inc_done, inc_abort, clr_mig, prevalid_en, prevalid : Out
        Counter updates (MIG_WALK_FILLS, MIG_DONE, MIG_ABORT, the MIG_START clear of
        MIG_WALK_FILLS / MIG_DEMAND_FILLS / MIG_FULL_WRITES, MIG_PREVALID).
    """

    def __init__(self, params, lines, tag_w):
        self.p = params
        self.ls = lines
        self.ports = params.N_OFF + 1
        self.pw = (params.PT_ENTRIES - 1).bit_length()
        self.tw = tag_w
        lw, nsw = lines.lw, lines.sw
        pw = self.pw
        fw = 24 - params.LOG2G
        super().__init__({
            "mode": In(1), "walk_pause": In(1), "walk_stop_en": In(1), "walk_stop": In(32),
            "mig_outstanding": In(32), "pages": In(pw + 1),
            "cmd_we": In(1), "cmd_op": In(4), "cmd_page": In(16), "cmd_arg": In(16), "cmd_full": Out(1),
            "mig_status": Out(32), "busy": Out(1), "hand": Out(pw),
            "trig_ok": Out(1), "trig_en": In(1), "trig_ppn": In(pw), "trig_src": In(2),
            "hold": Out(1), "safe": In(1),
            "alloc_req": Out(1), "alloc_ppn": Out(pw), "alloc_done": In(1), "alloc_line": In(lw),
            "evict_req": Out(1), "evict_line": Out(lw), "evict_done": In(1),
            "walk_ok": In(1),
            "ref_en": In(1), "ref_ppn": In(pw), "nd_en": In(1), "nd_ppn": In(pw),
            "init": In(1), "init_w": In(1), "home_en": In(1), "home_ppn": In(pw),
            "home_desc": In(DESC_W),
            "pt_raddr": Out(pw), "pt_rdata": In(PTE_W),
            "pt_wen": Out(1), "pt_waddr": Out(pw), "pt_wdata": Out(PTE_W), "pt_wok": In(1),
            "nfree_rdy": In(1), "nfree_data": In(DESC_W), "nfree_pop": Out(1),
            "ffree_rdy": In(1), "ffree_data": In(DESC_W), "ffree_pop": Out(1),
            "nfree_push": Out(1), "ffree_push": Out(1), "push_data": Out(DESC_W),
            "push_ok": In(1),
            "iss_valid": Out(1), "iss_ready": In(1), "iss_port": Out(3), "iss_tag": Out(tag_w),
            "iss_sect": Out(nsw), "iss_frame": Out(fw), "iss_len": Out(4), "iss_wr": Out(1),
            "iss_data": Out(256), "iss_last": Out(1),
            "route_taking": In(1), "tag_ok": In(self.ports),
            "tag_next": In(tag_w).array(self.ports),
            "take_en": Out(1), "take_kind": Out(2), "take_slot": Out(lw + nsw), "take_ab": Out(2),
            "f_en": In(1), "f_addr": In(lw + nsw), "f_poison": In(1), "f_walker": In(1),
            "w_ack": In(1),
            "issued": In(8).array(self.ports * 3), "done": In(8).array(self.ports * 3),
            "ev_valid": Out(1), "ev_code": Out(4), "ev_line": Out(4), "ev_ppn": Out(16),
            "ev_arg": Out(32), "ev_ok": In(1),
            "inc_walk": Out(range(params.MAX_LEN + 1)), "inc_done": Out(1), "inc_abort": Out(1), "clr_mig": Out(1),
            "prevalid_en": Out(1), "prevalid": Out(range(params.NS + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        p, ls = self.p, self.ls
        pw, ns, ml = self.pw, p.NS, p.MAX_LEN
        lw, nsw = ls.lw, ls.sw
        fw = 24 - p.LOG2G
        excl = ~self.mode

        # ---- command FIFO (op, p, arg)
        m.submodules.cmdq = cmdq = RegFifo(4 + 16 + 16, p.CMDQ_DEPTH)
        cmd_room = Signal()
        m.d.comb += cmd_room.eq(~eq_const(cmdq.level, p.CMDQ_DEPTH))
        m.d.comb += [self.cmd_full.eq(~cmd_room),
                     cmdq.w_en.eq(self.cmd_we & cmd_room),
                     cmdq.w_data.eq(Cat(self.cmd_op, self.cmd_page, self.cmd_arg))]

        # ---- REF and ND (one bit per page, in memories: PT_INIT clears them page by page as
        # it writes the PT), the far homes of inclusive mode, HAND
        npg = p.PT_ENTRIES
        # (set by the routing stage; written by CLOCK, the engine and PT_INIT)
        m.submodules.ref_bits = ref = FlagMemory(npg)
        m.submodules.nd_bits = nd = FlagMemory(npg)
        ref.rd_addr = self.hand     # the register itself: a copy would be an unread alias
        m.d.comb += [ref.set_en.eq(self.ref_en), ref.set_addr.eq(self.ref_ppn),
                     nd.set_en.eq(self.nd_en), nd.set_addr.eq(self.nd_ppn),
                     ref.wr_en.eq(self.init_w), ref.wr_addr.eq(self.home_ppn), ref.wr_data.eq(0),
                     nd.wr_en.eq(self.init_w), nd.wr_addr.eq(self.home_ppn), nd.wr_data.eq(0)]
        m.submodules.homes = homes = Memory(shape=DESC_W, depth=npg, init=[])
        hw_ = homes.write_port()
        hr = homes.read_port()
        hw_.en, hw_.addr, hw_.data = self.home_en, self.home_ppn, self.home_desc
        hand = self.hand
        with m.If(self.init):
            m.d.sync += hand.eq(0)
        # ---- command registers
        op = Signal(4)
        pg = Signal(16)                     # the command's page p
        vic = Signal(16)                    # explicit SWAP victim, CLOCK victim, DEMOTE_INCL x
        m.d.comb += nd.rd_addr.eq(vic[:pw])
        src = Signal(2)
        e_p = Signal(PTE_W)                 # PT[p] at the command's start (ABORT restores it)
        e_v = Signal(PTE_W)                 # PT[vic] at its MIGRATING write
        mig_p = Signal()                    # PT[p] / PT[vic] were set MIGRATING
        mig_v = Signal()
        home = Signal(DESC_W)
        dest = Signal(DESC_W)               # destination frame of WRITE (line 1)
        dest2 = Signal(DESC_W)              # line 2 (swap)
        l1 = Signal(lw)
        l2 = Signal(lw)
        lk1 = Signal()                      # the command locked line 1 / line 2
        lk2 = Signal()
        two = Signal()                      # WRITE of two lines
        incl_ret = Signal()                 # DEMOTE_INCL returns to the promotion
        abort = Signal()
        abort_s = Signal(nsw)
        walk_total = Signal(32)
        inflight = Signal(range(2 * 16 * ml + 1))     # walker sectors in flight
        acks = Signal(8)                    # write-out acknowledgements outstanding
        ptr = Signal(nsw + 1)
        eline = self.evict_line             # the line the e_* inputs act on
        status = self.mig_status

        _, p_pool, p_port, p_frame = pte_fields(e_p)
        _, v_pool, v_port, v_frame = pte_fields(e_v)
        r_state, r_pool, r_port, r_frame = pte_fields(self.pt_rdata)

        def desc(port, frame):
            return Cat(port, frame)

        # subroutine return registers and arguments
        fsm = StateReg(STATES, "IDLE", name="eng_fsm")
        self.state = fsm.reg                # (a simulation probe)
        at, goto = fsm.at, fsm.goto
        sw_ = len(fsm.reg)
        ret_alloc = Signal(sw_)
        ret_fence = Signal(sw_)
        ret_sub = Signal(sw_)               # FILL / WRITE
        ret_vic = Signal(sw_)
        a_ppn = Signal(16)                  # ALLOC argument; result in a_line
        a_line = Signal(lw)
        f_port = Signal(3)                  # FENCE argument
        f_mark = [Signal(8, name=f"fence_mark{c}") for c in range(3)]
        s_port = Signal(3)                  # FILL source
        s_frame = Signal(fw)

        def then(*stmts):
            """A continuation that moves on (for :func:`event` and :func:`pt_write`)."""
            def go():
                m.d.sync += [x for st in stmts for x in (st if isinstance(st, list) else [st])]
            return go

        def call(state, ret_reg, ret_state):
            return [goto(state), ret_reg.eq(fsm.code(ret_state))]

        # ---- line store (engine side)
        m.d.comb += ls.e_line.eq(eline)
        e_valid, e_pending, e_dirty = ls.e_valid, ls.e_pending, ls.e_dirty
        full = Signal()
        m.d.comb += full.eq(e_valid.all())
        busy_s = Signal(ns)                 # sectors valid or with a fill in flight
        m.d.comb += busy_s.eq(e_valid | e_pending)
        held_sum = tree_sum(busy_s[k] for k in range(ns))
        held_n = Signal(len(held_sum))      # their number (MIG_PREVALID at MIG_START)
        m.d.comb += held_n.eq(held_sum)

        # ---- fills of the command's locked lines (MR-E9) and walker bookkeeping
        f_line = self.f_addr[nsw:]
        mine_poison = Signal()
        m.d.comb += mine_poison.eq(self.f_en & self.f_poison
                                   & ((lk1 & eq(f_line, l1)) | (lk2 & eq(f_line, l2))))
        with m.If(mine_poison & ~abort):
            m.d.sync += [abort.eq(1), abort_s.eq(self.f_addr[:nsw])]
        # a walker sector leaves the count when its beat is back (§4.8: per sector)
        walk_issue = self.inc_walk
        m.d.sync += inflight.eq(inflight + walk_issue - (self.f_en & self.f_walker))
        ack_take = Signal()
        m.d.sync += acks.eq(acks + ack_take - self.w_ack)
        m.d.sync += walk_total.eq(Mux(self.clr_mig, 0, walk_total + walk_issue))

        # ---- events; a REJECT of a MIG_CMD write to a full FIFO waits for a cycle without
        # one of the state machine's
        fsm_ev = Signal()
        rej_pend = Signal()
        rej_ppn = Signal(16)
        with m.If(rej_pend):
            m.d.comb += [self.ev_valid.eq(1), self.ev_code.eq(EV_REJECT), self.ev_ppn.eq(rej_ppn),
                         self.ev_arg.eq(REJ_FULL)]
            with m.If(self.ev_ok & ~fsm_ev):
                m.d.sync += rej_pend.eq(0)

        def event(code_, line, ppn, arg, then):
            m.d.comb += [self.ev_valid.eq(1), self.ev_code.eq(code_), self.ev_line.eq(line),
                         self.ev_ppn.eq(ppn), self.ev_arg.eq(arg), fsm_ev.eq(1)]
            with m.If(self.ev_ok):
                then()

        def set_status(code_, ppn):
            m.d.sync += status.eq(Cat(C(code_, 4), C(0, 12), ppn))

        # ---- page-table writes (one per state, waits for the write port)
        def pt_write(addr, value, then):
            m.d.comb += [self.pt_wen.eq(1), self.pt_waddr.eq(addr[:pw]), self.pt_wdata.eq(value)]
            with m.If(self.pt_wok):
                then()

        def pte(state, pool, dsc):
            return pte_value(state, pool, dsc[0:3], Cat(dsc[3:DESC_W], C(0, 24))[:24])

        # ---- MIG-class requests
        tag_ok = Signal()
        m.d.comb += [tag_ok.eq(select([self.tag_ok[j] for j in range(self.ports)],
                                      self.iss_port) & ~self.route_taking),
                     self.iss_tag.eq(select(list(self.tag_next), self.iss_port))]

        m.d.comb += [self.busy.eq(~at("IDLE") | cmdq.r_rdy),
                     self.trig_ok.eq(at("IDLE") & ~cmdq.r_rdy)]

        hold = self.hold
        m.d.comb += self.alloc_ppn.eq(a_ppn[:pw])

        def start_cmd():
            m.d.sync += [abort.eq(0), lk1.eq(0), lk2.eq(0), mig_p.eq(0), mig_v.eq(0),
                         two.eq(0), incl_ret.eq(0)]

        def mig_start(line_valid, then):
            """MIG_START with the START event: counters, MIG_PREVALID of line 1 if locked."""
            arg = Cat(op, src, line_valid, C(0, 9), Mux(eq_const(op, OP_SWAP), vic, 0))

            def go():
                m.d.comb += [self.clr_mig.eq(1), self.prevalid_en.eq(1),
                             self.prevalid.eq(Mux(line_valid, held_n, 0))]
                set_status(ST_BUSY, pg)
                then()
            event(EV_START, Mux(line_valid, l1, 0), pg, arg, go)

        # WRITE state
        w_sel = Signal()                    # 0: line l1 / the single line, 1: line l2
        r_start = Signal(nsw)
        r_len = Signal(range(ml + 1))
        wk = Signal(5)
        dirty_s, dirty_n = lowest_run(m, e_dirty, "eng_wb", ml)
        dirty_bits = run_bits(m, dirty_s, dirty_n, ml, ns, name="eng_wb_bits")

        with m.If(at("IDLE")):
            m.d.sync += hold.eq(0)
            with m.If(cmdq.r_rdy):
                m.d.comb += cmdq.r_en.eq(1)
                m.d.sync += [op.eq(cmdq.r_data[0:4]), pg.eq(cmdq.r_data[4:20]),
                             vic.eq(cmdq.r_data[20:36]), src.eq(SRC_EXPLICIT)]
                m.d.sync += goto("POP")
            with m.Elif(self.trig_en):
                m.d.sync += [op.eq(OP_PROMOTE), pg.eq(self.trig_ppn), vic.eq(0),
                             src.eq(self.trig_src)]
                start_cmd()
                m.d.sync += goto("P_HOLD")
        with m.Elif(at("POP")):
            m.d.comb += self.pt_raddr.eq(pg[:pw])
            m.d.sync += goto("V0")
        with m.Elif(at("V0")):
            m.d.comb += self.pt_raddr.eq(vic[:pw])
            m.d.sync += e_p.eq(self.pt_rdata)
            m.d.sync += goto("V1")
        with m.Elif(at("V1")):
            m.d.sync += e_v.eq(self.pt_rdata)
            m.d.sync += goto("V2")
        with m.Elif(at("V2")):
            # MR-E11, in order: op, range, state, frames
            p_state = e_p[0:2]
            v_state = e_v[0:2]
            p_sf = eq_const(p_state, STABLE) & p_pool
            p_sn = eq_const(p_state, STABLE) & ~p_pool
            v_sn = eq_const(v_state, STABLE) & ~v_pool
            is_pro, is_dem, is_swp = (eq_const(op, OP_PROMOTE), eq_const(op, OP_DEMOTE),
                                      eq_const(op, OP_SWAP))
            code = Signal(3)
            start_cmd()
            with m.If(~(is_pro | is_dem | is_swp)):
                m.d.comb += code.eq(REJ_STATE)
            with m.Elif(~lt(pg, self.pages) | (is_swp & ~lt(vic, self.pages))):
                m.d.comb += code.eq(REJ_RANGE)
            with m.Elif(is_swp & ~excl):
                m.d.comb += code.eq(REJ_STATE)
            with m.Elif((is_pro | is_swp) & ~p_sf):
                m.d.comb += code.eq(REJ_STATE)
            with m.Elif(is_dem & ~p_sn):
                m.d.comb += code.eq(REJ_STATE)
            with m.Elif(is_swp & (~v_sn | eq(pg, vic))):
                m.d.comb += code.eq(REJ_STATE)
            with m.Elif(is_dem & excl & is_zero(p_port) & ~self.ffree_rdy):
                m.d.comb += code.eq(REJ_NOFRAME)
            m.d.sync += vic.eq(Mux(is_swp, vic, 0))
            with m.If(nonzero(code)):
                m.d.sync += [status.eq(Cat(code, C(0, 13), pg))]
                m.d.sync += goto("REJECT")
            with m.Elif(is_pro & excl & ~self.nfree_rdy):
                m.d.sync += a_ppn.eq(0)         # is there a STABLE NEAR page to swap with?
                m.d.sync += goto("SCAN0")
            with m.Elif(is_dem):
                m.d.sync += goto("D_HOLD")
            with m.Else():
                m.d.sync += goto("P_HOLD")
        with m.Elif(at("SCAN0")):
            m.d.comb += self.pt_raddr.eq(a_ppn[:pw])
            m.d.sync += goto("SCAN1")
        with m.Elif(at("SCAN1")):
            m.d.comb += self.pt_raddr.eq(a_ppn[:pw])
            with m.If(eq_const(r_state, STABLE) & ~r_pool & lt(a_ppn, self.pages)):
                m.d.sync += goto("P_HOLD")
            with m.Elif(ge(a_ppn + 1, self.pages)):
                m.d.sync += status.eq(Cat(C(REJ_NOFRAME, 4), C(0, 12), pg))
                m.d.sync += goto("REJECT")
            with m.Else():
                m.d.sync += a_ppn.eq(a_ppn + 1)
                m.d.sync += goto("SCAN0")
        with m.Elif(at("REJECT")):
            event(EV_REJECT, 0, pg, status[0:4], then(goto("IDLE")))

        # ---- PROMOTE / SWAP
        with m.Elif(at("P_HOLD")):
            m.d.sync += hold.eq(1)
            m.d.sync += a_ppn.eq(pg)
            with m.If(hold & self.safe):
                m.d.sync += call("ALLOC", ret_alloc, "P_LINE")
        with m.Elif(at("P_LINE")):
            m.d.comb += self.pt_raddr.eq(pg[:pw])
            m.d.sync += [l1.eq(a_line), eline.eq(a_line)]
            m.d.sync += goto("P_PT")
        with m.Elif(at("P_PT")):
            m.d.sync += e_p.eq(self.pt_rdata)
            m.d.sync += goto("P_LOCK")
        with m.Elif(at("P_LOCK")):
            m.d.comb += ls.e_lock.eq(1)
            m.d.sync += lk1.eq(1)

            def locked():
                m.d.sync += mig_p.eq(1)
                m.d.sync += goto("P_START")
            pt_write(pg, Cat(C(MIGRATING, 2), e_p[2:]), locked)
        with m.Elif(at("P_START")):
            def started():
                m.d.sync += [s_port.eq(p_port), s_frame.eq(p_frame[:fw]), hold.eq(0)]
                m.d.sync += call("FILL", ret_sub, "P_FILLED")
            mig_start(C(1, 1), started)
        with m.Elif(at("P_FILLED")):
            with m.If(abort):
                m.d.sync += goto("AB_WAIT")
            with m.Else():
                event(EV_LINE_FULL, l1, pg, 0, then(goto("P_DEST")))
        with m.Elif(at("P_DEST")):
            with m.If(excl):
                with m.If(eq_const(op, OP_PROMOTE) & self.nfree_rdy):
                    m.d.sync += goto("P_POPN")
                with m.Elif(eq_const(op, OP_PROMOTE)):
                    m.d.sync += call("VIC", ret_vic, "SW_PT")
                with m.Else():
                    m.d.sync += goto("SW_PT")
            with m.Else():
                with m.If(self.nfree_rdy):
                    m.d.sync += goto("P_POPN")
                with m.Else():
                    m.d.sync += [incl_ret.eq(1)]
                    m.d.sync += call("VIC", ret_vic, "I_PT")
        with m.Elif(at("P_POPN")):
            m.d.comb += self.nfree_pop.eq(1)
            m.d.sync += [dest.eq(self.nfree_data), eline.eq(l1), two.eq(0)]
            m.d.sync += call("FENCE", ret_fence, "WDIRTY1")
            m.d.sync += [f_port.eq(self.nfree_data[0:3]), ret_sub.eq(fsm.code("P_UPD"))]
        with m.Elif(at("P_UPD")):
            # WRITE is done and the routing stage held: PT[p] = (STABLE, NEAR, N)
            new = pte(STABLE, NEAR, dest)
            pt_write(pg, new, then(goto("P_UPDE")))
        with m.Elif(at("P_UPDE")):
            new = pte(STABLE, NEAR, dest)

            def updated():
                m.d.comb += ls.e_release.eq(1)
                m.d.sync += [lk1.eq(0), mig_p.eq(0)]
                with m.If(excl):
                    m.d.sync += goto("P_POPW")      # push the old far frame onto FFREE
                with m.Else():
                    m.d.comb += [nd.wr_en.eq(1), nd.wr_addr.eq(pg[:pw]), nd.wr_data.eq(ls.e_mod)]
                    m.d.sync += goto("DONE")
            event(EV_PT_UPDATE, 0, pg, Cat(new[0:6], C(0, 2), new[6:]), updated)
        with m.Elif(at("P_POPW")):
            m.d.comb += [self.ffree_push.eq(self.push_ok),
                         self.push_data.eq(desc(p_port, p_frame[:DESC_W - 3]))]
            with m.If(self.push_ok):
                m.d.sync += goto("DONE")
        with m.Elif(at("P_INCLV")):
            m.d.sync += goto("P_DEST")

        # SWAP_TAIL(p, A, F = PT[p] frame, v)
        with m.Elif(at("SW_PT")):
            m.d.comb += self.pt_raddr.eq(vic[:pw])
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                m.d.sync += goto("SW_LINE")
        with m.Elif(at("SW_LINE")):
            m.d.sync += [e_v.eq(self.pt_rdata), a_ppn.eq(vic)]
            m.d.sync += call("ALLOC", ret_alloc, "SW_LOCK")
        with m.Elif(at("SW_LOCK")):
            m.d.comb += ls.e_lock.eq(1)
            m.d.sync += [l2.eq(a_line), lk2.eq(1), eline.eq(a_line)]

            def locked2():
                m.d.sync += [mig_v.eq(1), hold.eq(0), s_port.eq(v_port),
                             s_frame.eq(v_frame[:fw])]
                m.d.sync += call("FILL", ret_sub, "SW_FILLED")
            m.d.comb += ls.e_line.eq(a_line)
            pt_write(vic, Cat(C(MIGRATING, 2), e_v[2:]), locked2)
        with m.Elif(at("SW_FILLED")):
            with m.If(abort):
                m.d.sync += goto("AB_WAIT")
            with m.Else():
                def filled2():
                    m.d.sync += [dest.eq(desc(v_port, v_frame[:DESC_W - 3])),
                                 dest2.eq(desc(p_port, p_frame[:DESC_W - 3])), two.eq(1),
                                 eline.eq(l1), f_port.eq(v_port),
                                 ret_sub.eq(fsm.code("SW_UPD1"))]
                    m.d.sync += call("FENCE", ret_fence, "WFENCE2")
                event(EV_LINE_FULL, l2, vic, 0, filled2)
        with m.Elif(at("SW_UPD1")):
            new = pte(STABLE, NEAR, dest)

            def upd1():
                m.d.sync += goto("SW_UPD2")
            pt_write(pg, new, lambda: event(EV_PT_UPDATE, 0, pg,
                                            Cat(new[0:6], C(0, 2), new[6:]), upd1))
        with m.Elif(at("SW_UPD2")):
            new = pte(STABLE, FAR, dest2)

            def upd2():
                # line A by name: the write-out loop leaves eline on either line
                m.d.comb += [ls.e_line.eq(l1), ls.e_release.eq(1), ls.e_release2.eq(1),
                             ls.e_line2.eq(l2)]
                m.d.sync += [lk1.eq(0), lk2.eq(0), mig_p.eq(0), mig_v.eq(0)]
                m.d.sync += goto("DONE")
            pt_write(vic, new, lambda: event(EV_PT_UPDATE, 0, vic,
                                             Cat(new[0:6], C(0, 2), new[6:]), upd2))

        # ---- DEMOTE
        with m.Elif(at("D_HOLD")):
            m.d.comb += self.pt_raddr.eq(pg[:pw])
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                m.d.sync += goto("D_PT")
        with m.Elif(at("D_PT")):
            m.d.sync += e_p.eq(self.pt_rdata)
            m.d.sync += goto("D_SPLIT")
        with m.Elif(at("D_SPLIT")):
            with m.If(excl & nonzero(p_port)):
                pt_write(pg, Cat(C(MIGRATING, 2), e_p[2:]), then([mig_p.eq(1), goto("D_RELSTART")]))
            with m.Elif(excl):
                m.d.sync += a_ppn.eq(pg)
                m.d.sync += call("ALLOC", ret_alloc, "D_CPYLINE")
            with m.Else():
                m.d.sync += goto("D_INCLSTART")
        with m.Elif(at("D_RELSTART")):
            def rel_started():
                m.d.sync += [f_port.eq(p_port), hold.eq(0)]
                m.d.sync += call("FENCE", ret_fence, "D_RELUPD")
            mig_start(C(0, 1), rel_started)
        with m.Elif(at("D_RELUPD")):
            new = pte(STABLE, FAR, desc(p_port, p_frame[:DESC_W - 3]))
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                pt_write(pg, new, lambda: event(EV_PT_UPDATE, 0, pg,
                                                Cat(new[0:6], C(0, 2), new[6:]),
                                                then([mig_p.eq(0), goto("DONE")])))
        with m.Elif(at("D_CPYLINE")):
            m.d.sync += [l1.eq(a_line), eline.eq(a_line)]
            m.d.sync += goto("D_CPYLOCK")
        with m.Elif(at("D_CPYLOCK")):
            m.d.comb += ls.e_lock.eq(1)
            m.d.sync += lk1.eq(1)
            pt_write(pg, Cat(C(MIGRATING, 2), e_p[2:]), then([mig_p.eq(1), goto("D_CPYSTART")]))
        with m.Elif(at("D_CPYSTART")):
            def cpy_started():
                m.d.sync += [s_port.eq(p_port), s_frame.eq(p_frame[:fw]), hold.eq(0)]
                m.d.sync += call("FILL", ret_sub, "D_CPYFILLED")
            mig_start(C(1, 1), cpy_started)
        with m.Elif(at("D_CPYFILLED")):
            with m.If(abort):
                m.d.sync += goto("AB_WAIT")
            with m.Else():
                def cpy_full():
                    m.d.comb += self.ffree_pop.eq(1)
                    m.d.sync += [dest.eq(self.ffree_data), two.eq(0), eline.eq(l1),
                                 f_port.eq(self.ffree_data[0:3]),
                                 ret_sub.eq(fsm.code("D_CPYUPD"))]
                    m.d.sync += call("FENCE", ret_fence, "WDIRTY1")
                event(EV_LINE_FULL, l1, pg, 0, cpy_full)
        with m.Elif(at("D_CPYUPD")):
            new = pte(STABLE, FAR, dest)

            def cpy_done():
                m.d.comb += ls.e_release.eq(1)
                m.d.sync += [lk1.eq(0), mig_p.eq(0), vic.eq(pg), e_v.eq(e_p)]
                m.d.sync += goto("I_PUSH")          # NFREE gets the old near frame
            pt_write(pg, new, lambda: event(EV_PT_UPDATE, 0, pg,
                                            Cat(new[0:6], C(0, 2), new[6:]), cpy_done))
        with m.Elif(at("D_INCLSTART")):
            def incl_started():
                m.d.sync += [vic.eq(pg), hold.eq(0)]
                m.d.sync += goto("I_PT")
            mig_start(C(0, 1), incl_started)

        # ---- DEMOTE_INCL(x = vic): MIGRATING, FENCE, drop or copy home, NFREE push
        with m.Elif(at("I_PT")):
            m.d.comb += [self.pt_raddr.eq(vic[:pw]), hr.addr.eq(vic[:pw])]
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                m.d.sync += goto("I_MIG")
        with m.Elif(at("I_MIG")):
            m.d.sync += [e_v.eq(self.pt_rdata), home.eq(hr.data)]
            pt_write(vic, Cat(C(MIGRATING, 2), self.pt_rdata[2:]), then([mig_v.eq(1), f_port.eq(r_port), hold.eq(0)]
                + call("FENCE", ret_fence, "I_FENCED")))
        with m.Elif(at("I_FENCED")):
            new = pte(STABLE, FAR, home)
            with m.If(abort):
                m.d.sync += goto("AB_WAIT")
            with m.Elif(~nd.rd_data):
                m.d.sync += hold.eq(1)
                with m.If(hold & self.safe):
                    pt_write(vic, new, lambda: event(EV_PT_UPDATE, 0, vic,
                                                     Cat(new[0:6], C(0, 2), new[6:]),
                                                     then([mig_v.eq(0), goto("I_PUSH")])))
            with m.Else():
                m.d.sync += a_ppn.eq(vic)
                m.d.sync += call("ALLOC", ret_alloc, "I_LINE")
        with m.Elif(at("I_LINE")):
            m.d.sync += [l2.eq(a_line), eline.eq(a_line)]
            m.d.sync += goto("I_LOCK")
        with m.Elif(at("I_LOCK")):
            m.d.comb += ls.e_lock.eq(1)
            m.d.sync += [lk2.eq(1), s_port.eq(v_port), s_frame.eq(v_frame[:fw])]
            m.d.sync += call("FILL", ret_sub, "I_FILLED")
        with m.Elif(at("I_FILLED")):
            with m.If(abort):
                m.d.sync += goto("AB_WAIT")
            with m.Else():
                def i_full():
                    m.d.sync += [dest.eq(home), two.eq(0), eline.eq(l2), f_port.eq(home[0:3]),
                                 ret_sub.eq(fsm.code("I_UPD"))]
                    m.d.sync += call("FENCE", ret_fence, "WDIRTY1")
                event(EV_LINE_FULL, l2, vic, 0, i_full)
        with m.Elif(at("I_UPD")):
            new = pte(STABLE, FAR, home)

            def i_done():
                m.d.comb += [ls.e_release.eq(1), nd.wr_en.eq(1), nd.wr_addr.eq(vic[:pw]),
                             nd.wr_data.eq(0)]
                m.d.sync += [lk2.eq(0), mig_v.eq(0)]
                m.d.sync += goto("I_PUSH")
            pt_write(vic, new, lambda: event(EV_PT_UPDATE, 0, vic,
                                             Cat(new[0:6], C(0, 2), new[6:]), i_done))
        with m.Elif(at("I_PUSH")):
            m.d.comb += [self.nfree_push.eq(self.push_ok),
                         self.push_data.eq(desc(v_port, v_frame[:DESC_W - 3]))]
            with m.If(self.push_ok):
                m.d.sync += hold.eq(0)
                m.d.sync += goto(Mux(incl_ret, fsm.code("P_INCLV"), fsm.code("DONE")))

        # ---- the end of a command
        with m.Elif(at("DONE")):
            def done():
                m.d.comb += self.inc_done.eq(1)
                set_status(ST_DONE, pg)
                m.d.sync += [hold.eq(0), lk1.eq(0), lk2.eq(0)]
                m.d.sync += goto("IDLE")
            event(EV_DONE, 0, pg, walk_total, done)
        with m.Elif(at("AB_WAIT")):
            # no fill of the command in flight
            m.d.sync += eline.eq(l1)
            quiet = Signal()
            m.d.comb += quiet.eq(is_zero(inflight) & ~(lk1 & bit_at(ls.pending_any, l1)) & ~(lk2 & bit_at(ls.pending_any, l2)))
            with m.If(quiet):
                m.d.sync += goto("AB_HOLD")
        with m.Elif(at("AB_HOLD")):
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                m.d.sync += goto("AB_PTA")
        with m.Elif(at("AB_PTA")):
            with m.If(mig_p):
                pt_write(pg, Cat(C(STABLE, 2), e_p[2:]), then(goto("AB_PTB")))
            with m.Else():
                m.d.sync += goto("AB_PTB")
        with m.Elif(at("AB_PTB")):
            with m.If(mig_v):
                pt_write(vic, Cat(C(STABLE, 2), e_v[2:]), then([eline.eq(l1), goto("AB_L1")]))
            with m.Else():
                m.d.sync += [eline.eq(l1), goto("AB_L1")]
        with m.Elif(at("AB_L1")):
            # line 1 holds p (a far page when promoted, a near page when demoted by copy)
            with m.If(lk1 & p_pool):
                m.d.comb += ls.e_unlock_nomig.eq(1)
                m.d.sync += [lk1.eq(0), eline.eq(l2), goto("AB_L2")]
            with m.Elif(lk1):
                m.d.comb += ls.e_unlock.eq(1)
                m.d.comb += self.evict_req.eq(1)
                with m.If(self.evict_done):
                    m.d.sync += [lk1.eq(0), eline.eq(l2), goto("AB_L2")]
            with m.Else():
                m.d.sync += [eline.eq(l2), goto("AB_L2")]
        with m.Elif(at("AB_L2")):
            # line 2 holds a near page (swap victim, inclusive copy-home)
            with m.If(lk2):
                m.d.comb += [ls.e_unlock.eq(1), self.evict_req.eq(1)]
                with m.If(self.evict_done):
                    m.d.sync += [lk2.eq(0), goto("AB_END")]
            with m.Else():
                m.d.sync += goto("AB_END")
        with m.Elif(at("AB_END")):
            def aborted():
                m.d.comb += self.inc_abort.eq(1)
                set_status(ST_ABORTED, pg)
                m.d.sync += [hold.eq(0), mig_p.eq(0), mig_v.eq(0)]
                m.d.sync += goto("IDLE")
            event(EV_ABORT, 0, pg, abort_s, aborted)

        # ---- ALLOC(a_ppn): the page's own line, else one from the routing stage (locked)
        with m.Elif(at("ALLOC")):
            m.d.comb += ls.look2_ppn.eq(a_ppn[:pw])
            with m.If(ls.hit2):
                m.d.sync += [a_line.eq(ls.hit2_line), goto(ret_alloc)]
            with m.Else():
                m.d.sync += goto("ALLOCW")
        with m.Elif(at("ALLOCW")):
            m.d.comb += self.alloc_req.eq(1)
            with m.If(self.alloc_done):
                m.d.sync += [a_line.eq(self.alloc_line), goto(ret_alloc)]

        # ---- FENCE(f_port): every request issued to it so far has completed (per class)
        with m.Elif(at("FENCE")):
            for c in range(3):
                m.d.sync += f_mark[c].eq(select([self.issued[3 * j + c]
                                                 for j in range(self.ports)], f_port))
            m.d.sync += goto("FENCEW")
        with m.Elif(at("FENCEW")):
            ok = Cat(~(select([self.done[3 * j + c] for j in range(self.ports)], f_port)
                       - f_mark[c])[7] for c in range(3)).all()
            with m.If(ok):
                m.d.sync += goto(ret_fence)

        # ---- FILL(eline, s_port/s_frame): FENCE, then the walker beside demand fills
        with m.Elif(at("FILL")):
            m.d.sync += [ptr.eq(0), f_port.eq(s_port)]
            m.d.sync += call("FENCE", ret_fence, "WALK")
        with m.Elif(at("WALK")):
            room = Signal(33)
            m.d.comb += room.eq(self.mig_outstanding - inflight)
            stop = Signal()
            m.d.comb += stop.eq(self.walk_pause | (self.walk_stop_en & ge(ptr, self.walk_stop))
                                | ge_const(ptr, ns))
            limit = Signal(range(ml + 1))
            lim_room = Mux(lt(room, ml), room, ml)
            left = Signal(nsw + 2)
            m.d.comb += left.eq(Mux(self.walk_stop_en & lt(self.walk_stop, ns),
                                    self.walk_stop, ns) - ptr)
            m.d.comb += limit.eq(Mux(lt(left, lim_room), left, lim_room))
            free_from = (~busy_s) >> ptr
            n_run = Signal(range(ml + 1))
            for k in reversed(range(ml)):
                with m.If(~free_from[:k + 1].all() | ~lt(C(k, 5), limit)):
                    m.d.comb += n_run.eq(k)
            with m.If(free_from[:ml].all() & ~lt(limit, ml)):
                m.d.comb += n_run.eq(ml)
            walk_bits = run_bits(m, ptr[:nsw], n_run, ml, ns, name="walk_bits")
            m.d.comb += [self.iss_port.eq(s_port), self.iss_frame.eq(s_frame),
                         self.iss_sect.eq(ptr[:nsw]), self.iss_len.eq(n_run - 1),
                         self.iss_wr.eq(0), self.iss_last.eq(1), self.take_kind.eq(KIND_FILL),
                         self.take_slot.eq(Cat(ptr[:nsw], eline)), self.take_ab.eq(1)]
            with m.If(abort):
                m.d.sync += goto("FDRAIN")
            with m.Elif(full):
                m.d.sync += goto(ret_sub)
            with m.Elif(stop):
                pass
            with m.Elif(bit_at(busy_s, ptr[:nsw])):
                m.d.sync += ptr.eq(ptr + 1)
            with m.Elif(nonzero(limit) & self.walk_ok):
                m.d.comb += self.iss_valid.eq(tag_ok)
                with m.If(tag_ok & self.iss_ready):
                    m.d.comb += [self.take_en.eq(1), walk_issue.eq(n_run),
                                 ls.e_pend.eq(walk_bits)]
                    m.d.sync += ptr.eq(ptr + n_run)
        with m.Elif(at("FDRAIN")):
            quiet = Signal()
            m.d.comb += quiet.eq(is_zero(inflight) & ~(lk1 & bit_at(ls.pending_any, l1))
                                 & ~(lk2 & bit_at(ls.pending_any, l2)))
            with m.If(quiet):
                m.d.sync += goto(ret_sub)

        # ---- WRITE(eline -> dest [, l2 -> dest2]): FENCE each port, all sectors dirty, runs
        # out until nothing is dirty and every write-out is acknowledged (MR-F26, MR-F29)
        with m.Elif(at("WFENCE2")):
            m.d.sync += f_port.eq(dest2[0:3])
            m.d.sync += call("FENCE", ret_fence, "WDIRTY1")
            with m.If(~two):
                m.d.sync += goto("WDIRTY1")
        with m.Elif(at("WDIRTY1")):
            m.d.comb += ls.e_dall.eq(1)
            m.d.sync += [w_sel.eq(0), goto(Mux(two, fsm.code("WDIRTY2"), fsm.code("WLOOP")))]
            with m.If(two):
                m.d.sync += eline.eq(l2)
        with m.Elif(at("WDIRTY2")):
            m.d.comb += ls.e_dall.eq(1)
            m.d.sync += [eline.eq(l1), goto("WLOOP")]
        with m.Elif(at("WLOOP")):
            m.d.comb += ls.rd2_addr.eq(Cat(dirty_s, eline))
            other = Signal()
            m.d.comb += other.eq(two & Mux(w_sel, bit_at(ls.dirty_any, l1), bit_at(ls.dirty_any, l2)))
            with m.If(nonzero(e_dirty)):
                m.d.comb += ls.e_dclr.eq(dirty_bits)
                m.d.sync += [r_start.eq(dirty_s), r_len.eq(dirty_n), wk.eq(0), goto("WBEAT")]
            with m.Elif(other):
                m.d.sync += [w_sel.eq(~w_sel), eline.eq(Mux(w_sel, l1, l2))]
            with m.Elif(is_zero(acks)):
                m.d.sync += goto("WFIN")
        with m.Elif(at("WBEAT")):
            first = Signal()
            m.d.comb += first.eq(is_zero(wk))
            dsel = Mux(w_sel, dest2, dest)
            m.d.comb += [self.iss_port.eq(dsel[0:3]), self.iss_frame.eq(dsel[3:3 + fw]),
                         self.iss_sect.eq(r_start), self.iss_len.eq(r_len - 1),
                         self.iss_wr.eq(1), self.iss_data.eq(ls.rd_data),
                         self.iss_last.eq(eq(wk + 1, r_len)), self.take_kind.eq(KIND_WB),
                         self.take_ab.eq(1)]
            # the sector memory's read port is the routing stage's first: a beat waits until
            # the port read its sector (rd2_ok), the address held until then
            m.d.comb += self.iss_valid.eq(ls.rd2_ok & (~first | tag_ok))
            adv = Signal()
            m.d.comb += adv.eq(self.iss_valid & self.iss_ready)
            m.d.comb += ls.rd2_addr.eq(Cat((r_start + wk + adv)[:nsw], eline))
            with m.If(adv):
                m.d.comb += [self.take_en.eq(first), ack_take.eq(first)]
                m.d.sync += wk.eq(wk + 1)
                with m.If(self.iss_last):
                    with m.If(two):
                        m.d.sync += [w_sel.eq(~w_sel), eline.eq(Mux(w_sel, l1, l2))]
                    m.d.sync += goto("WLOOP")
        with m.Elif(at("WFIN")):
            # hold the routing stage, then check again: a processor write may have dirtied
            m.d.sync += hold.eq(1)
            with m.If(hold & self.safe):
                with m.If(nonzero(e_dirty) | (two & (bit_at(ls.dirty_any, l1) | bit_at(ls.dirty_any, l2)))
                          | nonzero(acks)):
                    m.d.sync += goto("WLOOP")
                with m.Else():
                    m.d.sync += goto(ret_sub)

        # ---- VICTIM(p): CLOCK over the pages with REF (MR-F36)
        with m.Elif(at("VIC")):
            m.d.comb += self.pt_raddr.eq(hand)
            m.d.sync += goto("VICR")
        with m.Elif(at("VICR")):
            q = Signal(pw)
            m.d.comb += q.eq(hand)
            m.d.sync += hand.eq(Mux(ge(hand + 1, self.pages), 0, hand + 1))
            cand = Signal()
            m.d.comb += cand.eq(eq_const(r_state, STABLE) & ~r_pool & ~eq(q, pg))
            with m.If(cand & ~ref.rd_data):
                m.d.sync += [vic.eq(q), goto(ret_vic)]
            with m.Else():
                with m.If(cand):
                    m.d.comb += [ref.wr_en.eq(1), ref.wr_addr.eq(q)]
                m.d.sync += goto("VIC")

        # a MIG_CMD write to a full FIFO: MIG_STATUS = REJ_FULL and a REJECT (MR-E11)
        with m.If(self.cmd_we & ~cmd_room):
            m.d.sync += [status.eq(Cat(C(REJ_FULL, 4), C(0, 12), self.cmd_page)),
                         rej_pend.eq(1), rej_ppn.eq(self.cmd_page)]
        return m

