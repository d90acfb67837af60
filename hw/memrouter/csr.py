"""The CSR block (spec §3.3, MR-F48, MR-E12, MR-I5): configuration registers, commands,
indirect page-table access, free-list pushes, the counters and per-port beat counters.

One request at a time: a request is taken, executed (a page-table access or a PT_INIT takes a
few cycles) and answered before the next is taken, so responses are in order (MR-I5). The
register map and the reset values come from golden.memrouter (one definition).
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.memrouter.csr import OFFSETS
from golden.memrouter.formats import ID_VALUE
from golden.memrouter.router import COUNTERS
from hw.common.lintops import eq_const, lt_const
from hw.common.statereg import StateReg
from hw.memrouter.layouts import CSRREQ_L, CSRRSP_L, PTE_W, pt_data_pte, pt_data_word

__all__ = ["CsrBlock", "CFG_REGS", "PORT_REGS", "PORT_BEATS", "inc_width"]

CFG_REGS = ("NEAR_FRAMES", "NEAR_RESERVE", "HBM_FRAMES", "MOD_FRAMES", "T_SECT", "T_ACC",
            "WINDOW", "WALK_STOP", "MIG_OUTSTANDING", "MIG_STARVE", "UW")
PORT_REGS = ("RATE_N", "RATE_F", "BURST_N", "BURST_F", "UTH")
PORT_BEATS = ("RD_N", "RD_F", "RD_M", "WR_N", "WR_F", "WR_M")
MIGRATING = 2
CMD_PT_INIT, CMD_FLUSH, CMD_CLR = 1, 2, 3


def read_group(offset):
    """(shift, key): registers with equal ``offset >> shift`` share a read multiplexer (see
    ``PICK``). The per-port blocks (0x100 + 0x20 j, 0x300 + 0x20 j) get one each, so a port's
    multiplexer can sit by the port; the rest one per 0x100."""
    shift = 5 if offset >> 8 in (1, 3) else 8
    return shift, offset >> shift


def inc_width(params, name):
    """Width of the increment input of counter ``name``: sectors (up to 16) for the SECT_*
    counters, one bit for a per-request or per-command event, the sum over the processor ports
    for the prsp beat counters, up to MAX_LEN walker sectors for MIG_WALK_FILLS. MIG_PREVALID
    has no increment input (it is set from ``prevalid``)."""
    if name in ("PRSP_BEATS", "ERR_POISON"):
        return params.N_PROC.bit_length()
    if name in ("PREQ_BEATS", "ERR_RANGE", "ERR_UNMAPPED", "SECT_LINE", "SECT_FILL", "EVICTS",
                "MIG_DONE", "MIG_ABORT", "MIG_FULL_WRITES"):
        return 1
    if name == "MIG_WALK_FILLS":
        return params.MAX_LEN.bit_length()
    if name == "WB_SECT":
        return params.NS.bit_length()
    return 5


class CsrBlock(wiring.Component):
    """Registers and counters.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    reset_cfg : golden.memrouter.params.Config
        Reset values of the configuration registers (MR-C11).

    Members
    -------
    csr_req : In(stream.Signature(CSRREQ_L)); csr_rsp : Out(stream.Signature(CSRRSP_L))
    ctrl, slot_len, slots, <CFG_REGS lower-case> : Out
        The configuration registers (``slots``: 16 × 4 bits).
    port_<PORT_REGS lower-case>_<port> : Out(16)
        The per-port registers; ``port_<PORT_REGS lower-case>`` lists them by port.
    init_start, init_pending : Out(1); init_busy, init_accepted, init_refused, quiet : In(1)
        PT_INIT (CMD = 1): pending from the command until it starts, which waits for ``quiet``
        (nothing in flight).
    pages : In; hand : In
    pt_addr : Out; pt_data : In; pt_w_en : Out; pt_grant : In
        Page-table access (PT_ADDR / PT_DATA): read address, read data one cycle later, write
        (the entry :func:`~hw.memrouter.layouts.pt_data_pte` of ``wdata``).
    wdata : Out(32)
        The write data of the request being executed (a PT_DATA word, a free-list descriptor).
    nfree_push, ffree_push : Out; nfree_cnt, ffree_cnt : In
        Free-list pushes (the descriptor :func:`~hw.memrouter.layouts.word_desc` of
        ``wdata``).
    flush : Out(1); flushing : In(1)
        CMD = FLUSH (a pulse; answered at once), and the flush pending or running (STATUS[4]).
    pt_has_line : In(1)
        Page ``pt_addr`` has a line (a PT_DATA write to it is refused, MR-E12).
    line_sel : Out(log2 NUM_LINES); line_status : In(32)
        LINE_STATUS of line ``line_sel`` (the line store selects it: one word crosses to the
        CSR block, not NUM_LINES).
    mig_cmd_we, mig_arg : Out; cmd_full, mig_status, eng_busy : In
        MIG_CMD: a write with EN_EXPLICIT = 1 goes to the engine with MIG_ARG (err = 1 when
        its FIFO is full; the engine records REJ_FULL); MIG_STATUS; STATUS[2], STATUS[3].
    clr_mig, prevalid_en, prevalid : In
        MIG_START: MIG_WALK_FILLS, MIG_DEMAND_FILLS, MIG_FULL_WRITES cleared, MIG_PREVALID set.
    status_idle : In(1)
    inc_<COUNTER lower-case> : In(:func:`inc_width`)
        Increments of the counters at 0x200 (none for MIG_PREVALID, set from ``prevalid``).
    beat_<port>_<k> : In
        Sectors transferred on port j of kind PORT_BEATS[k] (a write beat is one sector, so
        the WR kinds are 1 bit wide).
    """

    def __init__(self, params, reset_cfg):
        self.p = params
        self.cfg = reset_cfg
        self.ports = params.N_OFF + 1
        pw = (params.PT_ENTRIES - 1).bit_length()
        cnt_w = params.PT_ENTRIES.bit_length()
        members = {
            "csr_req": In(stream.Signature(CSRREQ_L)), "csr_rsp": Out(stream.Signature(CSRRSP_L)),
            "ctrl": Out(9, init=reset_cfg.ctrl), "slot_len": Out(5, init=len(reset_cfg.SLOTS)),
            "slots": Out(64, init=sum(v << 4 * s for s, v in enumerate(reset_cfg.SLOTS))),
            "init_start": Out(1), "init_busy": In(1), "init_accepted": In(1),
            "init_refused": In(1),
            "pages": In(pw + 1), "hand": In(pw),
            "pt_addr": Out(pw), "pt_data": In(PTE_W), "pt_w_en": Out(1), "pt_grant": In(1),
            "wdata": Out(32),
            "nfree_push": Out(1), "ffree_push": Out(1),
            "nfree_cnt": In(cnt_w), "ffree_cnt": In(cnt_w),
            "status_idle": In(1), "quiet": In(1), "init_pending": Out(1),
            "flush": Out(1), "flushing": In(1), "pt_has_line": In(1),
            "line_sel": Out(max(1, (params.NUM_LINES - 1).bit_length())),
            "line_status": In(32),
            "mig_cmd_we": Out(1), "mig_arg": Out(16), "cmd_full": In(1), "mig_status": In(32),
            "eng_busy": In(1), "clr_mig": In(1), "prevalid_en": In(1),
            "prevalid": In(range(params.NS + 1)),
        }
        for name in CFG_REGS:
            members[name.lower()] = Out(32, init=getattr(reset_cfg, name))
        for j in range(self.ports):
            for name in PORT_REGS:
                members[f"port_{name.lower()}_{j}"] = Out(16, init=getattr(reset_cfg.QOS[j], name))
        for name in COUNTERS:
            if name != "MIG_PREVALID":          # set from ``prevalid``, no increment
                members[f"inc_{name.lower()}"] = In(inc_width(params, name))
        for j in range(self.ports):
            for k in PORT_BEATS:
                members[f"beat_{j}_{k.lower()}"] = In(1 if k.startswith("WR") else 5)
        super().__init__(members)
        for name in PORT_REGS:
            setattr(self, f"port_{name.lower()}",
                    [getattr(self, f"port_{name.lower()}_{j}") for j in range(self.ports)])

    def elaborate(self, platform):
        m = Module()
        p = self.p
        req = self.csr_req.payload
        rsp = self.csr_rsp.payload

        # configuration registers: the output ports themselves, with their reset values
        ctrl, slot_len = self.ctrl, self.slot_len
        slots = [self.slots[4 * s:4 * s + 4] for s in range(16)]
        regs = {name: getattr(self, name.lower()) for name in CFG_REGS}
        port_regs = {(j, name): getattr(self, f"port_{name.lower()}")[j]
                     for j in range(self.ports) for name in PORT_REGS}

        # counters
        clear = Signal()
        counters = {}
        for name in COUNTERS:
            c = Signal(32, name=f"cnt_{name.lower()}")
            counters[name] = c
            if name in ("MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_FULL_WRITES"):
                inc = getattr(self, f"inc_{name.lower()}")
                m.d.sync += c.eq(Mux(clear, 0, Mux(self.clr_mig, 0, c) + inc))
            elif name == "MIG_PREVALID":
                # set a cycle after MIG_START from registers: its value is a population count
                # over the engine's line (engine.held_sum); a clear drops a pending set, as
                # the clear in MIG_START's own cycle did
                en_r = Signal(name="prevalid_en_r")
                val_r = Signal.like(self.prevalid, name="prevalid_r")
                m.d.sync += [en_r.eq(self.prevalid_en & ~clear), val_r.eq(self.prevalid),
                             c.eq(Mux(clear, 0, Mux(en_r, val_r, c)))]
            else:
                # the increment is registered first (it comes from the routing stage's issue
                # decision, a long path to the counter's adder); a clear drops it, so every
                # count is the one of an unregistered increment, a cycle later
                inc = getattr(self, f"inc_{name.lower()}")
                inc_r = Signal.like(inc, name=f"inc_{name.lower()}_r")
                m.d.sync += [inc_r.eq(Mux(clear, 0, inc)), c.eq(Mux(clear, 0, c + inc_r))]
        beats = {}
        for j in range(self.ports):
            for k in PORT_BEATS:
                c = Signal(32, name=f"beats{j}_{k.lower()}")
                beats[(j, k)] = c
                m.d.sync += c.eq(Mux(clear, 0, c + getattr(self, f"beat_{j}_{k.lower()}")))

        pt_addr = self.pt_addr

        # read values and writability per offset: offset -> (value, writable register or None)
        ro = {
            OFFSETS["ID"]: C(ID_VALUE, 32),
            OFFSETS["STATUS"]: Cat(self.init_busy, self.status_idle, self.eng_busy,
                                   self.cmd_full, self.flushing, C(0, 27)),
            OFFSETS["PAGES"]: self.pages,
            OFFSETS["HAND"]: self.hand,
            OFFSETS["NFREE_CNT"]: self.nfree_cnt,
            OFFSETS["FFREE_CNT"]: self.ffree_cnt,
            OFFSETS["MIG_STATUS"]: self.mig_status,
        }
        for i, name in enumerate(COUNTERS):
            ro[0x200 + 4 * i] = counters[name]
        for j in range(self.ports):
            for i, k in enumerate(PORT_BEATS):
                ro[0x300 + 0x20 * j + 4 * i] = beats[(j, k)]
        for i in range(p.NUM_LINES):
            ro[0x400 + 4 * i] = self.line_status
        mig_arg = self.mig_arg
        rw = {OFFSETS["CTRL"]: ctrl, OFFSETS["SLOT_LEN"]: slot_len,
              OFFSETS["PT_ADDR"]: pt_addr, OFFSETS["MIG_ARG"]: mig_arg}
        for name, sig in regs.items():
            rw[OFFSETS[name]] = sig
        for s in range(16):
            rw[0x080 + 4 * s] = slots[s]
        for (j, name), sig in port_regs.items():
            rw[0x100 + 0x20 * j + 4 * PORT_REGS.index(name)] = sig

        addr = Signal(12)
        m.d.comb += self.line_sel.eq(addr[2:2 + len(self.line_sel)])
        we = Signal()
        wdata = self.wdata
        rdata = Signal(32)
        err = Signal()
        m.d.comb += [rsp.rdata.eq(rdata), rsp.err.eq(err)]

        fsm = StateReg(("IDLE", "EXEC", "PICK", "PT_READ", "PT_DATA", "INIT", "INIT_WAIT", "RESP"),
                       "IDLE")
        at, goto = fsm.at, fsm.goto

        # Register reads in two steps: in EXEC every group of registers selects the addressed
        # one into its own register (in the cycle in which a read always sampled it), in PICK the
        # group's register goes to rdata. A group's multiplexer can sit beside its registers
        # (a QoS port's beat counters beside the port), so the block has no 100-input
        # multiplexer at one place of the chip (on the ECP5 build of the default router the CSR
        # block was the densest spot of router2's congestion).
        groups = {read_group(off) for off in (*ro, *rw)}
        group_val = {g: Signal(32, name=f"rd_group_{g[1] << g[0]:x}") for g in sorted(groups)}
        from_group = Signal()                   # the response is a register's value

        with m.If(at("IDLE")):
            m.d.comb += self.csr_req.ready.eq(1)
            with m.If(self.csr_req.valid):
                m.d.sync += [addr.eq(req.addr), we.eq(req.we), wdata.eq(req.wdata)]
                m.d.sync += goto("EXEC")
        with m.Elif(at("EXEC")):
            m.d.sync += [rdata.eq(0), err.eq(0), from_group.eq(0)]
            m.d.sync += goto("PICK")
            # the address decode: an If/Elif chain (a Switch leaves its empty default out of the
            # Verilog, an incomplete case)
            cases = [(off, "ro", val) for off, val in ro.items()]
            cases += [(off, "rw", sig) for off, sig in rw.items()]
            cases += [(OFFSETS[name], name, None)
                      for name in ("PT_DATA", "CMD", "NFREE_PUSH", "FFREE_PUSH", "MIG_CMD")]
            for k, (off, kind, sig) in enumerate(cases):
                with (m.Elif if k else m.If)(eq_const(addr, off)):
                    if kind in ("ro", "rw"):
                        m.d.sync += group_val[read_group(off)].eq(sig)
                    if kind == "ro":
                        m.d.sync += [from_group.eq(1), err.eq(we)]
                    elif kind == "rw":
                        m.d.sync += from_group.eq(~we)
                        if sig is pt_addr:
                            with m.If(we):
                                with m.If(lt_const(wdata, p.PT_ENTRIES)):
                                    m.d.sync += [pt_addr.eq(wdata[:len(pt_addr)]),
                                                 rdata.eq(wdata)]
                                with m.Else():
                                    m.d.sync += [rdata.eq(0), err.eq(1)]
                        else:
                            with m.If(we):
                                m.d.sync += [sig.eq(wdata[:len(sig)]), rdata.eq(wdata[:len(sig)])]
                    elif kind == "PT_DATA":
                        m.d.sync += goto("PT_READ")
                    elif kind == "CMD":
                        with m.If(we & eq_const(wdata, CMD_FLUSH)):
                            m.d.comb += self.flush.eq(1)
                        with m.If(we & eq_const(wdata, CMD_PT_INIT)):
                            m.d.sync += goto("INIT")
                        with m.If(we & eq_const(wdata, CMD_CLR)):
                            m.d.comb += clear.eq(1)
                    elif kind in ("NFREE_PUSH", "FFREE_PUSH"):
                        cnt = self.nfree_cnt if kind == "NFREE_PUSH" else self.ffree_cnt
                        push = self.nfree_push if kind == "NFREE_PUSH" else self.ffree_push
                        with m.If(we):
                            full = eq_const(cnt, p.PT_ENTRIES)
                            m.d.comb += push.eq(~full)
                            m.d.sync += err.eq(full)
                    else:
                        en_explicit = ctrl[2]
                        m.d.comb += self.mig_cmd_we.eq(we & en_explicit)
                        m.d.sync += err.eq(we & (~en_explicit | self.cmd_full))
            with m.Else():
                m.d.sync += err.eq(1)
        with m.Elif(at("PICK")):
            m.d.sync += goto("RESP")
            with m.If(from_group):
                for k, (shift, key) in enumerate(group_val):
                    with (m.Elif if k else m.If)(eq_const(addr[shift:], key)):
                        m.d.sync += rdata.eq(group_val[shift, key])
        with m.Elif(at("PT_READ")):                # the entry arrives in the next cycle
            with m.If(~self.init_busy):
                m.d.sync += goto("PT_DATA")
        with m.Elif(at("PT_DATA")):
            m.d.sync += rdata.eq(pt_data_word(self.pt_data))
            m.d.sync += goto("RESP")
            with m.If(we):
                with m.If(eq_const(self.pt_data[0:2], MIGRATING) | self.pt_has_line):
                    m.d.sync += [rdata.eq(0), err.eq(1)]
                with m.Else():
                    m.d.comb += self.pt_w_en.eq(1)
                    m.d.sync += rdata.eq(pt_data_word(pt_data_pte(wdata)))
                    with m.If(~self.pt_grant):
                        m.d.sync += goto("PT_DATA")
        with m.Elif(at("INIT")):                    # wait until nothing is in flight
            m.d.comb += [self.init_pending.eq(1),
                         self.init_start.eq(self.quiet & ~self.init_busy)]
            with m.If(self.init_start):
                m.d.sync += goto("INIT_WAIT")
        with m.Elif(at("INIT_WAIT")):
            with m.If(self.init_refused):
                m.d.sync += err.eq(1)
                m.d.sync += goto("RESP")
            with m.If(self.init_accepted):
                m.d.sync += goto("RESP")
        with m.Elif(at("RESP")):
            m.d.comb += self.csr_rsp.valid.eq(1)
            with m.If(self.csr_rsp.ready):
                m.d.sync += goto("IDLE")
        return m
