"""Dynamic precision manager 1819 of ``DfpDotUnit`` (spec dfp §4.7-§4.9, Fig 19A/19B/20).

The mode preambles that must act before the multipliers (PRESHIFT ex/sa/sb, CHUNK wb/L_b/rc,
chunk framing, metadata checks) run in the front stages (``hw.dfp.dot_front``) and reach this
module in the slot control word, which it delays alongside the multipliers and the adder tree.
Four pipeline steps follow the adder tree:

* **PRE** (beside the tree's last register): the ADAPTIVE start shift
  r_start = max(RBASE, r_cnt) when fig20_en, else RBASE (DFP-F35). r_cnt reads as 0 while a
  ``clr`` marker ahead of the beat has not reached the Fig 20 register yet. A pending
  between-pass update never has to be read here: the top keeps ``i_op`` stalled for 4 cycles
  after an ``eop`` chain whose pass has a contributing chain, so E1 has updated r_cnt before
  the next chain's first beat reaches PRE.
* **SH**: product shifter 1927. For ADAPTIVE both tsh(t, r) and tsh(t, r + 1) are formed,
  because the beat in the accumulator stage may still raise r by one; CHUNK shifts by rc;
  NONE and PRESHIFT do not shift t.
* **ACC** (the only loop, acc → adder → detector → acc): s = base + x, with base = 0 on a
  chain, chunk or segment start. ADAPTIVE: leading-bit detector 1931 on |s| ≥ 2**(ACC_W−2)
  (bit tests, so −2**(ACC_W−2) shifts), halving 1933 toward zero (s + 1 is formed in parallel
  for negative odd s), r register 1930. Other modes: sticky ovf with WRAP or SAT (DFP-F27-F29).
  A CHUNK chunk close does not clear the accumulator; the next beat restarts from 0, so a
  DFP-E4 cut still sees the closed partial (§4.8).
* **EV → E1**: one event per cycle from the accumulator state: a CHUNK chunk close and/or a
  chain end (the previous beat's ``last``/``chunk_end``, or this slot's DFP-E4 cut or blk
  close), with the headroom of acc (leading-zero count on acc XOR sign). E1 applies the Fig 20
  between-pass update in stream order with the slot's ``clr`` (DFP-F38, F39).
"""

from amaranth import C, Cat, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.dfp.formats import ADAPTIVE, CHUNK
from hw.common.lzc import LeadingZeroCount
from hw.dfp.dot_ctl import BEAT_CTL, eq_const, event_layout, gt, lt, tsh_parts, wire

__all__ = ["DynPrecisionManager"]


class DynPrecisionManager(wiring.Component):
    """Shifters, accumulator, leading-bit detector, r register, ovf policy and Fig 20 state.

    Parameters
    ----------
    lanes : int
    acc_w : int
    delay : int
        Cycles from ``ctl`` (the front's register) to the slot holding ``t`` (>= 1).

    Members
    -------
    t : In(signed(31 + clog2(lanes)))
        Beat sum from the adder tree.
    ctl : In(BEAT_CTL)
        Control word of the slot ``delay`` cycles ahead of ``t`` (the manager delays it).
    ev : Out(event_layout(acc_w))
        Event register E1 (one event per cycle at most).
    ev_valid : Out(1)
        E1 holds an event.
    ev_acc : Out(signed(acc_w))
        The event's accumulator value.
    ev_es : Out(signed(12))
        Exponent of its LSB: es_a + es_b + r (or + rc).
    r_cnt : Out(6)
        Fig 20 counter (a register).
    dbg_acc : Out(signed(acc_w))
        The accumulator register.
    dbg_acc_valid : Out(1)
        ``dbg_acc`` holds the value after a beat processed in the previous cycle.
    dbg_acc_mode : Out(2)
        Mode of that beat's chain.
    """

    def __init__(self, lanes=16, acc_w=32, delay=3):
        self.lanes, self.acc_w, self.delay = lanes, acc_w, delay
        self.tw = 31 + ceil_log2(lanes)
        super().__init__({
            "t": In(signed(self.tw)),
            "ctl": In(BEAT_CTL),
            "ev": Out(event_layout(acc_w)),
            "ev_valid": Out(1),
            "ev_acc": Out(signed(acc_w)),
            "ev_es": Out(signed(12)),
            "r_cnt": Out(6),
            "dbg_acc": Out(signed(acc_w)),
            "dbg_acc_valid": Out(1),
            "dbg_acc_mode": Out(2),
        })

    def elaborate(self, platform):
        m = Module()
        w, tw = self.acc_w, self.tw
        ev = self.ev

        # control words: delay line from the front (flat registers, viewed as BEAT_CTL)
        chain = [self.ctl.as_value()]
        for k in range(self.delay):
            d = Signal(len(chain[0]), name=f"ctl_d{k}")
            m.d.sync += d.eq(chain[-1])
            chain.append(d)
        ctl = BEAT_CTL(chain[-1])                 # the slot holding t
        pre = BEAT_CTL(chain[-2])                 # the slot one stage earlier
        q_raw = Signal(len(chain[0]), name="q")
        q = BEAT_CTL(q_raw)                       # the slot in the ACC stage

        # ---------------- PRE: r_start one stage early ------------------------------------
        e1_eop, e1_contrib, e1_clr_pre, e1_clr_post = Signal(), Signal(), Signal(), Signal()
        e1_tlo, e1_thi, e1_rbase = Signal(6), Signal(6), Signal(6)
        pend_clr = pre.clr | ctl.clr | q.clr | e1_clr_pre | e1_clr_post
        rcnt_eff = wire(m, "rcnt_eff", Mux(pend_clr, 0, self.r_cnt))
        rstart_t = Signal(6)
        rstart_pre = wire(m, "rstart_pre", Mux(pre.fig20_en & gt(rcnt_eff, pre.rbase), rcnt_eff,
                                               pre.rbase))
        m.d.sync += rstart_t.eq(rstart_pre)
        # the shift amount of the beat reaching SH next cycle, as far as it is known now: all
        # but "r after the beat now in ACC", which SH takes from r_reg (sh_alt = 0 selects it)
        sh_alt = Signal(name="sh_alt")
        sh_alt_val = Signal(6, name="sh_alt_val")
        pre_adapt = eq_const(pre.mode, ADAPTIVE)
        m.d.sync += [
            sh_alt.eq(~pre_adapt | pre.start | (ctl.valid & ctl.start)),
            sh_alt_val.eq(Mux(pre_adapt, Mux(pre.start, rstart_pre, rstart_t),
                              Mux(eq_const(pre.mode, CHUNK), pre.rfix, 0))),
        ]

        # ---------------- SH: product shifter ----------------------------------------------
        q_rstart = Signal(6)
        r_reg = Signal(6)
        sh0 = wire(m, "sh0", Mux(sh_alt, sh_alt_val, r_reg))
        # one shifter: tsh(t, r + 1) = floor(t / 2**r) >> 1, plus the sticky bits of both
        floor0, sticky0 = tsh_parts(m, self.t, sh0, "tsh_r")
        neg_t = self.t[-1]
        # the floors and their rounding carries (toward zero for negative t) are registered
        # apart: the +carry happens in the ACC adder as its carry-in, not after the shifter
        x0 = Signal(signed(tw))
        x1 = Signal(signed(tw))
        c0 = Signal(name="c0")
        c1 = Signal(name="c1")
        x1_ok = Signal(name="x1_ok")              # ACC may take x1: an ADAPTIVE non-start beat
        m.d.sync += [x1_ok.eq(eq_const(ctl.mode, ADAPTIVE) & ~ctl.start),
                     x0.eq(floor0), c0.eq(neg_t & sticky0),
                     x1.eq(floor0 >> 1), c1.eq(neg_t & (sticky0 | floor0[0])),
                     q_raw.eq(chain[-1]), q_rstart.eq(rstart_t)]

        # ---------------- ACC: the accumulation loop ---------------------------------------
        acc = self.dbg_acc                         # the accumulator register itself
        inc = Signal()                             # the previous ACC beat raised r
        c_mode = self.dbg_acc_mode                 # mode of the last processed beat's chain
        c_fig20 = Signal()
        c_tlo, c_thi, c_rbase, c_rfix = Signal(6), Signal(6), Signal(6), Signal(6)
        c_es_ab = Signal(signed(11))
        shifts = Signal(6, name="shifts")
        sat_cnt = Signal(16, name="sat_cnt")       # saturations of the chain but the last beat's
        sat_p = Signal(name="sat_p")               # the last processed beat saturated
        ovf, op_err, meta_err, proto_err = Signal(), Signal(), Signal(), Signal()
        pv_valid = self.dbg_acc_valid              # a beat was processed in the last cycle
        pv_last, pv_eop, pv_chunk_end = Signal(), Signal(), Signal()

        adapt = eq_const(q.mode, ADAPTIVE)
        x = wire(m, "x", Mux(x1_ok & inc, x1, x0))     # one LUT4 per bit before the adder
        cin = wire(m, "cin", Mux(x1_ok & inc, c1, c0))
        base = wire(m, "base", Mux(q.restart, 0, acc))
        s0 = wire(m, "s0", base + x + cin)            # one carry chain, cin as its carry-in
        s1 = base + x + cin + 1
        s_w = s0[:w]
        top, nxt = s_w[w - 1], s_w[w - 2]
        # leading-bit detector 1931: |s| >= 2**(w-2), by bit tests (s fits in w bits here):
        # the two top bits differ, or s = -2**(w-2) exactly. That equality is tested on the
        # adder inputs without carries, a + b = K <=> a^b^K = ((a&b) | ((a|b)&~K)) << 1
        # (mod 2**w), so it runs beside the adder instead of after it.
        ka = base.as_unsigned()
        kb = x.as_unsigned()[:w] if tw >= w else Cat(x, *[x[-1]] * (w - tw))   # sign-extend
        kk = C((1 << w) - (1 << (w - 2)), w)
        edge = ~((ka ^ kb ^ kk) ^ Cat(cin, ((ka & kb) | ((ka | kb) & ~kk))[:w - 1])).any()
        big = wire(m, "big", (top ^ nxt) | edge)
        half = wire(m, "half", Mux(top & s_w[0], s1[1:w + 1], s0[1:w + 1]))
        hi_bits = s0[w - 1:]
        out_of_range = wire(m, "out_of_range", hi_bits.any() & ~hi_bits.all())
        clamp = Mux(s0[-1], C(1 << (w - 1), w), C((1 << (w - 1)) - 1, w))
        # one select after the adder: the alternative (halved or clamped) or the plain sum
        sel_alt = wire(m, "sel_alt", Mux(adapt, big, out_of_range & q.ovf_sat))
        acc_n = wire(m, "acc_n", Mux(sel_alt, Mux(adapt, half, clamp), s_w))
        shift_now = adapt & big
        ovf_now = ~adapt & out_of_range
        sat_now = ovf_now & q.ovf_sat
        r_cur = Mux(q.start, q_rstart, r_reg)
        st = q.start
        # The counters stepped by a detector result add 1 beside the loop and select after it,
        # so no carry chain follows the accumulator's adder (the ECP5 critical path otherwise).
        sh_base = Mux(st, 0, shifts)
        # sat_cnt lags one beat (sat_p): the count's +1 is off the accumulator loop
        sat_all = wire(m, "sat_all", Mux(sat_p & ~sat_cnt.all(), sat_cnt + 1, sat_cnt))
        m.d.sync += [pv_valid.eq(q.valid), pv_last.eq(q.last), pv_eop.eq(q.eop),
                     pv_chunk_end.eq(q.chunk_end), inc.eq(q.valid & shift_now)]
        with m.If(q.valid):
            m.d.sync += [
                acc.eq(acc_n),
                r_reg.eq(Mux(shift_now, r_cur + 1, r_cur)),
                shifts.eq(Mux(shift_now, sh_base + 1, sh_base)),
                ovf.eq(Mux(st, 0, ovf) | ovf_now),
                sat_cnt.eq(Mux(st, 0, sat_all)),
                sat_p.eq(sat_now),
                op_err.eq(Mux(st, 0, op_err) | q.op_err),
                meta_err.eq(Mux(st, 0, meta_err) | q.meta_err),
                proto_err.eq(Mux(st, q.proto_err, proto_err)),
                c_mode.eq(q.mode), c_fig20.eq(q.fig20_en), c_tlo.eq(q.t_lo), c_thi.eq(q.t_hi),
                c_rbase.eq(q.rbase), c_rfix.eq(q.rfix), c_es_ab.eq(q.es_ab),
            ]

        # ---------------- EV: chunk closes and chain ends ----------------------------------
        chunk_chain = eq_const(c_mode, CHUNK)
        adapt_chain = eq_const(c_mode, ADAPTIVE)
        close_after = pv_valid & chunk_chain & (pv_chunk_end | pv_last)
        end_after = pv_valid & pv_last
        cut = q.end_prev                            # DFP-E4 on this slot's beat
        close = wire(m, "ev_close", close_after | q.close_prev)
        end = wire(m, "ev_end", end_after | cut)
        r_out = wire(m, "r_out", Mux(adapt_chain, r_reg, c_rfix))

        # headroom = max(0, ACC_W - 1 - bitlen|acc|) from the LZC of y = acc XOR sign:
        # for acc < 0, y = |acc| - 1 and bitlen|acc| = bitlen(y) + (y is 0...01...1).
        neg = acc[-1]
        y = wire(m, "acc_xs", acc.as_unsigned() ^ Cat(*[neg] * w))
        lzc = LeadingZeroCount(w)
        m.submodules.lzc_acc = lzc
        m.d.comb += lzc.i.eq(y)
        all_ones = ~(y[1:] & ~y[:-1]).any()
        corr = neg & all_ones
        headroom = Mux(eq_const(lzc.count, 1) & corr, 0, lzc.count - 1 - corr)

        m.d.sync += [
            self.ev_valid.eq(close | end), ev.close.eq(close), ev.end.eq(end),
            e1_eop.eq(end_after & pv_eop),
            e1_contrib.eq(adapt_chain & c_fig20),
            e1_clr_pre.eq(q.clr & cut), e1_clr_post.eq(q.clr & ~cut),
            self.ev_acc.eq(acc), self.ev_es.eq(c_es_ab + r_out),
            ev.headroom.eq(headroom),
            ev.r.eq(r_out), ev.shifts.eq(shifts), ev.ovf.eq(ovf), ev.sat_cnt.eq(sat_all),
            ev.mode.eq(c_mode), ev.op_err.eq(op_err), ev.meta_err.eq(meta_err),
            ev.proto_err.eq(proto_err | cut),
            e1_tlo.eq(c_tlo), e1_thi.eq(c_thi), e1_rbase.eq(c_rbase),
        ]

        # ---------------- E1: Fig 20 between-pass update (§4.9) ----------------------------
        p_n, p_hmin, p_rmax = Signal(), Signal(6, init=w - 1), Signal(6)
        # Every comparison runs on registers in parallel and the muxes follow (no compare of a
        # muxed value): pass statistics after a clr (hm0, rm0) and after this chain (hm1, rm1).
        n0 = Mux(e1_clr_pre, 0, p_n)
        hm0 = wire(m, "hm0", Mux(e1_clr_pre, w - 1, p_hmin))
        rm0 = wire(m, "rm0", Mux(e1_clr_pre, 0, p_rmax))
        rc0 = Mux(e1_clr_pre, 0, self.r_cnt)
        add = self.ev_valid & ev.end & e1_contrib
        n1 = wire(m, "n1", n0 | add)
        take_h = wire(m, "take_h", add & Mux(e1_clr_pre, lt(ev.headroom, w - 1),
                                             lt(ev.headroom, p_hmin)))
        take_r = wire(m, "take_r", add & Mux(e1_clr_pre, ev.r.any(), gt(ev.r, p_rmax)))
        hm1 = wire(m, "hm1", Mux(take_h, ev.headroom, hm0))
        rm1 = wire(m, "rm1", Mux(take_r, ev.r, rm0))

        def up_down(r):
            """(min(63, r + 1), max(RBASE, r − 1)) of a candidate rmax."""
            return Mux(r.all(), r, r + 1), Mux(lt(e1_rbase + 1, r), r - 1, e1_rbase)

        up_p, down_p = up_down(p_rmax)
        up_e, down_e = up_down(ev.r)
        up = Mux(take_r, up_e, Mux(e1_clr_pre, 1, up_p))
        down = Mux(take_r, down_e, Mux(e1_clr_pre, e1_rbase, down_p))
        below = Mux(take_h, lt(ev.headroom, e1_tlo),
                    Mux(e1_clr_pre, lt(C(w - 1, 6), e1_tlo), lt(p_hmin, e1_tlo)))
        above = Mux(take_h, gt(ev.headroom, e1_thi),
                    Mux(e1_clr_pre, gt(C(w - 1, 6), e1_thi), gt(p_hmin, e1_thi)))
        upd = Mux(below, up, Mux(above, down, rm1))
        pass_end = self.ev_valid & ev.end & e1_eop
        with m.If(e1_clr_post):
            m.d.sync += [self.r_cnt.eq(0), p_n.eq(0), p_hmin.eq(w - 1), p_rmax.eq(0)]
        with m.Elif(pass_end):
            m.d.sync += [self.r_cnt.eq(Mux(n1, upd, rc0)),
                         p_n.eq(0), p_hmin.eq(w - 1), p_rmax.eq(0)]
        with m.Else():
            m.d.sync += [self.r_cnt.eq(rc0), p_n.eq(n1), p_hmin.eq(hm1), p_rmax.eq(rm1)]
        return m
