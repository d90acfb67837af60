"""DFP16 -> FP32 dequantizer, LZD path (spec dfp.md §4.4, Fig 15B)."""

from amaranth import C, Cat, Module, Mux
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.dfp.formats import CANONICAL_NAN, Q_LANES_LEGAL, dequant_in_fields, dequant_out_fields
from hw.common.layout import struct_layout
from hw.common.lzc import LeadingZeroCount
from hw.common.params import reject
from hw.common.skid import SkidBuffer
from hw.dfp.round import is_zero

__all__ = ["DfpDequantizer"]


class DfpDequantizer(wiring.Component):
    """Element-wise DFP16 -> FP32 conversion by leading-zero detection (DFP-F16..F18).

    Per element: LZ = LZC16(|I|), E_x = sf_b - LZ + 1, and the word is the sign of I, E_x and
    ((|I| << LZ) & 0x7FFF) << 8 (the leading bit becomes implicit again). No rounding is
    needed: at most 15 significant bits fit the 24-bit significand. I = 0 gives +0.0, E_x <= 0
    a zero of I's sign (FTZ, DFP-F17), and sf_b = 255 gives 0x7FC00000 for every element
    (DFP-F18, DFP-E11). The result is bit-identical to to_fp32(I, sf_b - 141).

    Two stages, each ending in a :class:`hw.common.skid.SkidBuffer`: |I| and LZC16 (a negation
    and the count), then the exponent subtract, the mantissa shift and the special cases:
    latency 2 cycles, one beat per cycle sustained (DFP-P5: latency <= 4), ``i_q.ready`` a
    register output. In one stage the negation, count and subtract chained to 12.1 ns on ECP5
    (82.6 MHz).
    ``last`` passes through.

    Parameters
    ----------
    q_lanes : int
        Elements per beat (DFP-C3): 1, 2, 4, 8 or 16.

    Members
    -------
    i_q : In(stream.Signature(dequant_in_fields))
        int16 ``i[q_lanes]``, ``sf_b`` (read on every beat), ``last``.
    o_fp : Out(stream.Signature(dequant_out_fields))
        FP32 words ``w[q_lanes]`` and ``last``.
    """

    def __init__(self, q_lanes=1):
        if isinstance(q_lanes, bool) or q_lanes not in Q_LANES_LEGAL:
            reject(self, f"q_lanes must be one of {', '.join(map(str, Q_LANES_LEGAL))}, "
                         f"got {q_lanes!r}")
        self.q_lanes = q_lanes
        super().__init__({
            "i_q": In(stream.Signature(struct_layout(dequant_in_fields(q_lanes)))),
            "o_fp": Out(stream.Signature(struct_layout(dequant_out_fields(q_lanes)))),
        })

    def elaborate(self, platform):
        m = Module()
        q = self.q_lanes
        # stage A: |I| and its leading-zero count; stage B: exponent, mantissa and specials
        mid = data.StructLayout({"mag": data.ArrayLayout(16, q), "lz": data.ArrayLayout(5, q),
                                 "neg": q, "sf_b": 8, "last": 1})
        m.submodules.stage_a = stage_a = SkidBuffer(mid)
        m.submodules.skid = skid = SkidBuffer(struct_layout(dequant_out_fields(q)))
        ip, a = self.i_q.payload, stage_a.i.payload
        for k in range(q):
            m.submodules[f"lzc{k}"] = lzc = LeadingZeroCount(16)
            value = ip.i[k]
            neg = value[15]
            mag = Mux(neg, -value, value)[:16]           # 32768 only for the never-produced -32768
            m.d.comb += [lzc.i.eq(mag), a.mag[k].eq(mag), a.lz[k].eq(lzc.count), a.neg[k].eq(neg)]
        m.d.comb += [a.sf_b.eq(ip.sf_b), a.last.eq(ip.last),
                     stage_a.i.valid.eq(self.i_q.valid), self.i_q.ready.eq(stage_a.i.ready)]

        b = stage_a.o.payload
        invalid = b.sf_b.all()
        for k in range(q):
            mag, lz, neg = b.mag[k], b.lz[k], b.neg[k]
            diff = b.sf_b - lz                           # 9 bits, top bit = borrow (E_x <= 0)
            ex = (diff + 1)[:8]
            # ((|I| << LZ) & 0x7FFF) as a right shift (a Verilog left shift widens its result):
            # (|I|[14:0] << 15) >> (15 - LZ), LZ <= 15 for every non-zero |I|
            mant = (Cat(C(0, 15), mag[:15]) >> (15 - lz)[:4])[:15]
            word = Mux(invalid, CANONICAL_NAN,
                       Mux(is_zero(mag), 0,
                           Mux(diff[8], Cat(C(0, 31), neg),
                               Cat(C(0, 8), mant, ex, neg))))
            m.d.comb += skid.i.payload.w[k].eq(word)
        m.d.comb += [
            skid.i.payload.last.eq(b.last),
            skid.i.valid.eq(stage_a.o.valid),
            stage_a.o.ready.eq(skid.i.ready),
        ]
        wiring.connect(m, skid.o, wiring.flipped(self.o_fp))
        return m
