"""DFP32 -> DFP16 block down-converter (spec dfp.md §4.10, Fig 16A 1630 / 16B 1660)."""

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.dfp.formats import (BIAS_BITS_RANGE, BIASED, CONFIG_FIELDS, DOWN_STATS, IN_W_RANGE,
                                down_in_fields, down_out_fields, stats_fields)
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.dfp.blockbuf import BlockBuffer, check_block_params, register_output
from hw.dfp.round import (bitlen, gt_const, is_zero, rshift_round,
                          sgt_const, slt_const)
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

    Pass 1 needs only bitlen(max|v'|) and es_max, and keeps both on the fly while the block is
    written into a :class:`hw.dfp.blockbuf.BlockBuffer`: per beat, bitlen of the OR of the
    lanes' magnitudes; when es_max rises by d the running bit length drops by d (truncating
    shifts compose, tsh(tsh(x, a), b) = tsh(x, a + b), and commute with max), and a beat below
    es_max by d contributes its bit length minus d. Pass 2 reads the block back, aligns each
    element (a shift of |v| clamped at IN_W), rounds it by R and saturates.

    Blocks end at ``last`` or after BLK_MAX elements with blk_err (DFP-E7). The last beat
    carries n_sat, zero, exp_ovf, exp_unf, blk_err and the metadata record {sf_b, bl,
    inv = exp_ovf, zero, sat_any} (DFP-F47); they are 0 on other beats. es16, sf_b and R are on
    every beat. Buffering and timing are those of :class:`hw.dfp.quantizer.DfpQuantizer`.

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
        self.bl_w = ceil_log2(in_w + 1)
        super().__init__({
            "i_v": In(stream.Signature(struct_layout(down_in_fields(q_lanes, in_w)))),
            "o_q": Out(stream.Signature(struct_layout(down_out_fields(q_lanes)))),
            "cfg": In(struct_layout(CONFIG_FIELDS)),
            "stats_clr": In(1),
            "stats": Out(struct_layout(stats_fields(DOWN_STATS))),
        })

    def elaborate(self, platform):
        m = Module()
        q, in_w, bl_w = self.q_lanes, self.in_w, self.bl_w
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
        w_desc = Signal(desc_layout)
        buf = BlockBuffer(m, q * in_w + 12, self.depth, desc_layout, w_valid=self.i_v.valid,
                          w_data=Cat(ip.v.as_value(), ip.es), w_last=ip.last, w_desc=w_desc,
                          r_ready=can_load)
        m.d.comb += self.i_v.ready.eq(buf.w_ready)

        def magnitude(v):
            return Mux(v[-1], -v, v)[:in_w]       # |-2^(in_w-1)| = 2^(in_w-1) fits

        def sat_sub(a, d):
            """max(0, a - d) for a bit length ``a`` and an unsigned difference ``d``."""
            diff = a - d
            return Mux(diff[-1], 0, diff[:bl_w])

        # -- pass 1: es_max and bitlen(max|v'|) on the fly ---------------------------------
        accept = self.i_v.valid & buf.w_ready
        first = buf.w_first
        beat_or = magnitude(ip.v[0])
        for k in range(1, q):
            beat_or = beat_or | magnitude(ip.v[k])
        beat_bl = bitlen(m, beat_or, "beat_bl")
        es_b = ip.es
        esmax_acc = Signal(signed(12))
        bl_acc = Signal(bl_w)
        rm_reg = Signal(2)
        rm_cfg = self.cfg.round_mode
        rm_eff = Mux(rm_cfg.all(), BIASED, rm_cfg)
        rm_cur = Mux(first, rm_eff, rm_reg)
        rises = es_b > esmax_acc
        up_d = (es_b - esmax_acc)[:12]            # 0..4095 when es rises
        down_d = (esmax_acc - es_b)[:12]          # 0..4095 otherwise
        bl_kept = Signal(bl_w)                    # running bit length at the new es_max
        bl_beat = Signal(bl_w)                    # this beat's bit length at the new es_max
        m.d.comb += [
            bl_kept.eq(Mux(rises, sat_sub(bl_acc, up_d), bl_acc)),
            bl_beat.eq(Mux(rises, beat_bl, sat_sub(beat_bl, down_d))),
        ]
        esmax_new = Signal(signed(12))
        bl_new = Signal(bl_w)
        m.d.comb += [
            esmax_new.eq(Mux(first | rises, es_b, esmax_acc)),
            bl_new.eq(Mux(first | (bl_beat > bl_kept), Mux(first, beat_bl, bl_beat), bl_kept)),
        ]
        with m.If(accept):
            m.d.sync += [esmax_acc.eq(esmax_new), bl_acc.eq(bl_new), rm_reg.eq(rm_cur)]
        stats.set_cfg_err(accept & first & rm_cfg.all())

        big_r = Signal(bl_w)
        m.d.comb += big_r.eq(sat_sub(bl_new, 15))
        es16 = Signal(signed(13))
        m.d.comb += es16.eq(esmax_new + big_r)
        zero = is_zero(bl_new)
        ovf = ~zero & sgt_const(es16, ES16_MAX)
        unf = ~zero & slt_const(es16, ES16_MIN)
        m.d.comb += [
            w_desc.es_max.eq(esmax_new),
            w_desc.R.eq(big_r),
            w_desc.es16.eq(Mux(sgt_const(es16, 2047), 2047, es16)),
            w_desc.sf_b.eq(Mux(ovf, 255, Mux(zero | unf, 0, (es16 + 141)[:8]))),
            w_desc.rm.eq(rm_cur),
            w_desc.zero.eq(zero),
            w_desc.ovf.eq(ovf),
            w_desc.unf.eq(unf),
            w_desc.blk_err.eq(buf.w_cut),
        ]

        # -- pass 2: align, round, saturate -----------------------------------------------
        desc = buf.r_desc
        beat = data.View(data.StructLayout({
            "v": data.ArrayLayout(signed(in_w), q), "es": signed(12)}), buf.r_data)
        kill = desc.ovf | desc.unf
        d = (desc.es_max - beat.es)[:12]          # 0..4095
        d_cl = Mux(gt_const(d, in_w), in_w, d)[:ceil_log2(in_w + 1)]
        s_max = in_w - 15
        mags, sats, out_i = [], [], []
        for k in range(q):
            v = beat.v[k]
            aligned = magnitude(v) >> d_cl
            rounded = rshift_round(m, aligned, desc.R, desc.rm, self.bias_bits, s_max, f"rnd{k}")
            sat = ~kill & rounded[15:].any()      # only 32768 can exceed 32767
            mag = Signal(15, name=f"mag{k}")
            m.d.comb += mag.eq(Mux(kill, 0, Mux(sat, 32767, rounded[:15])))
            mags.append(mag)
            sats.append(sat)
            out_i.append(Mux(v[-1], -mag, mag))

        register_output(m, o, buf, can_load, out_i, mags, sats, desc.ovf, lambda last, bl: [
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
