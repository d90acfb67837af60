"""FP32 -> DFP16 block quantizer (spec dfp.md §4.3, Fig 14/15A/17)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.dfp.formats import (BIAS_BITS_RANGE, BIASED, CONFIG_FIELDS,
                                QUANT_STATS, quant_in_fields, quant_out_fields,
                                stats_fields)
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.dfp.blockbuf import (BlockBuffer, ReadPipeline, check_block_params, register_output,
                              round_saturate)
from hw.dfp.round import gt_const, is_zero, popcount
from hw.dfp.stats import StatsCounters

__all__ = ["DfpQuantizer"]


class DfpQuantizer(wiring.Component):
    """FP32 -> DFP16 block quantizer (Alg Q of spec dfp §4.3; DFP-F4..F15, DFP-F47).

    Pass 1 writes each block into a :class:`BlockBuffer` (ping-pong) while it takes the maximum
    exponent field E_amax (an integer max of the 8-bit fields, DFP-F4), notes Inf/NaN
    (DFP-F12) and counts denormals (DFP-F10); ``cfg`` (round_mode, q_ext) and ``e_ext`` are
    sampled on the block's first beat. Pass 2 reads the block back and turns each element into
    I = ±sat(rshift_round(2^23 | mant, E - e + 9, round_mode)) (DFP-F5..F9, the shift clamped at
    25 + BIAS_BITS, past which every mode gives 0). With cfg.q_ext = 1 (DFP-F15), E = e_ext
    instead of E_amax and elements above it saturate; e_ext 0 or 255 gives an invalid block with
    blk_err. Single-pass blocks use the same buffered datapath (identical results and timing).

    Special blocks: Inf/NaN -> all I = 0, sf_b = 255, inv; two-pass E_amax = 0 -> sf_b = 0, zero;
    a block reaching BLK_MAX elements without ``last`` ends there with blk_err (DFP-E7). The
    last beat carries bl = bitlen(max|I|) (an OR over the block's magnitudes), n_sat, n_ftz,
    inv, zero, blk_err and the metadata record; these fields are 0 on the other beats.

    Timing (DFP-P6, DFP-I9): two blocks are buffered (ping-pong); past the buffer one beat is
    held in each of the memory read register, the four pass-2 stages of
    :class:`hw.dfp.blockbuf.ReadPipeline` (read data | shift amount | rounding shift |
    increment and saturation, for 100 MHz on ECP5) and the output register. With the output
    idle and ready, a block's first output beat is valid 8 cycles after its last input beat,
    so a block of n beats accepted back to back is fully out 2n + 6 cycles after its first
    beat. Back-to-back blocks stream at about one beat per cycle (one bubble every two blocks:
    0.992 beats/cycle for 64-beat blocks). With the output stalled, the input accepts two
    blocks, plus up to six beats when blocks are short, before ``i_fp.ready`` falls.

    Counters (``stats``, DFP-F46): quant_blocks, quant_sat, quant_ftz, quant_inv and quant_zero
    count when a block's last beat leaves ``o_q``; cfg_err is set when round_mode 3 (treated as
    BIASED, DFP-E5) is sampled. ``stats_clr`` wins over same-cycle events. Reset drops every
    buffered or open block (DFP-E12).

    Parameters
    ----------
    q_lanes : int
        Elements per beat (DFP-C3): 1, 2, 4, 8 or 16.
    blk_max : int
        Largest block in elements (DFP-C4), 1..1024, a multiple of q_lanes.
    bias_bits : int
        Bias bits of BIASED rounding (DFP-C6), 1..4.

    Members
    -------
    i_fp : In(stream.Signature(quant_in_fields))
        FP32 words ``w[q_lanes]``, ``last``, ``e_ext`` (read on a block's first beat).
    o_q : Out(stream.Signature(quant_out_fields))
        int16 ``i[q_lanes]``, ``sf_b`` and ``last`` on every beat; ``bl``, ``n_sat``, ``n_ftz``,
        ``inv``, ``zero``, ``blk_err``, ``meta`` on the last beat.
    cfg : In(DfpConfig)
        Configuration; round_mode and q_ext are used.
    stats_clr : In(1)
        Zero the counters.
    stats : Out(stats_fields(QUANT_STATS))
        The counters.
    """

    def __init__(self, q_lanes=1, blk_max=64, bias_bits=1):
        check_block_params(self, q_lanes, blk_max)
        check_int(self, "bias_bits", bias_bits, *BIAS_BITS_RANGE)
        self.q_lanes = q_lanes
        self.blk_max = blk_max
        self.bias_bits = bias_bits
        self.depth = blk_max // q_lanes
        super().__init__({
            "i_fp": In(stream.Signature(struct_layout(quant_in_fields(q_lanes)))),
            "o_q": Out(stream.Signature(struct_layout(quant_out_fields(q_lanes)))),
            "cfg": In(struct_layout(CONFIG_FIELDS)),
            "stats_clr": In(1),
            "stats": Out(struct_layout(stats_fields(QUANT_STATS))),
        })

    DESC = data.StructLayout({
        "e": 8,          # E used for the shifts (E_amax or e_ext)
        "sf_b": 8,
        "rm": 2,         # effective round mode (3 already mapped to BIASED)
        "inv": 1,
        "zero": 1,
        "blk_err": 1,
        "n_ftz": 16,
    })

    def elaborate(self, platform):
        m = Module()
        q = self.q_lanes
        stats = StatsCounters(m, self.stats, self.stats_clr)
        ip = self.i_fp.payload
        o = self.o_q
        can_load = ~o.valid | o.ready             # the output register takes a beat
        w_desc = Signal(self.DESC)
        buf = BlockBuffer(m, 32 * q, self.depth, self.DESC, w_valid=self.i_fp.valid,
                          w_data=ip.w.as_value(), w_last=ip.last, w_desc=w_desc,
                          r_ready=can_load)
        m.d.comb += self.i_fp.ready.eq(buf.w_ready)

        # -- pass 1: input side ------------------------------------------------------------
        accept = self.i_fp.valid & buf.w_ready
        first = buf.w_first
        exps = [ip.w[k][23:31] for k in range(q)]
        beat_emax = exps[0]
        for k, e in enumerate(exps[1:], 1):         # a named signal per step: no tree blow-up
            step = Signal(8, name=f"beat_emax{k}")
            m.d.comb += step.eq(Mux(e > beat_emax, e, beat_emax))
            beat_emax = step
        beat_inf = Cat(*[e.all() for e in exps]).any()
        beat_ftz = popcount([is_zero(e) & ip.w[k][:23].any() for k, e in enumerate(exps)])

        emax_acc = Signal(8)
        inf_acc = Signal()
        ftz_acc = Signal(16)
        rm_reg = Signal(2)
        qext_reg = Signal()
        eext_reg = Signal(8)

        rm_cfg = self.cfg.round_mode
        rm_eff = Mux(rm_cfg.all(), BIASED, rm_cfg)
        emax_new = Signal(8)
        m.d.comb += emax_new.eq(Mux(first | (beat_emax > emax_acc), beat_emax, emax_acc))
        inf_new = Mux(first, 0, inf_acc) | beat_inf
        ftz_new = (Mux(first, 0, ftz_acc) + beat_ftz)[:16]
        rm_cur = Mux(first, rm_eff, rm_reg)
        qext_cur = Mux(first, self.cfg.q_ext, qext_reg)
        eext_cur = Mux(first, ip.e_ext, eext_reg)
        with m.If(accept):
            m.d.sync += [emax_acc.eq(emax_new), inf_acc.eq(inf_new), ftz_acc.eq(ftz_new),
                         rm_reg.eq(rm_cur), qext_reg.eq(qext_cur), eext_reg.eq(eext_cur)]
        stats.set_cfg_err(accept & first & rm_cfg.all())

        # the descriptor, from the pass-1 registers once the block's last beat is in
        bad_ext = qext_reg & (is_zero(eext_reg) | eext_reg.all())
        inv = bad_ext | inf_acc
        big_e = Mux(qext_reg, eext_reg, emax_acc)
        m.d.comb += [
            w_desc.e.eq(big_e),
            w_desc.sf_b.eq(Mux(inv, 255, big_e)),
            w_desc.rm.eq(rm_reg),
            w_desc.inv.eq(inv),
            w_desc.zero.eq(~inv & ~qext_reg & is_zero(emax_acc)),
            w_desc.blk_err.eq(bad_ext | buf.end_cut),
            w_desc.n_ftz.eq(Mux(inv, 0, ftz_acc)),
        ]

        # -- pass 2: output side, four register stages (see ReadPipeline) -------------------
        pipe = ReadPipeline(m, buf, can_load)
        s_max = 25 + self.bias_bits
        s_w = ceil_log2(s_max + 1)
        # stage 1: the block-buffer read data
        words = data.View(data.ArrayLayout(32, q), pipe.stage("qd", w=buf.r_data)["w"])
        # stage 2: per element the shift E - e + 9 (clamped), the significand, the flags
        desc = pipe.r_desc
        s_lane, sig_lane, sign_lane, kill_lane, over_lane = [], [], [], [], []
        for k in range(q):
            w = words[k]
            e = w[23:31]
            s_raw = (desc.e - e + 9)[:9]           # 9..263 when e <= E
            s_lane.append(Mux(gt_const(s_raw, s_max), s_max, s_raw)[:s_w])
            sig_lane.append(Cat(w[:23], C(1, 1)))
            sign_lane.append(w[31])
            kill_lane.append(is_zero(e) | desc.inv)
            over_lane.append(e > desc.e)
        st2 = pipe.stage("qs", s=s_lane, sig=sig_lane, sign=sign_lane, kill=kill_lane,
                         over=over_lane)
        # stages 3 and 4: the rounding shift, then the increment and the saturation
        mags, sats, out_i = round_saturate(m, pipe, "q", st2["sig"], st2["s"], st2["sign"],
                                           st2["kill"], st2["over"], self.bias_bits, s_max)
        desc = pipe.r_desc

        register_output(m, o, pipe, can_load, out_i, mags, sats, desc.inv, lambda last, bl: [
            o.payload.bl.eq(Mux(last, bl, 0)),
            o.payload.n_ftz.eq(Mux(last, desc.n_ftz, 0)),
            o.payload.inv.eq(last & desc.inv),
        ])

        done = o.valid & o.ready & o.payload.last
        stats.add("quant_blocks", 1, done)
        stats.add("quant_sat", o.payload.n_sat, done)
        stats.add("quant_ftz", o.payload.n_ftz, done)
        stats.add("quant_inv", o.payload.inv, done)
        stats.add("quant_zero", o.payload.zero, done)
        return m
