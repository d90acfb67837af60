"""IEEE 754 binary floating-point addition for any (exponent, fraction) width, with optional
flush-to-zero and a configurable NaN result, and the sign-aware float min/max select.

Used by the TMA memory-side reduction unit (spec tma.md §4.9: F32 add with FTZ, F16 and BF16 add
with subnormals); the golden reference is ``golden.tma.reduce.float_add`` / ``float_minmax``.
"""

from amaranth import C, Cat, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from hw.common.lintops import ge_const_bits, is_zero, lt, shift_left, wire as _wire
from hw.common.lzc import LeadingZeroCount
from hw.common.params import check_int, reject

__all__ = ["FloatAdder", "float_key", "shift_right_sticky"]


def shift_right_sticky(m, value, amount, name):
    """``value >> amount`` with every bit shifted out ORed into bit 0 (sticky), as one 2:1
    multiplexer level per bit of ``amount``; shifts past the end leave only the sticky bit.

    The sticky bit is decoded beside the shifter, not after it: value bit i is shifted out when
    amount > i, a decode of ``amount`` alone in AND/OR terms (no carry chain), so the sticky OR
    has the depth of the shifter instead of adding to it (it enters the following adder's carry
    chain at the bottom). A mask built as ``(1 << amount) - 1`` put a carry chain in front of
    the DFP FP32 accumulator's adder and cost 15 MHz on ECP5 (101 -> 86 MHz)."""
    w = len(value)
    cur = value
    for k in range(len(amount)):
        s = 1 << k
        shifted = Cat(cur[s:], C(0, s)) if s < w else C(0, w)
        cur = _wire(m, f"{name}{k}", Mux(amount[k], shifted, cur))
    limit = min(w, 1 << len(amount))
    lost = Cat(*[value[i] & ge_const_bits(amount, i + 1) for i in range(limit)])
    sticky = _wire(m, f"{name}_sticky", lost.any())
    return Cat(cur[0] | sticky, cur[1:])


def float_key(x):
    """Unsigned key whose order is the order of the (non-NaN) sign-magnitude values ``x``,
    with -0 < +0: negative values complemented, positive ones with the sign bit set."""
    x = Value.cast(x)
    top = len(x) - 1
    return Mux(x[top], ~x, Cat(x[:top], C(1, 1)))


class FloatAdder(wiring.Component):
    """IEEE 754 addition ``s = a + b`` of binary floats with ``ew`` exponent and ``fw`` fraction
    bits, round to nearest, ties to even.

    - Subnormal inputs are added by their exact value and subnormal results kept; with ``ftz``,
      inputs whose exponent field is 0 count as zeros of their sign and a result whose exponent
      field is 0 keeps only its sign (PTX ``add.ftz``).
    - An exact zero sum is +0, except (-0) + (-0) = -0.
    - Overflow gives the infinity of the sum's sign; inf + finite gives that inf.
    - A NaN operand, or inf + (-inf), gives the constant ``nan``.

    Datapath (single path), in two segments:

    1. flush (``ftz``), order the operands by magnitude (one compare of the ``ew + fw``-bit
       magnitudes), align the smaller significand by the exponent difference with guard, round
       and sticky bits, and add or subtract (``fw + 5`` bits with the carry); NaN/inf flags;
    2. normalize: a carry shifts right by one (sticky kept); otherwise a left shift by the
       leading-zero count, limited to ``exponent - 1`` so that a result below the normal range
       comes out subnormal (such a result is exact, because every operand is a multiple of the
       smallest subnormal); round to nearest even on the guard/round/sticky bits as one
       increment of {exponent, fraction} (a carry out of the fraction bumps the exponent and
       the all-ones exponent means overflow); special-case multiplexers.

    Three extra bits suffice: an effective subtraction with exponent difference >= 2 cancels at
    most one leading bit, and with a difference <= 1 nothing is shifted out.

    ``stages`` = 1 puts a register between the two segments (latency 1, one addition per cycle,
    no enable: the register follows its inputs every cycle); 0 is combinational.

    Parameters
    ----------
    ew, fw : int
        Exponent bits 2..15, fraction bits 1..112.
    nan : int
        The result pattern of a NaN (``1 + ew + fw`` bits).
    ftz : bool
        Flush subnormal inputs and results to signed zero.
    stages : int
        0 or 1 register stages.

    Members
    -------
    a, b : In(1 + ew + fw)
        Operands.
    s : Out(1 + ew + fw)
        The sum of the operands presented ``stages`` cycles earlier.
    """

    def __init__(self, ew, fw, nan, ftz=False, stages=0):
        self.ew = check_int(self, "ew", ew, 2, 15)
        self.fw = check_int(self, "fw", fw, 1, 112)
        self.width = 1 + ew + fw
        self.nan = check_int(self, "nan", nan, 0, (1 << self.width) - 1)
        if not isinstance(ftz, bool):
            reject(self, f"ftz must be a bool, got {ftz!r}")
        self.ftz = ftz
        self.stages = check_int(self, "stages", stages, 0, 1)
        self.latency = stages
        super().__init__({"a": In(self.width), "b": In(self.width), "s": Out(self.width)})

    def elaborate(self, platform):
        m = Module()
        ew, fw, w = self.ew, self.fw, self.width
        p = fw + 1                              # significand bits
        ones = (1 << ew) - 1

        # -------------------------------------------------------------- segment 1
        def unpack(x, tag):
            e = x[fw:fw + ew]
            frac = x[:fw]
            e_zero = is_zero(e)
            if self.ftz:                        # flushed: a zero magnitude of the same sign
                mag = _wire(m, f"{tag}_mag", Mux(e_zero, 0, x[:w - 1]))
            else:
                mag = x[:w - 1]
            e_max = e.all()
            f_any = frac.any()
            return mag, e_max & f_any, e_max & ~f_any

        sa, sb = self.a[w - 1], self.b[w - 1]
        mag_a, nan_a, inf_a = unpack(self.a, "a")
        mag_b, nan_b, inf_b = unpack(self.b, "b")
        sub = sa ^ sb
        swap = lt(mag_a, mag_b)                                 # |a| < |b|: b is the big one
        big = _wire(m, "big", Mux(swap, mag_b, mag_a))
        small = _wire(m, "small", Mux(swap, mag_a, mag_b))
        sign_big = Mux(swap, sb, sa)
        e_big, e_small = big[fw:], small[fw:]
        h_big, h_small = e_big.any(), e_small.any()             # hidden bits
        eb = Cat(e_big[0] | ~h_big, e_big[1:])                  # max(e, 1): subnormal scale
        es = Cat(e_small[0] | ~h_small, e_small[1:])
        diff = (eb - es)[:ew]                                   # >= 0 since |big| >= |small|
        k = ceil_log2(p + 3)                                    # shifts >= p + 3 lose all bits
        if k < ew:
            amount = _wire(m, "amount", diff[:k] | diff[k:].any().replicate(k))
        else:
            amount = diff
        aligned = shift_right_sticky(m, Cat(C(0, 3), small[:fw], h_small), amount, "align")
        xb = Cat(C(0, 3), big[:fw], h_big)
        total = _wire(m, "total", Mux(sub, (xb - aligned)[:p + 4], xb + aligned))   # p + 4 bits

        is_nan = nan_a | nan_b | (inf_a & inf_b & sub)
        is_inf = inf_a | inf_b
        inf_sign = Mux(inf_a, sa, sb)

        def cut(name, value):
            value = Value.cast(value)
            if not self.stages:
                return value
            reg = Signal(value.shape(), name=name)
            m.d.sync += reg.eq(value)
            return reg

        c_total = cut("c_total", total)
        c_eb = cut("c_eb", eb)
        c_sign = cut("c_sign", sign_big)
        c_zsign = cut("c_zsign", sa & sb)
        c_nan = cut("c_nan", is_nan)
        c_inf = cut("c_inf", is_inf)
        c_isign = cut("c_isign", inf_sign)

        # -------------------------------------------------------------- segment 2
        carry = c_total[p + 3]
        low = c_total[:p + 3]                                   # [hidden][fraction][G][R][S]
        m.submodules.lzc = lzc = LeadingZeroCount(p + 3)
        m.d.comb += lzc.i.eq(low)
        cw = len(lzc.count)
        limit = (c_eb - 1)[:ew]                                 # the most a left shift may take
        clip = lt(limit, lzc.count)                             # result below the normal range
        if ew > cw:
            limit_low = limit[:cw]
            sh = _wire(m, "sh", Mux(clip, limit_low, lzc.count))
        else:
            sh = _wire(m, "sh", Mux(clip, Cat(limit, C(0, cw - ew)), lzc.count))
        norm = shift_left(m, low, sh, p + 3, name="norm")
        word = _wire(m, "word", Mux(carry, Cat(c_total[0] | c_total[1], c_total[2:p + 4]), norm))
        top = word[p + 2]
        e_res = Mux(carry, c_eb + 1, (c_eb - sh)[:ew + 1])
        frac = word[3:p + 2]
        up = word[2] & (word[1] | word[0] | frac[0])
        packed = (Cat(frac, Mux(top | carry, e_res, 0)) + up)[:fw + ew + 1]
        overflow = packed[fw + ew] | packed[fw:fw + ew].all()
        tiny = ~top & ~carry                                    # subnormal or zero (exact)
        zero = tiny & lzc.zero

        res = self.s
        with m.If(c_nan):
            m.d.comb += res.eq(self.nan)
        with m.Elif(c_inf):
            m.d.comb += res.eq(Cat(C(0, fw), C(ones, ew), c_isign))
        with m.Elif(overflow):
            m.d.comb += res.eq(Cat(C(0, fw), C(ones, ew), c_sign))
        with m.Elif(zero):
            m.d.comb += res.eq(Cat(C(0, w - 1), c_zsign))
        if self.ftz:
            with m.Elif(tiny):
                m.d.comb += res.eq(Cat(C(0, w - 1), c_sign))
        with m.Else():
            m.d.comb += res.eq(Cat(packed[:fw + ew], c_sign))
        return m
