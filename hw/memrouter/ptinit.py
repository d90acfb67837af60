"""PT_INIT (spec §4.2, MR-F5..F8, MR-F6, MR-E12): refuse an illegal configuration, else rebuild
the page table and the near free list from the slot-table interleave and the far striping.

The interface map is computed with running counters (a region base per target kind and a rank
per target within the region), as §4.2 allows, so no multiplier or divider sits on the walk;
the one division (REG = NEAR_FRAMES / SLOT_LEN) is done serially before the walk, while the
configuration is checked.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, eq_const, lt, lt_const, nonzero, select
from hw.common.serialdiv import div_step
from hw.common.statereg import StateReg
from hw.memrouter.layouts import DESC_W, FRAME_W, PTE_W, pte_value

__all__ = ["PtInit"]

STABLE, NEAR, FAR = 1, 0, 1


def _popcount(bits):
    """Number of set bits of a list of 1-bit values, as a balanced adder tree."""
    vals = list(bits)
    while len(vals) > 1:
        nxt = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]


class PtInit(wiring.Component):
    """The PT_INIT sequencer.

    A ``start`` pulse latches the configuration inputs. After the check (``SLOT_LEN``/slot
    table, NEAR_FRAMES a multiple of SLOT_LEN, the frame bounds of MR-C19..C21, PAGES ≤
    PT_ENTRIES, port capacity ≤ 2^DEV_W) it pulses ``refused`` and changes nothing, or pulses
    ``accepted`` and walks every page, one per cycle: ``pt_w_*`` writes the entry (REF and ND of
    the page are cleared with it) and ``nfree_push`` receives the near frames left free.
    ``busy`` is high from ``start`` to the end of the walk.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams

    Members
    -------
    start : In(1)
    mode, slot_len, slots, near_frames, near_reserve, hbm_frames, mod_frames : In
        The CSR values (§3.3); ``slots`` is 16 × 4 bits, slot 0 in the low bits.
    busy, accepted, refused : Out(1)
    pages : Out
        PAGES of the last accepted PT_INIT (the CSR of 0x020 and the E_RANGE limit).
    carve : Out(FRAME_W)
        CARVE (far frames start above it on every module).
    pt_w_en, pt_w_addr, pt_w_data : Out
    nfree_push, nfree_desc : Out
    """

    DEV_W = 24

    def __init__(self, params):
        self.p = params
        self.pw = (params.PT_ENTRIES - 1).bit_length()
        super().__init__({
            "start": In(1), "mode": In(1), "slot_len": In(5), "slots": In(64),
            "near_frames": In(32), "near_reserve": In(32), "hbm_frames": In(32),
            "mod_frames": In(32),
            "busy": Out(1), "accepted": Out(1), "refused": Out(1),
            "pages": Out(self.pw + 1), "carve": Out(FRAME_W),
            "pt_w_en": Out(1), "pt_w_addr": Out(self.pw), "pt_w_data": Out(PTE_W),
            "nfree_push": Out(1), "nfree_desc": Out(DESC_W),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        n_off = p.N_OFF
        nfw = 13                                   # NEAR_FRAMES <= PT_ENTRIES <= 4096

        # latched configuration
        mode = Signal()
        slen = Signal(5)
        slots = Signal(64)
        near_frames = Signal(32)
        near_reserve = Signal(32)
        hbm_frames = Signal(32)
        mod_frames = Signal(32)
        with m.If(self.start & ~self.busy):
            m.d.sync += [mode.eq(self.mode), slen.eq(self.slot_len), slots.eq(self.slots),
                         near_frames.eq(self.near_frames), near_reserve.eq(self.near_reserve),
                         hbm_frames.eq(self.hbm_frames), mod_frames.eq(self.mod_frames)]

        # slot table statistics (combinational over the latched table)
        slot = [slots[4 * s:4 * s + 4] for s in range(16)]
        in_table = [lt_const(slen, s + 1) == 0 for s in range(16)]      # s < SLOT_LEN
        is_m = [Signal(name=f"slot{s}_m") for s in range(16)]
        for s in range(16):
            m.d.comb += is_m[s].eq(in_table[s] & slot[s][0])
        bad_module = Signal()
        m.d.comb += bad_module.eq(Cat(is_m[s] & ~lt_const(slot[s][1:4], n_off)
                                      for s in range(16)).any())
        # (16-input adder trees: the last add is exactly 5 bits wide, so the names are whole
        # operator outputs)
        ron = Signal(5)
        m.d.comb += ron.eq(_popcount([in_table[s] & ~slot[s][0] for s in range(16)]))
        cnt = [Signal(5, name=f"cnt{k}") for k in range(n_off)]
        for k in range(n_off):
            m.d.comb += cnt[k].eq(_popcount([is_m[s] & eq_const(slot[s][1:4], k)
                                             for s in range(16)]))
        unequal = Signal()
        m.d.comb += unequal.eq(Cat(~eq(cnt[k], cnt[0]) for k in range(1, n_off)).any()
                               if n_off > 1 else C(0, 1))

        # REG = NEAR_FRAMES / SLOT_LEN, one quotient bit per cycle (13 cycles)
        rem = Signal(5)
        quo = Signal(nfw)
        div_bit = Signal(range(nfw + 1))
        dv = Signal(nfw)                          # dividend bits still to shift in, MSB first
        qbit, nrem = div_step(rem, dv[-1], slen)
        reg = quo
        # the two products of REG, registered in the CALC cycle after the division (they are
        # the slowest arithmetic here, and the check and the walk only need them after it)
        carve = Signal(len(reg) + len(cnt[0]))       # the product's own width
        hbm_need = Signal(len(reg) + len(ron))
        ff = (mod_frames - carve) * n_off
        far_frames = Signal(ff.shape())                 # the product's own shape (signed)
        m.d.comb += far_frames.eq(ff)
        far_frames_u = far_frames.as_unsigned()
        ff40 = Cat(far_frames_u, far_frames_u[-1].replicate(40 - len(far_frames)))
        used = (near_frames[:nfw] - near_reserve[:nfw])[:nfw]
        pages = Signal(41)
        m.d.comb += pages.eq(Mux(mode, ff40, ff40 + used))
        cap_frames = 1 << (self.DEV_W - p.LOG2G)
        bad = Signal()
        m.d.comb += bad.eq(
            lt_const(slen, 1) | ~lt_const(slen, 17) | bad_module | unequal
            | nonzero(rem) | ~lt_const(near_frames, p.PT_ENTRIES + 1)
            | lt(near_frames, near_reserve)
            | lt(hbm_frames, hbm_need)
            | lt(mod_frames, carve)
            | ~lt_const(pages, p.PT_ENTRIES + 1)
            | ~lt_const(hbm_frames, cap_frames + 1) | ~lt_const(mod_frames, cap_frames + 1))

        # the checks' verdict and the page count, registered in CHECK: DECIDE accepts or
        # refuses from the registers (the check's adders, the far-frames product and the
        # comparisons are one cycle; what acceptance clears and loads is the next)
        bad_r = Signal()
        pages_r = Signal(self.pw + 1)

        # the walk: running near_desc and far_desc
        pg = Signal(self.pw + 1)
        nf = Signal(nfw)
        s_idx = Signal(4)
        hbase = Signal(FRAME_W)
        mbase = Signal(FRAME_W)
        rank_h = Signal(5)
        rank_m = [Signal(5, name=f"rank_m{k}") for k in range(n_off)]
        fm = Signal(range(max(2, n_off)))
        fq = Signal(FRAME_W)
        cur = Signal(4)
        m.d.comb += cur.eq(select(slot, s_idx))
        cur_mod = cur[1:4]
        cur_rank_m = Signal(5)
        m.d.comb += cur_rank_m.eq(0)
        for k in range(n_off):
            with m.If(eq_const(cur_mod, k)):
                m.d.comb += cur_rank_m.eq(rank_m[k])
        # near_desc is the nfree_desc port itself, one multiplexer (as two signals, the port
        # would be split into them and kept as an unread concatenation)
        m.d.comb += self.nfree_desc.eq(
            Mux(cur[0], Cat((cur_mod + 1)[:3], (mbase + cur_rank_m)[:FRAME_W]),
                Cat(C(0, 3), (hbase + rank_h)[:FRAME_W])))
        near_port, near_frame = self.nfree_desc[:3], self.nfree_desc[3:]
        far_port = Cat(fm + 1, C(0, 3))[:3]      # (fm + 1 is narrower for N_OFF < 3)
        far_frame = (self.carve + fq)[:FRAME_W]     # (the registers loaded by DECIDE)

        near_left = lt(nf, near_frames[:nfw])
        near_to_pt = Signal()
        m.d.comb += near_to_pt.eq(~mode & lt(pg, used))
        far_to_pt = Signal()
        m.d.comb += far_to_pt.eq(~near_to_pt & lt(pg, self.pages))

        m.d.comb += [
            self.pt_w_addr.eq(pg[:self.pw]),
            self.pt_w_data.eq(Mux(near_to_pt, pte_value(STABLE, NEAR, near_port, near_frame),
                                  Mux(far_to_pt, pte_value(STABLE, FAR, far_port, far_frame),
                                      0))),
        ]

        fsm = StateReg(("START", "IDLE", "DIV", "CALC", "CHECK", "DECIDE", "WALK"), "START")
        at, goto = fsm.at, fsm.goto

        with m.If(at("START")):                 # PT_INIT after reset (MR-F6)
            m.d.comb += self.busy.eq(1)
            m.d.sync += [mode.eq(self.mode), slen.eq(self.slot_len), slots.eq(self.slots),
                         near_frames.eq(self.near_frames),
                         near_reserve.eq(self.near_reserve),
                         hbm_frames.eq(self.hbm_frames), mod_frames.eq(self.mod_frames)]
            m.d.sync += [rem.eq(0), quo.eq(0), div_bit.eq(nfw), dv.eq(self.near_frames)]
            m.d.sync += goto("DIV")
        with m.Elif(at("IDLE")):
            with m.If(self.start):
                m.d.sync += [rem.eq(0), quo.eq(0), div_bit.eq(nfw), dv.eq(self.near_frames)]
                m.d.sync += goto("DIV")
        with m.Elif(at("DIV")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += [rem.eq(nrem), quo.eq(Cat(qbit, quo[:-1])), div_bit.eq(div_bit - 1),
                         dv.eq(Cat(C(0, 1), dv[:-1]))]
            with m.If(eq_const(div_bit, 1)):
                m.d.sync += goto("CALC")
        with m.Elif(at("CALC")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += [carve.eq(reg * cnt[0]), hbm_need.eq(ron * reg), goto("CHECK")]
        with m.Elif(at("CHECK")):
            m.d.comb += self.busy.eq(1)
            m.d.sync += [bad_r.eq(bad), pages_r.eq(pages[:self.pw + 1]), goto("DECIDE")]
        with m.Elif(at("DECIDE")):
            m.d.comb += self.busy.eq(1)
            with m.If(bad_r):
                m.d.comb += self.refused.eq(1)
                m.d.sync += goto("IDLE")
            with m.Else():
                m.d.comb += self.accepted.eq(1)
                m.d.sync += [self.pages.eq(pages_r), self.carve.eq(carve),
                             pg.eq(0), nf.eq(0), s_idx.eq(0), hbase.eq(0), mbase.eq(0),
                             rank_h.eq(0), fm.eq(0), fq.eq(0)]
                m.d.sync += [r.eq(0) for r in rank_m]
                m.d.sync += goto("WALK")
        with m.Elif(at("WALK")):
            m.d.comb += [self.busy.eq(1), self.pt_w_en.eq(1),
                         self.nfree_push.eq(near_left & ~near_to_pt)]
            m.d.sync += pg.eq(pg + 1)
            with m.If(eq_const(pg, p.PT_ENTRIES - 1)):
                m.d.sync += goto("IDLE")
            with m.If(near_left):               # advance near_desc
                m.d.sync += nf.eq(nf + 1)
                with m.If(eq(s_idx + 1, slen)):
                    m.d.sync += [s_idx.eq(0), rank_h.eq(0), hbase.eq(hbase + ron),
                                 mbase.eq(mbase + cnt[0])]
                    m.d.sync += [r.eq(0) for r in rank_m]
                with m.Else():
                    m.d.sync += s_idx.eq(s_idx + 1)
                    with m.If(cur[0]):
                        for k in range(n_off):
                            with m.If(eq_const(cur_mod, k)):
                                m.d.sync += rank_m[k].eq(rank_m[k] + 1)
                    with m.Else():
                        m.d.sync += rank_h.eq(rank_h + 1)
            with m.If(far_to_pt):                # advance far_desc
                with m.If(eq_const(fm, n_off - 1)):
                    m.d.sync += [fm.eq(0), fq.eq(fq + 1)]
                with m.Else():
                    m.d.sync += fm.eq(fm + 1)
        return m
