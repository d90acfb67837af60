"""DFP32 -> DFP16 block down-converter (spec dfp.md §4.10, Fig 16A 1630 / 16B 1660)."""

from amaranth import C, Cat, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.dfp.formats import (BIAS_BITS_RANGE, BIASED, CONFIG_FIELDS, DOWN_STATS, IN_W_RANGE,
                                down_in_fields, down_out_fields, stats_fields)
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.dfp.blockbuf import (BlockBuffer, ReadPipeline, check_block_params, register_output,
                              round_saturate)
from hw.dfp.round import bitlen, sgt_const, slt_const
from hw.dfp.stats import StatsCounters

__all__ = ["DfpDownConverter"]

ES16_MAX = 113          # es16 above: exp_ovf (sf_b would exceed 254)
ES16_MIN = -140         # es16 below: exp_unf (sf_b would be below 1)


class DfpDownConverter(wiring.Component):
    """Block down-conversion of IN_W-bit integers with per-beat exponents to DFP16 (DFP-F42..F47).

    Each beat carries its own ``es``. Within a block, es_max = max(es), every element is
    aligned as v' = tsh(v, es_max - es) (toward zero), R = max(0, bitlen(max|v'|) - 15),
    I = sat16(rshift_round(v', R, round_mode)) and es16 = es_max + R; there is no left
    normalization. Encoding (DFP-F45): max|v'| = 0 gives sf_b = 0 and zero; es16 > 113 gives
    sf_b = 255 with exp_ovf; es16 < -140 gives sf_b = 0 with exp_unf (both zero every I and
    n_sat); otherwise sf_b = es16 + 141. The es16 field is clamped to 2047.

    Each beat first enters an input register that holds its lane magnitudes and signs (the
    block buffer stores |v| and the sign) and bitlen of the OR of the lanes' magnitudes. Pass 1
    needs only bitlen(max|v'|) and es_max and keeps two running maxima while the block is
    written into a :class:`hw.dfp.blockbuf.BlockBuffer`: es_max and top = max(es + bitlen)
    over the beats. As bitlen(tsh(x, d)) = max(0, bitlen(x) - d), bitlen(max|v'|) =
    max(0, top - es_max), so R = max(es_max, top - 15) - es_max and es16 = max(es_max,
    top - 15); the descriptor is formed from these registers in the cycle after the block's
    last beat. Pass 2 reads the block back, aligns each element (|v| >> (es_max - es), 0 past
    IN_W), rounds it by R and saturates.

    Blocks end at ``last`` or after BLK_MAX elements with blk_err (DFP-E7). The last beat
    carries n_sat, zero, exp_ovf, exp_unf, blk_err and the metadata record {sf_b, bl,
    inv = exp_ovf, zero, sat_any} (DFP-F47); they are 0 on other beats. es16, sf_b and R are on
    every beat. Buffering and timing are those of :class:`hw.dfp.quantizer.DfpQuantizer`
    (pass-2 stages: read data | alignment shift | rounding shift | increment and saturation)
    plus the input register: a block of n beats is fully out 2n + 7 cycles after its first
    beat, and a stalled output lets the input take two blocks and up to seven beats more.

    Counters (``stats``): dc_blocks, dc_sat, dc_exp_ovf and dc_exp_unf count when a block's last
    beat leaves ``o_q``; cfg_err is set when round_mode 3 (treated as BIASED, DFP-E5) is
    sampled on a block's first beat. ``stats_clr`` wins over same-cycle events; reset drops every
    buffered or open block (DFP-E12).

    Parameters
    ----------
    q_lanes : int
        Elements per beat (DFP-C3): 1, 2, 4, 8 or 16.
    blk_max : int
        Largest block in elements (DFP-C4), 1..1024, a multiple of q_lanes.
    in_w : int
        Input integer width (DFP-C5), 16..48.
    bias_bits : int
        Bias bits of BIASED rounding (DFP-C6), 1..4.

    Members
    -------
    i_v : In(stream.Signature(down_in_fields))
        Signed ``v[q_lanes]``, the beat's ``es`` (signed 12 bits), ``last``.
    o_q : Out(stream.Signature(down_out_fields))
        int16 ``i[q_lanes]``, ``es16``, ``sf_b``, ``R``, ``last`` on every beat; ``n_sat``,
        ``zero``, ``exp_ovf``, ``exp_unf``, ``blk_err``, ``meta`` on the last beat.
    cfg : In(DfpConfig)
        Configuration; round_mode is used (sampled on a block's first beat).
    stats_clr : In(1)
        Zero the counters.
    stats : Out(stats_fields(DOWN_STATS))
        The counters.
    """

    def __init__(self, q_lanes=1, blk_max=64, in_w=32, bias_bits=1):
        check_block_params(self, q_lanes, blk_max)
        check_int(self, "in_w", in_w, *IN_W_RANGE)
        check_int(self, "bias_bits", bias_bits, *BIAS_BITS_RANGE)
        self.q_lanes = q_lanes
        self.blk_max = blk_max
        self.in_w = in_w
        self.bias_bits = bias_bits
        self.depth = blk_max // q_lanes
        super().__init__({
            "i_v": In(stream.Signature(struct_layout(down_in_fields(q_lanes, in_w)))),
            "o_q": Out(stream.Signature(struct_layout(down_out_fields(q_lanes)))),
            "cfg": In(struct_layout(CONFIG_FIELDS)),
            "stats_clr": In(1),
            "stats": Out(struct_layout(stats_fields(DOWN_STATS))),
        })

    def elaborate(self, platform):
        m = Module()
        q, in_w = self.q_lanes, self.in_w
        r_w = 6
        desc_layout = data.StructLayout({
            "es_max": signed(12),
            "R": r_w,
            "es16": signed(12),      # clamped field value
            "sf_b": 8,
            "rm": 2,
            "zero": 1,
            "ovf": 1,
            "unf": 1,
            "blk_err": 1,
        })
        stats = StatsCounters(m, self.stats, self.stats_clr)
        ip = self.i_v.payload
        o = self.o_q
        can_load = ~o.valid | o.ready

        def magnitude(v):
            return Mux(v[-1], -v, v)[:in_w]       # |-2^(in_w-1)| = 2^(in_w-1) fits

        # -- input register: magnitudes, signs and the beat's bit length, computed on entry --
        # (the bit length would otherwise sit in front of the running maximum, issue 9)
        beat_layout = data.StructLayout({"mag": data.ArrayLayout(in_w, q), "sign": q,
                                         "es": signed(12)})
        in_valid = Signal()
        in_beat = Signal(beat_layout)
        in_last = Signal()
        in_bl = Signal(range(in_w + 1))           # bitlen(max|v|) of the beat
        in_es15 = Signal(signed(13))              # es - 15
        in_rm = Signal(2)                         # round_mode as sampled with the beat
        mags_in = [magnitude(ip.v[k]) for k in range(q)]
        beat_or = mags_in[0]
        for mag in mags_in[1:]:
            beat_or = beat_or | mag
        beat_bl = bitlen(m, beat_or, "beat_bl")
        w_desc = Signal(desc_layout)
        buf = BlockBuffer(m, beat_layout.size, self.depth, desc_layout, w_valid=in_valid,
                          w_data=in_beat.as_value(), w_last=in_last, w_desc=w_desc,
                          r_ready=can_load)
        m.d.comb += self.i_v.ready.eq(~in_valid | buf.w_ready)
        with m.If(self.i_v.ready):
            m.d.sync += [
                in_valid.eq(self.i_v.valid),
                in_beat.mag.eq(Cat(*mags_in)),
                in_beat.sign.eq(Cat(*[ip.v[k][-1] for k in range(q)])),
                in_beat.es.eq(ip.es),
                in_last.eq(ip.last),
                in_bl.eq(beat_bl),
                in_es15.eq(ip.es - 15),
                in_rm.eq(self.cfg.round_mode),
            ]

        # -- pass 1: es_max and max(es + bitlen(max|v|)) - 15 on the fly -------------------
        # bitlen(tsh(x, d)) = max(0, bitlen(x) - d), so bitlen(max|v'|) = max(0, top - es_max)
        # with top = max(es + bitlen(max|v|)) over the block's beats: two running maxima
        accept = in_valid & buf.w_ready
        first = buf.w_first
        esmax_acc = Signal(signed(12))
        top_acc = Signal(signed(14))              # top - 15
        rm_reg = Signal(2)
        rm_eff = Mux(in_rm.all(), BIASED, in_rm)
        in_top = Signal(signed(14))
        m.d.comb += in_top.eq(in_es15 + in_bl)
        with m.If(accept):
            m.d.sync += [
                esmax_acc.eq(Mux(first | (in_beat.es > esmax_acc), in_beat.es, esmax_acc)),
                top_acc.eq(Mux(first | (in_top > top_acc), in_top, top_acc)),
                rm_reg.eq(Mux(first, rm_eff, rm_reg)),
            ]
        stats.set_cfg_err(accept & first & in_rm.all())

        # the descriptor, from the pass-1 registers once the block's last beat is in:
        # es16 = es_max + R = max(es_max, top - 15), zero when top <= es_max
        es16 = Signal(signed(14))
        m.d.comb += es16.eq(Mux((esmax_acc - top_acc)[-1], top_acc, esmax_acc))
        zero = Signal()                           # sign tests: no mixed-width compares
        m.d.comb += zero.eq(~(esmax_acc - top_acc - 15)[-1])
        ovf = ~zero & sgt_const(es16, ES16_MAX)
        unf = ~zero & slt_const(es16, ES16_MIN)
        m.d.comb += [
            w_desc.es_max.eq(esmax_acc),
            w_desc.R.eq((es16 - esmax_acc)[:r_w]),
            w_desc.es16.eq(Mux(sgt_const(es16, 2047), 2047, es16)),
            w_desc.sf_b.eq(Mux(ovf, 255, Mux(zero | unf, 0, (es16 + 141)[:8]))),
            w_desc.rm.eq(rm_reg),
            w_desc.zero.eq(zero),
            w_desc.ovf.eq(ovf),
            w_desc.unf.eq(unf),
            w_desc.blk_err.eq(buf.end_cut),
        ]

        # -- pass 2: align, round, saturate; four register stages (see ReadPipeline) -------
        pipe = ReadPipeline(m, buf, can_load)
        # stage 1: the block-buffer read data
        beat = data.View(beat_layout, pipe.stage("dd", beat=buf.r_data)["beat"])
        # stage 2: aligned v' = tsh(|v|, es_max - es); a shift of IN_W or more gives 0
        d = (pipe.r_desc.es_max - beat.es)[:12]   # 0..4095
        st2 = pipe.stage("da", aligned=[beat.mag[k] >> d for k in range(q)],
                         sign=[beat.sign[k] for k in range(q)])
        # stages 3 and 4: the rounding shift by R, then the increment and the saturation
        kill = pipe.r_desc.ovf | pipe.r_desc.unf
        mags, sats, out_i = round_saturate(m, pipe, "d", st2["aligned"], [pipe.r_desc.R] * q,
                                           st2["sign"], [kill] * q, [C(0, 1)] * q,
                                           self.bias_bits, in_w - 15)
        desc = pipe.r_desc

        register_output(m, o, pipe, can_load, out_i, mags, sats, desc.ovf, lambda last, bl: [
            o.payload.es16.eq(desc.es16),
            o.payload.R.eq(desc.R),
            o.payload.exp_ovf.eq(last & desc.ovf),
            o.payload.exp_unf.eq(last & desc.unf),
        ])

        done = o.valid & o.ready & o.payload.last
        stats.add("dc_blocks", 1, done)
        stats.add("dc_sat", o.payload.n_sat, done)
        stats.add("dc_exp_ovf", o.payload.exp_ovf, done)
        stats.add("dc_exp_unf", o.payload.exp_unf, done)
        return m
