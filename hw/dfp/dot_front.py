"""Front of ``DfpDotUnit``: chain framing, mode preambles, operand clamp/pre-shift, metadata
check and CHUNK chunk framing (spec dfp §4.7, §4.8; DFP-F23, F25, F30-F32, F48, E1-E4, E6).

Three register stages, no stall (the unit only stops accepting beats):

* **A** (the ``i_op`` transfer cycle): chain framing (``first``/``last`` against the open
  state: DFP-E3, DFP-E4), ``cfg`` sampling, the beat's own metadata terms (es_a + es_b, the
  PRESHIFT ex/sa/sb of its bl_a + bl_b + k_log2 from a table), the chain's operand shifts
  sa/sb (so stage B's shifters start from a register), and the Fig 20 "pass has a
  contributing chain" flag that tells the top to hold ``i_op.ready`` low after an ``eop``.
* **B**: chain and segment metadata (taken on a first beat, reloaded on a blocked CHUNK
  ``blk`` beat, else held), −32768 clamp (DFP-E1), operand pre-shift tsh(a, sa), tsh(b, sb)
  into the multiplier input registers, magnitude metadata check, and the CHUNK set-up terms
  wb, clog2(chunk_len) and p = max(0, ACC_W − 1 − wb). From here on every beat carries its
  chain's and segment's values, so later stages keep no context.
* **C** (beside the first product register): L_b, rc, the per-chain chunk counter n_in and
  the PRESHIFT beat count against 2**k_log2 / LANES; emits the :data:`BEAT_CTL` word.
"""

from amaranth import Array, C, Cat, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.dfp.formats import ADAPTIVE, CHUNK, CONFIG_FIELDS, PRESHIFT, op_beat_fields
from hw.common.layout import struct_layout
from hw.common.lzc import LeadingZeroCount
from hw.dfp.dot_ctl import BEAT_CTL, below_mask, eq_const, gt, lt, tsh, wire

__all__ = ["DotFront"]


class DotFront(wiring.Component):
    """Stages A-C of the dot unit (see the module docstring).

    Parameters
    ----------
    lanes : int
        Multipliers per beat.
    acc_w : int
        Accumulator width.

    Members
    -------
    beat : In(DfpOpBeat layout)
        ``i_op.payload``.
    take : In(1)
        ``i_op`` transfers this cycle.
    cfg : In(DfpConfig layout)
        Sampled on chain starts.
    clr : In(1)
        The ``clr`` strobe; becomes the slot's ``clr`` marker.
    op_a, op_b : Out(16 * lanes)
        Multiplier operands, lane i in bits 16i..16i+15 (registers, stage B output).
    ctl : Out(BEAT_CTL)
        Slot control word, registered one cycle after ``op_a``/``op_b`` (aligned with the
        first product register).
    cfg_err_set : Out(1)
        A CHUNK chain with chunk_len = 0 starts this cycle (DFP-E6).
    pass_close : Out(1)
        The beat taken this cycle ends a chain with ``eop`` and the pass it closes holds a
        contributing ADAPTIVE/fig20_en chain: the Fig 20 update will change r_cnt.
    """

    def __init__(self, lanes=16, acc_w=32):
        self.lanes, self.acc_w = lanes, acc_w
        self.lg = ceil_log2(lanes)
        self.r0_min = max(0, 30 + self.lg - (acc_w - 2))
        super().__init__({
            "beat": In(struct_layout(op_beat_fields(lanes))),
            "take": In(1),
            "cfg": In(struct_layout(CONFIG_FIELDS)),
            "clr": In(1),
            "op_a": Out(16 * lanes),
            "op_b": Out(16 * lanes),
            "ctl": Out(BEAT_CTL),
            "cfg_err_set": Out(1),
            "pass_close": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w, lanes = self.acc_w, self.lanes
        bt, cfg, take = self.beat, self.cfg, self.take

        # ---------------- stage A: framing, cfg sampling, per-beat metadata terms ----------
        # Only the chain framing and cfg sampling depend on state here; the metadata terms
        # are functions of the beat alone, and stage B picks them or the held chain/segment
        # values (short paths from the i_op payload).
        is_open = Signal()
        c_mode, c_ovf_sat, c_fig20 = Signal(2), Signal(), Signal()
        c_tlo, c_thi, c_rbase = Signal(6), Signal(6), Signal(6)
        c_len, c_auto = Signal(16), Signal()
        pflag = Signal()                       # the open pass has a contributing chain

        start = wire(m, "start", ~is_open | bt.first)
        e4 = is_open & bt.first
        e3 = ~is_open & ~bt.first
        segnew = wire(m, "segnew", is_open & ~bt.first & bt.blk & eq_const(c_mode, CHUNK))

        mode = wire(m, "mode", Mux(start, cfg.mode, c_mode))
        fig20 = wire(m, "fig20", Mux(start, cfg.fig20_en, c_fig20))
        len_eff = wire(m, "len_eff", Mux(start, Mux(cfg.chunk_len.any(), cfg.chunk_len, 1), c_len))
        rbase = wire(m, "rbase", Mux(start, Mux(gt(cfg.r0, self.r0_min), cfg.r0, self.r0_min),
                                     c_rbase))
        # PRESHIFT: ex = max(0, bl_a + bl_b + k_log2 - (ACC_W - 1)), sa = ceil(ex/2),
        # sb = floor(ex/2) (DFP-F30): a 6-bit table of the beat's own span
        span = wire(m, "span", bt.bl_a + bt.bl_b + bt.k_log2)
        exs = [max(0, v - (w - 1)) for v in range(64)]
        ex_b = wire(m, "ex_b", Array([C(e, 6) for e in exs])[span])
        sab_b = wire(m, "sab_b", Array([C(((e + 1) // 2) | (e // 2) << 4, 8) for e in exs])[span])
        # CHUNK: the beat's own wb = bl_a + bl_b + log2(LANES) and p = max(0, ACC_W - 1 - wb)
        # (a table), so stage B only picks them or the held segment values
        wb_b = wire(m, "wb_b", bt.bl_a + bt.bl_b + self.lg)
        p_b = wire(m, "p_b", Array([C(max(0, (w - 1) - v), 6) for v in range(64)])[wb_b[:6]])
        # the operand shifts of this beat (0 outside PRESHIFT), ready at the start of stage B
        c_sab = Signal(8)
        sab = wire(m, "sab", Mux(eq_const(mode, PRESHIFT), Mux(start, sab_b, c_sab), 0))

        r2 = {name: Signal(shape, name=f"r2_{name}") for name, shape in [
            ("valid", 1), ("clr", 1), ("start", 1), ("e4", 1), ("e3", 1), ("segnew", 1),
            ("last", 1), ("eop", 1), ("mode", 2), ("ovf_sat", 1), ("fig20", 1), ("tlo", 6),
            ("thi", 6), ("rbase", 6), ("len", 16), ("auto", 1), ("es_ab", signed(11)),
            ("bl_a", 4), ("bl_b", 4), ("wb", 6), ("p", 6), ("k", 5), ("ex", 6), ("sab", 8)]}
        r2_a = Signal(16 * lanes)
        r2_b = Signal(16 * lanes)
        m.d.sync += [
            r2["valid"].eq(take), r2["clr"].eq(self.clr),
            r2["start"].eq(start), r2["e4"].eq(e4), r2["e3"].eq(e3), r2["segnew"].eq(segnew),
            r2["last"].eq(bt.last), r2["eop"].eq(bt.eop), r2["mode"].eq(mode),
            r2["ovf_sat"].eq(Mux(start, cfg.ovf_sat, c_ovf_sat)), r2["fig20"].eq(fig20),
            r2["tlo"].eq(Mux(start, cfg.t_lo, c_tlo)), r2["thi"].eq(Mux(start, cfg.t_hi, c_thi)),
            r2["rbase"].eq(rbase), r2["len"].eq(len_eff),
            r2["auto"].eq(Mux(start, cfg.chunk_auto, c_auto)),
            r2["es_ab"].eq(bt.es_a + bt.es_b), r2["bl_a"].eq(bt.bl_a), r2["bl_b"].eq(bt.bl_b),
            r2["wb"].eq(wb_b), r2["p"].eq(p_b), r2["k"].eq(bt.k_log2), r2["ex"].eq(ex_b), r2["sab"].eq(sab),
            r2_a.eq(bt.a), r2_b.eq(bt.b),
        ]
        with m.If(take):
            m.d.sync += is_open.eq(~bt.last)
            with m.If(start):
                m.d.sync += [c_mode.eq(mode), c_ovf_sat.eq(cfg.ovf_sat), c_fig20.eq(fig20),
                             c_tlo.eq(cfg.t_lo), c_thi.eq(cfg.t_hi), c_rbase.eq(rbase),
                             c_len.eq(len_eff), c_auto.eq(cfg.chunk_auto), c_sab.eq(sab_b)]
        m.d.comb += self.cfg_err_set.eq(take & start & eq_const(cfg.mode, CHUNK)
                                        & ~cfg.chunk_len.any())

        # Fig 20 pass bookkeeping in stream order: clr, then the chain a DFP-E4 beat cuts
        # (eop = 0), then the chain this beat ends.
        contrib_old = eq_const(c_mode, ADAPTIVE) & c_fig20
        contrib_cur = eq_const(mode, ADAPTIVE) & fig20
        f1 = wire(m, "f1", (pflag & ~self.clr) | (take & e4 & contrib_old))
        f2 = wire(m, "f2", f1 | (take & bt.last & contrib_cur))
        m.d.comb += self.pass_close.eq(take & bt.last & bt.eop & f2)
        m.d.sync += pflag.eq(Mux(take & bt.last & bt.eop, 0, f2))

        # ---------------- stage B: clamp, pre-shift, metadata magnitudes, CHUNK terms -------
        # chain values (k_log2, ex, sa/sb) load on a start beat, segment values (es_ab, bl)
        # also on a blocked CHUNK reload; other beats use the held ones
        h_k, h_ex = Signal(5), Signal(6)
        h_es_ab, h_bl_a, h_bl_b = Signal(signed(11)), Signal(4), Signal(4)
        h_wb, h_p = Signal(6), Signal(6)
        st2 = r2["start"]
        load2 = st2 | r2["segnew"]
        k = wire(m, "k", Mux(st2, r2["k"], h_k))
        ex = wire(m, "ex", Mux(st2, r2["ex"], h_ex))
        es_ab = wire(m, "es_ab", Mux(load2, r2["es_ab"], h_es_ab))
        bl_a = wire(m, "bl_a", Mux(load2, r2["bl_a"], h_bl_a))
        bl_b = wire(m, "bl_b", Mux(load2, r2["bl_b"], h_bl_b))
        wb = wire(m, "wb", Mux(load2, r2["wb"], h_wb))
        p_seg = wire(m, "p_seg", Mux(load2, r2["p"], h_p))
        with m.If(r2["valid"] & st2):
            m.d.sync += [h_k.eq(r2["k"]), h_ex.eq(r2["ex"])]
        with m.If(r2["valid"] & load2):
            m.d.sync += [h_es_ab.eq(r2["es_ab"]), h_bl_a.eq(r2["bl_a"]), h_bl_b.eq(r2["bl_b"]),
                         h_wb.eq(r2["wb"]), h_p.eq(r2["p"])]
        pre = eq_const(r2["mode"], PRESHIFT)
        sa, sb = r2["sab"][:4], r2["sab"][4:]
        meta_mode = pre | eq_const(r2["mode"], CHUNK)
        op_err_bits, viol_bits = [], []
        for side, src, shift, bl, dst in (("a", r2_a, sa, bl_a, self.op_a),
                                          ("b", r2_b, sb, bl_b, self.op_b)):
            # bits below position bl, for the negative-operand test below
            below = below_mask(bl, 15)
            for i in range(lanes):
                x = src[16 * i:16 * (i + 1)]
                is_min = eq_const(x, 0x8000)
                xc = wire(m, f"{side}{i}_c", Mux(is_min, -32767, x.as_signed()))
                # |xc| >= 2**bl without a negation: z = xc XOR sign (|xc| - 1 when negative);
                # a negative xc violates when z >> bl != 0 or z's low bl bits are all ones
                neg = xc[-1]
                z = wire(m, f"{side}{i}_z", xc[:15] ^ Cat(*[neg] * 15))
                op_err_bits.append(is_min)
                viol_bits.append((z >> bl).any() | (neg & (z | ~below).all()))
                m.d.sync += dst[16 * i:16 * (i + 1)].eq(tsh(m, xc, shift, f"{side}{i}_sh"))

        lzc_lm1 = LeadingZeroCount(16)
        m.submodules.lzc_lm1 = lzc_lm1
        m.d.comb += lzc_lm1.i.eq(r2["len"] - 1)

        r3 = {name: Signal(shape, name=f"r3_{name}") for name, shape in [
            ("valid", 1), ("clr", 1), ("start", 1), ("e4", 1), ("e3", 1), ("segnew", 1),
            ("last", 1), ("eop", 1), ("mode", 2), ("ovf_sat", 1), ("fig20", 1), ("tlo", 6),
            ("thi", 6), ("rbase", 6), ("len", 16), ("auto", 1), ("es_ab", signed(11)),
            ("ex", 6), ("wb", 6), ("cl_len", 5), ("p", 6), ("lim_neg", 1),
            ("lim", 5), ("meta_mode", 1)]}
        for name in ("valid", "clr", "start", "e4", "e3", "segnew", "last", "eop", "mode",
                     "ovf_sat", "fig20", "tlo", "thi", "rbase", "len", "auto"):
            m.d.sync += r3[name].eq(r2[name])
        r3_min = Signal(2 * lanes)             # per operand: it was -32768
        r3_viol = Signal(2 * lanes)            # per operand: |x| >= 2**bl
        m.d.sync += [r3["es_ab"].eq(es_ab), r3["ex"].eq(ex), r3["wb"].eq(wb)]
        m.d.sync += [
            r3["cl_len"].eq(16 - lzc_lm1.count),            # clog2(len) = bitlen(len - 1)
            r3["p"].eq(p_seg),
            r3["lim_neg"].eq(lt(k, self.lg)),
            r3["lim"].eq(k - self.lg),
            r3["meta_mode"].eq(meta_mode),
            r3_min.eq(Cat(*op_err_bits)),
            r3_viol.eq(Cat(*viol_bits)),
        ]

        # ---------------- stage C: L_b, rc, chunk framing, PRESHIFT beat count -------------
        p = r3["p"]
        p16 = ~lt(p, 16)
        pow_p = Cat(*[eq_const(p, i) for i in range(16)], C(0, 1))
        lb = wire(m, "lb", Mux(r3["auto"],
                               Mux(p16, 1 << 16, Mux((r3["len"] >> p[:4]).any(), r3["len"], pow_p)),
                               r3["len"]))
        cl_lb = wire(m, "cl_lb", Mux(r3["auto"],
                                     Mux(p16, 16, Mux(gt(r3["cl_len"], p), r3["cl_len"], p)),
                                     r3["cl_len"]))
        span_c = wire(m, "span_c", r3["wb"] + cl_lb)
        rc = wire(m, "rc", Mux(gt(span_c, w - 1), (span_c - (w - 1))[:6], 0))

        n_in = Signal(17)                       # beats in the open chunk of the open chain
        mode_c = Signal(2)                      # mode of the previous beat's chain
        kleft = Signal(33)                      # PRESHIFT: beats still allowed by k_log2
        v = r3["valid"]
        chunk = eq_const(r3["mode"], CHUNK)
        nz = n_in.any()
        n_after = wire(m, "n_after", Mux(r3["start"] | r3["segnew"], 0, n_in) + 1)
        chunk_end = wire(m, "chunk_end", chunk & (n_after[:17] == lb[:17]))
        pow_lim = Cat(*[eq_const(r3["lim"], i) for i in range(32)], C(0, 1))
        viol = wire(m, "viol", Mux(r3["start"], r3["lim_neg"], ~kleft.any()))
        with m.If(v):
            m.d.sync += [
                n_in.eq(Mux(chunk & ~chunk_end, n_after, 0)),
                mode_c.eq(r3["mode"]),
                kleft.eq(Mux(r3["start"], Mux(r3["lim_neg"], 0, pow_lim - 1),
                             kleft - kleft.any())),
            ]
        ctl = self.ctl
        m.d.sync += [
            ctl.valid.eq(v), ctl.clr.eq(r3["clr"]),
            ctl.start.eq(v & r3["start"]), ctl.end_prev.eq(v & r3["e4"]),
            ctl.close_prev.eq(v & nz & (r3["segnew"] | (r3["e4"] & eq_const(mode_c, CHUNK)))),
            ctl.restart.eq(v & (r3["start"] | (chunk & (r3["segnew"] | ~nz)))),
            ctl.chunk_end.eq(v & chunk_end), ctl.last.eq(v & r3["last"]),
            ctl.eop.eq(r3["eop"]), ctl.mode.eq(r3["mode"]), ctl.ovf_sat.eq(r3["ovf_sat"]),
            ctl.fig20_en.eq(r3["fig20"]), ctl.t_lo.eq(r3["tlo"]), ctl.t_hi.eq(r3["thi"]),
            ctl.rbase.eq(r3["rbase"]), ctl.es_ab.eq(r3["es_ab"]),
            ctl.rfix.eq(Mux(eq_const(r3["mode"], PRESHIFT), r3["ex"], Mux(chunk, rc, 0))),
            ctl.op_err.eq(r3_min.any()),
            ctl.meta_err.eq((r3["meta_mode"] & r3_viol.any())
                            | (eq_const(r3["mode"], PRESHIFT) & viol)),
            ctl.proto_err.eq(r3["e3"]),
        ]
        return m
