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

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.memrouter.formats import EV_ALLOC, EV_EVICT
from hw.common.lintops import (bit_at, eq, eq_const, ge, gt_const, is_zero, low_ones, nonzero,
                               run_bits, select, shift_left)
from hw.common.onehot import onehot_to_binary
from hw.common.statereg import StateReg
from hw.memrouter.layouts import proc_width, pte_fields, slot_add
from hw.memrouter.intake import req_fields
from hw.memrouter.tags import KIND_FILL, KIND_RD, KIND_WB, KIND_WR, dest_width

assert (KIND_RD, KIND_WR) == (0, 1)         # a direct part's kind is the request's wr bit

__all__ = ["Route", "lowest_run", "merge_be"]


def lowest_run(m, vec, name, limit):
    """(start, length) of the lowest run of set bits of ``vec`` (length 0 when none), at most
    ``limit`` long.

    Carry chains, not a shifter: adding the lowest set bit to ``vec`` clears the lowest run and
    sets the bit just above it (bit n when the run reaches the top), so the run ends at the one
    bit of ``(vec + low) & ~vec`` and its length is end - start. (``vec >> start`` made every
    length bit an n-way multiplexer with wires across the whole vector: on the default ECP5
    build the engine's write-out run was among router2's most congested nets.)"""
    n = len(vec)
    start = C(0, 1)
    low = vec[:1]
    if n > 1:
        # the lowest set bit alone, encoded (an NS-deep if-chain exhausted Yosys at NS 2048);
        # bit 0 encodes to 0 and is left out, and the index is a Cat of named bits (a signal
        # naming the Cat would be an unread alias in the Verilog)
        high = Signal(n - 1, name=f"{name}_low")
        m.d.comb += high.eq(vec[1:] & (~vec + 1)[1:n])
        start = onehot_to_binary(Cat(C(0, 1), high), m, name=f"{name}_s")
        low = Cat(vec[0], high)
    # bit k - 1 of ``ends``: the run ends below bit k (bit 0 of the sum never ends a run). A
    # named signal for the whole output of the AND: the encoder reads each bit, and an unnamed
    # expression would be built again for every read (14 GB at NS 2048); a name on a slice or
    # on a narrower copy would be an unread alias in the Verilog, hence the If below
    ends = Signal(n, name=f"{name}_end")
    m.d.comb += ends.eq((vec + low)[1:n + 1] & ~Cat(vec[1:], C(0, 1)))
    end = onehot_to_binary(Cat(C(0, 1), ends), m, name=f"{name}_e")
    run = end - start
    length = Signal(range(limit + 1), name=f"{name}_len")
    with m.If(gt_const(run, limit)):
        m.d.comb += length.eq(limit)
    with m.Else():
        m.d.comb += length.eq(run)
    return start, length


def merge_be(old, new, be):
    """Sector ``old`` with the bytes of ``new`` whose byte enables are set (MR-I9)."""
    return Cat(Mux(be[b], new[8 * b:8 * b + 8], old[8 * b:8 * b + 8]) for b in range(32))

E_RANGE, E_UNMAPPED, E_POISON = 1, 2, 3
UNMAPPED, STABLE, MIGRATING = 0, 1, 2
SRC_ACC, SRC_SECT = 1, 2
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
        Page-table read port (data one cycle after the address): the PTE's state, pool, port
        and the low 24 - LOG2G frame bits (the rest of the entry is not read here).
    mode, mig_stall, far_alloc : In(1)
        CTRL.MODE, CTRL.MIG_STALL, CTRL.FAR_ALLOC.
    tag_ok : In(ports); tag_next : In, one per port
    iss_valid, iss_port, iss_cls, iss_tag, iss_sect, iss_frame, iss_len, iss_wr, iss_data, iss_be,
    iss_last : Out; iss_ready : In
        One mreq beat for the NEAR or FAR class queue of port ``iss_port``; its device address
        is ``iss_frame`` · G + ``iss_sect`` · 32. Direct parts, demand fills and write-backs.
    take_en, take_kind, take_proc, take_slot, take_ab : Out
        The tag taken with a request's first beat (:mod:`hw.memrouter.tags` kinds).
    c_en, c_proc, c_slot, c_err, c_set_a, c_set_b, c_beat, c_data : Out; c_grant : In
        The completion bus: a rejection, a read beat served by a line, a line write's ack.
    sect_hbm, sect_nearm, sect_fard : Out(5); sect_line, sect_fill : Out(1)
        Sectors served, by where (SECT_HBM, SECT_NEARM, SECT_FARD, SECT_LINE, SECT_FILL).
    evicts : Out(1); wb_sect : Out(range(NS + 1))
        An eviction and its written-back sectors (EVICTS, WB_SECT).
    err_range, err_unmapped : Out(1)
        One rejected request (ERR_RANGE, ERR_UNMAPPED).
    evt_valid, evt_code, evt_line, evt_ppn, evt_arg : Out
        ALLOC and EVICT events.
    flush : In(1); flushing : Out(1)
        CMD = FLUSH (a pulse), and the flush is pending or running (MR-F47).
    eng_hold : In(1); eng_safe : Out(1)
        The migration engine holds the stage between parts; it is held (idle, or waiting on a
        MIGRATING page with its PT entry read again next).
    ealloc_req, ealloc_ppn : In; ealloc_done, ealloc_line : Out
        Allocate a locked line for the engine (with eviction of the victim).
    eevict_req, eevict_line : In; eevict_done : Out
        Evict and free a line for the engine (ABORT).
    eng_idle : In(1)
        FLUSH waits for it.
    walk_ok : Out(1)
        The stage is not deciding or issuing demand fills (the walker may issue).
    ref_en, ref_ppn, nd_en, nd_ppn : Out
        REF of a routed part's page (MR-F37); ND of a page written directly in the near pool.
    trig_en, trig_ppn, trig_src : Out; trig_ok : In
        An automatic trigger (§4.7) when a part completes on a line.
    en_acc, en_sect, t_acc, t_sect : In
    mig_demand : Out(5); mig_full : Out(1)
        MIG_DEMAND_FILLS and MIG_FULL_WRITES increments (the page is MIGRATING).
    busy : Out(1)
        A request is being routed.
    """

    def __init__(self, params, lines, tag_w=4):
        self.p = params
        self.ls = lines
        self.ports = params.N_OFF + 1
        self.pw = (params.PT_ENTRIES - 1).bit_length()
        self.sw = (params.ROB_BEATS - 1).bit_length()
        self.tw = tag_w
        self.lw = max(1, (params.NUM_LINES - 1).bit_length())
        self.nsw = (params.NS - 1).bit_length()
        members = {f"req_{name}": In(w) for name, w in req_fields(params)}
        members.update({
            "req_valid": In(1), "req_pop": Out(1),
            "wd_valid": In(1), "wd_data": In(256), "wd_be": In(32), "wd_pop": Out(1),
            "pt_addr": Out(self.pw), "pt_data": In(6 + 24 - params.LOG2G),
            "mode": In(1), "mig_stall": In(1), "far_alloc": In(1),
            "tag_ok": In(self.ports), "tag_next": In(self.tw).array(self.ports),
            "iss_valid": Out(1), "iss_ready": In(1), "iss_port": Out(3), "iss_cls": Out(1),
            "iss_tag": Out(self.tw), "iss_sect": Out(params.LOG2G - 5),
            "iss_frame": Out(24 - params.LOG2G), "iss_len": Out(4), "iss_wr": Out(1),
            "iss_data": Out(256), "iss_be": Out(32), "iss_last": Out(1),
            "take_en": Out(1), "take_kind": Out(2), "take_proc": Out(proc_width(params)),
            "take_slot": Out(dest_width(params)), "take_ab": Out(2),
            "c_en": Out(1), "c_proc": Out(proc_width(params)), "c_slot": Out(self.sw), "c_err": Out(2),
            "c_set_a": Out(1), "c_set_b": Out(1), "c_beat": Out(1), "c_data": Out(256),
            "c_grant": In(1),
            "sect_hbm": Out(5), "sect_nearm": Out(5), "sect_fard": Out(5),
            "sect_line": Out(1), "sect_fill": Out(1),
            "evicts": Out(1), "wb_sect": Out(range(params.NS + 1)),
            "err_range": Out(1), "err_unmapped": Out(1), "busy": Out(1),
            "evt_valid": Out(1), "evt_code": Out(4), "evt_line": Out(4), "evt_ppn": Out(16),
            "evt_arg": Out(32),
            "flush": In(1), "flushing": Out(1),
            "eng_hold": In(1), "eng_safe": Out(1),
            "ealloc_req": In(1), "ealloc_ppn": In(self.pw), "ealloc_done": Out(1),
            "ealloc_line": Out(self.lw),
            "eevict_req": In(1), "eevict_line": In(self.lw), "eevict_done": Out(1),
            "eng_idle": In(1), "walk_ok": Out(1),
            "ref_en": Out(1), "ref_ppn": Out(self.pw), "nd_en": Out(1), "nd_ppn": Out(self.pw),
            "trig_en": Out(1), "trig_ppn": Out(self.pw), "trig_src": Out(2), "trig_ok": In(1),
            "en_acc": In(1), "en_sect": In(1), "t_acc": In(32), "t_sect": In(32),
            "mig_demand": Out(5), "mig_full": Out(1),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        lg, ns, pw = p.LOG2G, p.NS, self.pw
        sec_w = lg - 5
        ml = p.MAX_LEN

        ls = self.ls

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
        ppn = ls.look_ppn                       # (the line store's lookup port)
        m.d.comb += ppn.eq(Mux(part, (p0 + 1)[:pw], p0))
        ps0 = Signal(sec_w)
        pn = Signal(5)
        pb0 = Signal(5)
        m.d.comb += [ps0.eq(Mux(part, 0, s0)), pn.eq(Mux(part, (nb - n1)[:5], n1)),
                     pb0.eq(Mux(part, n1, 0))]
        unm = Signal()
        code = Signal(2)                        # the rejection's error code
        wk = Signal(5)                          # sector / write beat within the part, or beats

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
            self.iss_sect.eq(ps0),
            self.iss_len.eq(pn - 1), self.iss_wr.eq(wr),
            self.iss_data.eq(self.wd_data), self.iss_be.eq(self.wd_be),
            self.take_proc.eq(self.req_proc), self.take_kind.eq(wr),
            self.take_slot.eq(Mux(wr, self.req_base,
                                  slot_add(self.req_base, pb0, p.ROB_BEATS))),
            self.take_ab.eq(Mux(split, Mux(part, 2, 1), 3)),
            self.c_proc.eq(self.req_proc), self.c_err.eq(code),
            self.c_slot.eq(slot_add(self.req_base, wk, p.ROB_BEATS)),
            self.c_set_a.eq(1), self.c_set_b.eq(1),
            self.pt_addr.eq(ppn),
        ]
        route_now = Signal()                    # count and ND at the part's first beat
        n_now = Signal(5)
        m.d.comb += n_now.eq(Mux(route_now, pn, 0))
        m.d.comb += [self.sect_hbm.eq(Mux(~e_pool & is_zero(e_port), n_now, 0)),
                     self.sect_nearm.eq(Mux(~e_pool & nonzero(e_port), n_now, 0)),
                     self.sect_fard.eq(Mux(e_pool, n_now, 0))]

        # line service state
        lcur = self.ealloc_line                 # the line being served or evicted
        m.d.comb += [ls.cur.eq(lcur), ls.op_wr.eq(wr)]

        def flat(line, sect):
            return Cat(sect[:self.nsw], line)
        sect = (ps0 + wk)[:self.nsw]            # the part's sector wk
        need = Signal(ml)                       # sectors of the part to fetch (bit k: ps0 + k)
        nofetch = Signal(ml)                    # whole-sector writes to invalid sectors
        dropped = Signal()                      # a write sector not applied (poisoned fill)
        bit_k = shift_left(m, C(1, 1), wk, ml, name="bit_k")
        v_s = bit_at(ls.cur_valid, sect)
        pd_s = bit_at(ls.cur_pending, sect)
        part_mask = low_ones(m, pn, ml, name="part_mask")
        part_pending = Signal(ml)
        m.d.comb += part_pending.eq((ls.cur_pending >> ps0)[:ml] & part_mask)
        run_s, run_n = lowest_run(m, need, "fill", ml)
        dirty_s, dirty_n = lowest_run(m, ls.cur_dirty, "wb", ml)
        run_mask = run_bits(m, run_s, run_n, ml, ml, name="run_mask")   # the fill run in ``need``
        run_pend = shift_left(m, run_mask, ps0, ns, name="run_pend")    # ... in the line
        r_start = Signal(self.nsw)              # write-back run: first sector, length
        r_len = Signal(range(ml + 1))
        wb_bits = run_bits(m, r_start, r_len, ml, ns, name="wb_bits")
        wb_n = Signal(range(ns + 1))            # sectors written back by this eviction
        m.d.comb += self.wb_sect.eq(0)
        flushing = self.flushing
        freeing = Signal()                      # the eviction frees the line (FLUSH, engine)
        single = Signal()                       # ... one line, for the engine
        for_eng = Signal()                      # the allocation is the engine's
        eppn = Signal(pw)
        held = Signal()                         # PLOOK after a hold on a MIGRATING page
        parked = Signal()                       # serving the engine with a held part waiting
        was_line = Signal()                     # the part was served by a line
        e_state_r = Signal(2)
        e_mig = Signal()                        # ... of a MIGRATING page
        a_ppn = ls.op_ppn                       # (the line store's operation port)
        m.d.comb += a_ppn.eq(Mux(for_eng, eppn, ppn))

        # the write beats of a line part wait here for their sectors
        m.submodules.part_beats = pbuf = Memory(shape=256 + 32, depth=ml, init=[])
        pb_w = pbuf.write_port()
        pb_r = pbuf.read_port()
        pb_w.addr = pb_r.addr = wk[:len(pb_w.addr)]
        pb_w.data = Cat(self.wd_data, self.wd_be)
        m.d.comb += ls.rd_addr.eq(flat(lcur, sect))
        merged = merge_be(ls.rd_data, pb_r.data[:256], pb_r.data[256:])

        def event(code_, line, ppn_, arg=0):
            m.d.comb += [self.evt_valid.eq(1), self.evt_code.eq(code_), self.evt_line.eq(line),
                         self.evt_ppn.eq(ppn_), self.evt_arg.eq(arg)]

        with m.If(self.flush):
            m.d.sync += flushing.eq(1)

        fsm = StateReg(("IDLE", "LOOK0", "LOOK1", "REF1", "PLOOK", "PROUTE", "WBEAT", "NEXT",
                        "REJECT", "DRAIN", "LALLOC", "EVPT", "EVSCAN", "EVBEAT", "EVDONE",
                        "ALLOC", "LACC", "LSCAN", "LFILL", "LWAIT", "LRD", "LWRD", "LWWR",
                        "LACK", "FLLINE"), "IDLE")
        at, goto = fsm.at, fsm.goto
        # The walker waits while a part decides its fills, and while a part holds whole-sector
        # writes to invalid sectors that it has not applied yet: it would fetch such a sector
        # a second time (MR-V5), and a fill landing after the write would overwrite it.
        m.d.comb += self.walk_ok.eq(~at("LACC") & ~at("LSCAN") & ~at("LFILL")
                                    & ~((at("LWAIT") | at("LWRD") | at("LWWR")) & nofetch.any()))

        # the states whose next cycle may use the sector read (the engine's write-out reads in
        # the other cycles): a line read's beats, a write's merge (LWWR, when a fill takes the
        # write port, merges again in the next cycle from its own read), an eviction's
        # write-back
        m.d.comb += ls.rd_en.eq(at("LRD") | at("LWRD") | at("LWWR") | at("EVSCAN") | at("EVBEAT")
                                | at("LWAIT") & is_zero(part_pending) & ~wr)
        m.d.comb += self.eng_safe.eq(at("IDLE") | (at("PLOOK") & held))
        with m.If(at("IDLE")):
            m.d.comb += self.pt_addr.eq(p0)
            m.d.sync += [part.eq(0), unm.eq(0), wk.eq(0), for_eng.eq(0), single.eq(0)]
            with m.If(self.ealloc_req):
                m.d.sync += [for_eng.eq(1), eppn.eq(self.ealloc_ppn)]
                m.d.sync += goto("LALLOC")
            with m.Elif(self.eevict_req):
                m.d.sync += [lcur.eq(self.eevict_line), freeing.eq(1), single.eq(1)]
                m.d.sync += goto("FLLINE")
            with m.Elif(flushing & self.eng_idle):
                m.d.sync += [lcur.eq(0), freeing.eq(1)]
                m.d.sync += goto("FLLINE")
            with m.Elif(self.eng_hold):
                pass
            with m.Elif(self.req_valid):
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
                m.d.comb += [self.ref_en.eq(1), self.ref_ppn.eq(p0)]
                with m.If(split):
                    m.d.sync += part.eq(1)
                    m.d.sync += goto("REF1")
                with m.Else():
                    m.d.sync += goto("PLOOK")
        with m.Elif(at("REF1")):
            m.d.comb += [self.busy.eq(1), self.ref_en.eq(1), self.ref_ppn.eq(ppn)]
            m.d.sync += part.eq(0)
            m.d.sync += goto("PLOOK")
        with m.Elif(at("PLOOK")):
            # A part held on a MIGRATING page waits here; the engine's allocations and
            # evictions are served meanwhile (the command it waits for may need them), and
            # the part then reads its PT entry again.
            m.d.comb += self.busy.eq(1)
            m.d.sync += wk.eq(0)
            with m.If(held & self.ealloc_req):
                m.d.sync += [parked.eq(1), for_eng.eq(1), eppn.eq(self.ealloc_ppn)]
                m.d.sync += goto("LALLOC")
            with m.Elif(held & self.eevict_req):
                m.d.sync += [parked.eq(1), lcur.eq(self.eevict_line), freeing.eq(1),
                             single.eq(1)]
                m.d.sync += goto("FLLINE")
            with m.Elif(~(held & self.eng_hold)):
                m.d.sync += goto("PROUTE")
        with m.Elif(at("PROUTE")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += [e_pool.eq(pool), e_port.eq(port), e_frame.eq(frame[:len(e_frame)])]
            m.d.sync += [e_pool_r.eq(pool), e_port_r.eq(port), e_frame_r.eq(frame[:len(e_frame)]),
                         e_state_r.eq(state), e_mig.eq(eq_const(state, MIGRATING)),
                         was_line.eq(0)]
            hold = Signal()
            m.d.comb += hold.eq(eq_const(state, MIGRATING) & (self.mig_stall | ~ls.hit))
            m.d.sync += held.eq(hold)
            with m.If(hold):
                m.d.sync += goto("PLOOK")
            with m.Elif(ls.hit):
                m.d.sync += lcur.eq(ls.hit_line)
                m.d.sync += goto("LACC")
            with m.Elif(pool & self.far_alloc):
                m.d.sync += goto("LALLOC")
            with m.Elif(wr):
                m.d.sync += goto("WBEAT")
            with m.Else():
                m.d.comb += [self.iss_valid.eq(tag_ok), self.iss_last.eq(1)]
                with m.If(tag_ok & self.iss_ready):
                    m.d.comb += [self.take_en.eq(1), route_now.eq(1)]
                    m.d.sync += goto("NEXT")
        with m.Elif(at("WBEAT")):
            m.d.comb += [self.nd_en.eq(route_now & self.mode & ~e_pool), self.nd_ppn.eq(ppn)]
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
            # automatic triggers when a part completed on the line of a STABLE FAR page (§4.7)
            cand = Signal()
            m.d.comb += cand.eq(was_line & eq_const(e_state_r, STABLE) & e_pool_r
                                & ~ls.cur_lock & ~ls.cur_nomig & self.trig_ok)
            sect_hit = Signal()
            acc_hit = Signal()
            m.d.comb += [sect_hit.eq(self.en_sect & ge(ls.cur_vcount, self.t_sect)),
                         acc_hit.eq(self.en_acc & ge(ls.cur_cnt, self.t_acc))]
            m.d.comb += [self.trig_en.eq(cand & (sect_hit | acc_hit)), self.trig_ppn.eq(ppn),
                         self.trig_src.eq(Mux(sect_hit, SRC_SECT, SRC_ACC))]
            m.d.sync += was_line.eq(0)
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

        # ---- allocation and eviction (§4.6)
        with m.Elif(at("LALLOC")):
            # the victim becomes the current line; a valid one is evicted with its PT entry
            m.d.comb += [self.busy.eq(1), ls.cur.eq(ls.vic_line), self.pt_addr.eq(ls.cur_tag)]
            with m.If(ls.vic_ok):
                m.d.sync += [lcur.eq(ls.vic_line), freeing.eq(0), single.eq(0)]
                m.d.sync += goto(Mux(ls.vic_tv, fsm.code("EVPT"), fsm.code("ALLOC")))
        with m.Elif(at("EVPT")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += [e_pool_r.eq(pool), e_port_r.eq(port), e_frame_r.eq(frame[:len(e_frame)]),
                         wb_n.eq(0)]
            m.d.sync += goto("EVSCAN")
        with m.Elif(at("EVSCAN")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += ls.rd_addr.eq(flat(lcur, dirty_s))
            m.d.sync += [r_start.eq(dirty_s), r_len.eq(dirty_n), wk.eq(0)]
            with m.If(nonzero(ls.cur_dirty)):
                m.d.sync += goto("EVBEAT")
            with m.Else():
                m.d.sync += goto("EVDONE")
        with m.Elif(at("EVBEAT")):
            m.d.comb += self.busy.eq(1)
            m.d.comb += [e_pool.eq(e_pool_r), e_port.eq(e_port_r), e_frame.eq(e_frame_r)]
            first = Signal()
            m.d.comb += first.eq(is_zero(wk))
            m.d.comb += [self.iss_valid.eq(~first | tag_ok), self.iss_last.eq(eq(wk + 1, r_len)),
                         self.iss_sect.eq(r_start), self.iss_len.eq(r_len - 1),
                         self.iss_wr.eq(1), self.iss_data.eq(ls.rd_data),
                         self.iss_be.eq((1 << 32) - 1),
                         self.take_kind.eq(KIND_WB), self.take_ab.eq(0)]
            adv = Signal()
            m.d.comb += adv.eq(self.iss_valid & self.iss_ready)
            m.d.comb += ls.rd_addr.eq(flat(lcur, r_start + wk + adv))
            with m.If(adv):
                m.d.comb += self.take_en.eq(first)
                m.d.sync += wk.eq(wk + 1)
                with m.If(self.iss_last):
                    m.d.comb += ls.op_dclr.eq(wb_bits)
                    m.d.sync += wb_n.eq(wb_n + r_len)
                    m.d.sync += goto("EVSCAN")
        with m.Elif(at("EVDONE")):
            m.d.comb += [self.busy.eq(1), self.evicts.eq(1), self.wb_sect.eq(wb_n)]
            event(EV_EVICT, lcur, ls.cur_tag, wb_n)
            with m.If(freeing & single):
                m.d.comb += [ls.op_free.eq(1), self.eevict_done.eq(1)]
                m.d.sync += [freeing.eq(0), single.eq(0), parked.eq(0)]
                m.d.sync += goto(Mux(parked, fsm.code("PLOOK"), fsm.code("IDLE")))
            with m.Elif(freeing):
                m.d.comb += ls.op_free.eq(1)
                m.d.sync += goto("FLLINE")
                m.d.sync += lcur.eq(lcur + 1)
                with m.If(eq_const(lcur, p.NUM_LINES - 1)):
                    m.d.sync += [flushing.eq(0), freeing.eq(0)]
                    m.d.sync += goto("IDLE")
            with m.Else():
                m.d.sync += goto("ALLOC")
        with m.Elif(at("ALLOC")):
            m.d.comb += [self.busy.eq(1), ls.op_alloc.eq(1), ls.op_lock.eq(for_eng)]
            event(EV_ALLOC, lcur, a_ppn)
            with m.If(for_eng):
                m.d.comb += self.ealloc_done.eq(1)
                m.d.sync += [for_eng.eq(0), parked.eq(0), goto(Mux(parked, fsm.code("PLOOK"), fsm.code("IDLE")))]
            with m.Else():
                m.d.sync += goto("PLOOK")           # the part then finds its line
        with m.Elif(at("FLLINE")):
            # FLUSH: every valid line in ascending order (MR-F47)
            m.d.comb += [self.busy.eq(1), self.pt_addr.eq(ls.cur_tag)]
            with m.If(ls.cur_tv):
                m.d.sync += goto("EVPT")
            with m.Elif(single):
                m.d.comb += self.eevict_done.eq(1)
                m.d.sync += [freeing.eq(0), single.eq(0), parked.eq(0), goto(Mux(parked, fsm.code("PLOOK"), fsm.code("IDLE")))]
            with m.Else():
                m.d.sync += lcur.eq(lcur + 1)
                with m.If(eq_const(lcur, p.NUM_LINES - 1)):
                    m.d.sync += [flushing.eq(0), freeing.eq(0)]
                    m.d.sync += goto("IDLE")

        # ---- line access (§4.5): scan, fills, wait, serve
        with m.Elif(at("LACC")):
            m.d.comb += [self.busy.eq(1), ls.op_access.eq(1)]
            m.d.sync += [wk.eq(0), need.eq(0), nofetch.eq(0), dropped.eq(0), was_line.eq(1)]
            m.d.sync += goto("LSCAN")
        with m.Elif(at("LSCAN")):
            m.d.comb += self.busy.eq(1)
            go = Signal()
            full_be = Signal()
            m.d.comb += [go.eq(~wr | self.wd_valid), full_be.eq(self.wd_be.all())]
            with m.If(go):
                m.d.sync += wk.eq(wk + 1)
                with m.If(wr):
                    m.d.comb += [self.wd_pop.eq(1), pb_w.en.eq(1)]
                    with m.If(v_s):
                        m.d.comb += self.sect_line.eq(1)
                    with m.Elif(pd_s):
                        m.d.comb += self.sect_fill.eq(1)
                    with m.Elif(full_be):
                        m.d.comb += [self.sect_line.eq(1), self.mig_full.eq(e_mig)]
                        m.d.sync += nofetch.eq(nofetch | bit_k)
                    with m.Else():
                        m.d.comb += self.sect_fill.eq(1)
                        m.d.sync += need.eq(need | bit_k)
                with m.Else():
                    m.d.comb += [self.sect_line.eq(v_s), self.sect_fill.eq(~v_s)]
                    with m.If(~v_s & ~pd_s):
                        m.d.sync += need.eq(need | bit_k)
                with m.If(eq(wk + 1, pn)):
                    m.d.sync += goto("LFILL")
        with m.Elif(at("LFILL")):
            # one demand fill per maximal run of sectors to fetch, class of the page's pool
            m.d.comb += self.busy.eq(1)
            m.d.comb += [e_pool.eq(e_pool_r), e_port.eq(e_port_r), e_frame.eq(e_frame_r)]
            m.d.comb += [self.iss_sect.eq(ps0 + run_s), self.iss_len.eq(run_n - 1),
                         self.iss_wr.eq(0), self.iss_last.eq(1),
                         self.take_kind.eq(KIND_FILL), self.take_ab.eq(0),
                         self.take_slot.eq(flat(lcur, (ps0 + run_s)[:self.nsw]))]
            m.d.sync += wk.eq(0)
            with m.If(is_zero(need)):
                m.d.sync += goto("LWAIT")
            with m.Else():
                m.d.comb += self.iss_valid.eq(tag_ok)
                with m.If(tag_ok & self.iss_ready):
                    m.d.comb += [self.take_en.eq(1),
                                 ls.op_pend.eq(run_pend),
                                 self.mig_demand.eq(Mux(e_mig, run_n, 0))]
                    m.d.sync += need.eq(need & ~run_mask)
        with m.Elif(at("LWAIT")):
            m.d.comb += self.busy.eq(1)
            with m.If(is_zero(part_pending)):
                m.d.sync += goto(Mux(wr, fsm.code("LWRD"), fsm.code("LRD")))
        with m.Elif(at("LRD")):
            # one read beat per cycle from the line; a sector whose fill came back poisoned
            # is E_POISON with data 0 (MR-E7)
            m.d.comb += [self.busy.eq(1), self.c_en.eq(1), self.c_beat.eq(1),
                         self.c_slot.eq(slot_add(self.req_base, (pb0 + wk)[:5], p.ROB_BEATS)),
                         self.c_err.eq(Mux(v_s, 0, E_POISON)),
                         self.c_data.eq(Mux(v_s, ls.rd_data, 0))]
            m.d.comb += ls.rd_addr.eq(flat(lcur, ps0 + wk + self.c_grant))
            with m.If(self.c_grant):
                m.d.sync += wk.eq(wk + 1)
                with m.If(eq(wk + 1, pn)):
                    m.d.sync += goto("NEXT")
        with m.Elif(at("LWRD")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += goto("LWWR")
        with m.Elif(at("LWWR")):
            # merge the beat into the sector, unless its fill came back poisoned (MR-E8)
            m.d.comb += self.busy.eq(1)
            apply = Signal()
            m.d.comb += apply.eq(v_s | (nofetch & bit_k).any())
            m.d.comb += [ls.wr_addr.eq(flat(lcur, sect)), ls.wr_data.eq(merged),
                         ls.op_sect.eq(sect)]
            with m.If(ls.wr_ok):
                m.d.comb += [ls.wr_en.eq(apply), ls.op_wset.eq(apply)]
                with m.If(~apply):
                    m.d.sync += dropped.eq(1)
                m.d.sync += wk.eq(wk + 1)
                m.d.sync += goto(Mux(eq(wk + 1, pn), fsm.code("LACK"), fsm.code("LWRD")))
        with m.Elif(at("LACK")):
            m.d.comb += [self.busy.eq(1), self.c_en.eq(1), self.c_slot.eq(self.req_base),
                         self.c_set_a.eq(self.take_ab[0]), self.c_set_b.eq(self.take_ab[1]),
                         self.c_err.eq(Mux(dropped, E_POISON, 0))]
            with m.If(self.c_grant):
                m.d.sync += goto("NEXT")

        return m
