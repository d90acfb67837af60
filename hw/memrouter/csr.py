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
from hw.common.lintops import eq_const
from hw.memrouter.layouts import CSRREQ_L, CSRRSP_L, DESC_W, PTE_W, pt_data_pte, pt_data_word

__all__ = ["CsrBlock", "CFG_REGS", "PORT_REGS", "PORT_BEATS"]

CFG_REGS = ("NEAR_FRAMES", "NEAR_RESERVE", "HBM_FRAMES", "MOD_FRAMES", "T_SECT", "T_ACC",
            "WINDOW", "WALK_STOP", "MIG_OUTSTANDING", "MIG_STARVE", "UW")
PORT_REGS = ("RATE_N", "RATE_F", "BURST_N", "BURST_F", "UTH")
PORT_BEATS = ("RD_N", "RD_F", "RD_M", "WR_N", "WR_F", "WR_M")
MIGRATING = 2
CMD_PT_INIT, CMD_FLUSH, CMD_CLR = 1, 2, 3


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
        The configuration (``slots``: 16 × 4 bits).
    port_<PORT_REGS lower-case> : Out, one per port
    init_start, init_pending : Out(1); init_busy, init_accepted, init_refused, quiet : In(1)
        PT_INIT (CMD = 1): pending from the command until it starts, which waits for ``quiet``
        (nothing in flight).
    pages : In; hand : In
    pt_addr : Out; pt_data : In; pt_w_en, pt_w_data : Out; pt_grant : In
        Page-table access (PT_ADDR / PT_DATA): read address, read data one cycle later, write.
    nfree_push, ffree_push, push_desc : Out; nfree_cnt, ffree_cnt : In
    flush : Out(1)
    status_idle : In(1)
    inc_<COUNTER lower-case> : In
        Increments of the counters at 0x200.
    beat_<port>_<k> : In
        Sectors transferred on port j of kind PORT_BEATS[k].
    """

    def __init__(self, params, reset_cfg):
        self.p = params
        self.cfg = reset_cfg
        self.ports = params.N_OFF + 1
        pw = (params.PT_ENTRIES - 1).bit_length()
        cnt_w = params.PT_ENTRIES.bit_length()
        members = {
            "csr_req": In(stream.Signature(CSRREQ_L)), "csr_rsp": Out(stream.Signature(CSRRSP_L)),
            "ctrl": Out(9), "slot_len": Out(5), "slots": Out(64),
            "init_start": Out(1), "init_busy": In(1), "init_accepted": In(1),
            "init_refused": In(1),
            "pages": In(pw + 1), "hand": In(pw),
            "pt_addr": Out(pw), "pt_data": In(PTE_W), "pt_w_en": Out(1), "pt_w_data": Out(PTE_W),
            "pt_grant": In(1),
            "nfree_push": Out(1), "ffree_push": Out(1), "push_desc": Out(DESC_W),
            "nfree_cnt": In(cnt_w), "ffree_cnt": In(cnt_w),
            "flush": Out(1), "status_idle": In(1), "quiet": In(1), "init_pending": Out(1),
        }
        for name in CFG_REGS:
            members[name.lower()] = Out(32)
        for name in PORT_REGS:
            members[f"port_{name.lower()}"] = Out(16).array(self.ports)
        for name in COUNTERS:
            members[f"inc_{name.lower()}"] = In(5)
        for j in range(self.ports):
            for k in PORT_BEATS:
                members[f"beat_{j}_{k.lower()}"] = In(5)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p, cfg = self.p, self.cfg
        req = self.csr_req.payload
        rsp = self.csr_rsp.payload

        # configuration registers with their reset values
        ctrl = Signal(9, init=cfg.ctrl)
        slot_len = Signal(5, init=len(cfg.SLOTS))
        slots = [Signal(4, init=(cfg.SLOTS[s] if s < len(cfg.SLOTS) else 0), name=f"slot{s}")
                 for s in range(16)]
        regs = {name: Signal(32, init=getattr(cfg, name), name=name.lower())
                for name in CFG_REGS}
        port_regs = {(j, name): Signal(16, init=getattr(cfg.QOS[j], name),
                                       name=f"p{j}_{name.lower()}")
                     for j in range(self.ports) for name in PORT_REGS}
        m.d.comb += [self.ctrl.eq(ctrl), self.slot_len.eq(slot_len), self.slots.eq(Cat(slots))]
        for name, sig in regs.items():
            m.d.comb += getattr(self, name.lower()).eq(sig)
        for (j, name), sig in port_regs.items():
            m.d.comb += getattr(self, f"port_{name.lower()}")[j].eq(sig)

        # counters
        clear = Signal()
        counters = {}
        for name in COUNTERS:
            c = Signal(32, name=f"cnt_{name.lower()}")
            counters[name] = c
            m.d.sync += c.eq(Mux(clear, 0, c + getattr(self, f"inc_{name.lower()}")))
        beats = {}
        for j in range(self.ports):
            for k in PORT_BEATS:
                c = Signal(32, name=f"beats{j}_{k.lower()}")
                beats[(j, k)] = c
                m.d.sync += c.eq(Mux(clear, 0, c + getattr(self, f"beat_{j}_{k.lower()}")))

        pt_addr = Signal(self.pt_addr.shape())
        m.d.comb += self.pt_addr.eq(pt_addr)

        # read values and writability per offset: offset -> (value, writable register or None)
        ro = {
            OFFSETS["ID"]: C(ID_VALUE, 32),
            OFFSETS["STATUS"]: Cat(self.init_busy, self.status_idle, C(0, 30)),
            OFFSETS["PAGES"]: self.pages,
            OFFSETS["HAND"]: self.hand,
            OFFSETS["NFREE_CNT"]: self.nfree_cnt,
            OFFSETS["FFREE_CNT"]: self.ffree_cnt,
            OFFSETS["MIG_STATUS"]: C(0, 32),
        }
        for i, name in enumerate(COUNTERS):
            ro[0x200 + 4 * i] = counters[name]
        for j in range(self.ports):
            for i, k in enumerate(PORT_BEATS):
                ro[0x300 + 0x20 * j + 4 * i] = beats[(j, k)]
        for i in range(p.NUM_LINES):
            ro[0x400 + 4 * i] = C(0, 32)
        mig_arg = Signal(16)
        rw = {OFFSETS["CTRL"]: ctrl, OFFSETS["SLOT_LEN"]: slot_len,
              OFFSETS["PT_ADDR"]: pt_addr, OFFSETS["MIG_ARG"]: mig_arg}
        for name, sig in regs.items():
            rw[OFFSETS[name]] = sig
        for s in range(16):
            rw[0x080 + 4 * s] = slots[s]
        for (j, name), sig in port_regs.items():
            rw[0x100 + 0x20 * j + 4 * PORT_REGS.index(name)] = sig

        addr = Signal(12)
        we = Signal()
        wdata = Signal(32)
        rdata = Signal(32)
        err = Signal()
        m.d.comb += [rsp.rdata.eq(rdata), rsp.err.eq(err),
                     self.push_desc.eq(Cat(wdata[3:6], wdata[8:32])),
                     self.pt_w_data.eq(pt_data_pte(wdata))]

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.csr_req.ready.eq(1)
                with m.If(self.csr_req.valid):
                    m.d.sync += [addr.eq(req.addr), we.eq(req.we), wdata.eq(req.wdata)]
                    m.next = "EXEC"
            with m.State("EXEC"):
                m.d.sync += [rdata.eq(0), err.eq(0)]
                m.next = "RESP"
                with m.Switch(addr):
                    for off, val in ro.items():
                        with m.Case(off):
                            m.d.sync += [rdata.eq(val), err.eq(we)]
                    for off, sig in rw.items():
                        with m.Case(off):
                            m.d.sync += rdata.eq(sig)
                            if sig is pt_addr:
                                with m.If(we):
                                    with m.If(wdata < p.PT_ENTRIES):
                                        m.d.sync += [pt_addr.eq(wdata), rdata.eq(wdata)]
                                    with m.Else():
                                        m.d.sync += [rdata.eq(0), err.eq(1)]
                            else:
                                with m.If(we):
                                    m.d.sync += [sig.eq(wdata), rdata.eq(wdata[:len(sig)])]
                    with m.Case(OFFSETS["PT_DATA"]):
                        m.next = "PT_READ"
                    with m.Case(OFFSETS["CMD"]):
                        with m.If(we & eq_const(wdata, CMD_PT_INIT)):
                            m.next = "INIT"
                        with m.If(we & eq_const(wdata, CMD_FLUSH)):
                            m.d.comb += self.flush.eq(1)
                        with m.If(we & eq_const(wdata, CMD_CLR)):
                            m.d.comb += clear.eq(1)
                    with m.Case(OFFSETS["NFREE_PUSH"]):
                        with m.If(we):
                            full = eq_const(self.nfree_cnt, p.PT_ENTRIES)
                            m.d.comb += self.nfree_push.eq(~full)
                            m.d.sync += err.eq(full)
                    with m.Case(OFFSETS["FFREE_PUSH"]):
                        with m.If(we):
                            full = eq_const(self.ffree_cnt, p.PT_ENTRIES)
                            m.d.comb += self.ffree_push.eq(~full)
                            m.d.sync += err.eq(full)
                    with m.Case(OFFSETS["MIG_CMD"]):
                        # the migration engine is not built yet: every command is refused
                        m.d.sync += err.eq(we)
                    with m.Default():
                        m.d.sync += err.eq(1)
            with m.State("PT_READ"):                # the entry arrives in the next cycle
                with m.If(~self.init_busy):
                    m.next = "PT_DATA"
            with m.State("PT_DATA"):
                m.d.sync += rdata.eq(pt_data_word(self.pt_data))
                m.next = "RESP"
                with m.If(we):
                    with m.If(eq_const(self.pt_data[0:2], MIGRATING)):
                        m.d.sync += [rdata.eq(0), err.eq(1)]
                    with m.Else():
                        m.d.comb += self.pt_w_en.eq(1)
                        m.d.sync += rdata.eq(pt_data_word(self.pt_w_data))
                        with m.If(~self.pt_grant):
                            m.next = "PT_DATA"
            with m.State("INIT"):                    # wait until nothing is in flight
                m.d.comb += [self.init_pending.eq(1),
                             self.init_start.eq(self.quiet & ~self.init_busy)]
                with m.If(self.init_start):
                    m.next = "INIT_WAIT"
            with m.State("INIT_WAIT"):
                with m.If(self.init_refused):
                    m.d.sync += err.eq(1)
                    m.next = "RESP"
                with m.If(self.init_accepted):
                    m.next = "RESP"
            with m.State("RESP"):
                m.d.comb += self.csr_rsp.valid.eq(1)
                with m.If(self.csr_rsp.ready):
                    m.next = "IDLE"
        return m
