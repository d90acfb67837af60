"""FP32 side of the DFP dot unit: DFP → FP32 converter (1954) and FP32 accumulator (1956).

Spec dfp.md §3.3 (DFP-F19, DFP-F20), §3.10 (DFP-E9), §4.5 (to_fp32) and §4.6 (fadd32). The
golden functions are ``golden.dfp.numerics.to_fp32`` and ``golden.dfp.numerics.fadd32``.

Both datapaths are written as a few combinational segments separated by pipeline cuts. A cut
is a register stage or a plain wire, chosen by the ``stages`` parameter, so one description
serves every latency; ``_CUTS`` lists which cuts are registered for each value of ``stages``.
"""

from amaranth import C, Cat, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.fparith import shift_right_sticky
from hw.common.lintops import ge_const_bits, wire as _wire
from hw.common.lzc import LeadingZeroCount
from hw.common.params import check_int

__all__ = ["DfpToFp32", "Fp32Adder", "Fp32Accumulator"]

QNAN = 0x7FC00000
_PRE = 4                   # DfpToFp32 shifts by multiples of 2^_PRE in its first segment
INF = 0x7F800000


class _Cuts:
    """Pipeline cuts of one datapath: ``cut(k, name, value)`` is a register named ``name`` when
    cut ``k`` is a register stage, else ``value`` itself.

    Comb values are never given a name: Amaranth would emit the name as a copy of the net that
    the consumers do not read (any slice or alias), and Verilator's lint flags it as unused.
    ``cut(k, port, value)`` with a Signal instead of a name drives that signal (an output port)
    directly, registered or not.
    """

    def __init__(self, m, registered):
        self.m = m
        self.registered = frozenset(registered)

    def valid(self, i_valid, o_valid):
        """Drive ``o_valid`` with ``i_valid`` delayed by one cycle per registered cut; the last
        register is ``o_valid`` itself."""
        for k in range(len(self.registered) - 1):
            nxt = Signal(name=f"valid{k + 1}")
            self.m.d.sync += nxt.eq(i_valid)
            i_valid = nxt
        domain = self.m.d.sync if self.registered else self.m.d.comb
        domain += o_valid.eq(i_valid)

    def cut(self, k, name, value):
        value = Value.cast(value)
        if isinstance(name, Signal):
            target = name
        elif k in self.registered:
            target = Signal(value.shape(), name=name)
        else:
            return value
        domain = self.m.d.sync if k in self.registered else self.m.d.comb
        domain += target.eq(value)
        return target


def _shift_left(m, value, amount, name, lo=0, scale=1):
    """``(value << amount * scale)[lo:len(value)]`` (``scale`` a power of two) as one 2:1
    multiplexer level per bit of ``amount`` (a plain ``<<`` by a signal widens the result,
    which Verilator's lint flags). Normalizers
    pass their word without its top bit: that bit only matters when the shift is 0, where it
    is the leading one, which FP32 leaves implicit. Bits below ``lo`` are not built in the
    last level (unread bits would fail lint)."""
    w = len(value)
    cur, off = value, 0                       # cur holds bits off .. w-1 of the current level
    for k in reversed(range(len(amount))):    # the largest step first: a leading-zero count
        s = scale << k                        # settles its most significant bit first
        need = max(0, lo - (s - 1))           # lower levels can still move bits up by s - 1
        if s >= w:
            shifted = C(0, w - need)
        else:
            src = max(need - s, 0)
            shifted = Cat(C(0, max(0, s - need)), cur[src - off:w - s - off])
        cur = _wire(m, f"{name}{k}", Mux(amount[k], shifted, cur[need - off:]))
        off = need
    return cur


def _below_one(v):
    """Signed ``v < 1`` in bit operations (a comparison with a constant lints badly)."""
    return v[-1] | ~v.any()


def _above_254(v):
    """Signed ``v > 254`` (``v`` at least 10 bits) in bit operations."""
    return ~v[-1] & (v[8:-1].any() | v[:8].all())


class DfpToFp32(wiring.Component):
    """DFP → FP32 converter 1954: ``fp32 = to_fp32(acc, es)`` (spec dfp §4.5, DFP-F19, DFP-E9).

    The exact value acc·2^es is rounded to nearest even on a 24-bit significand. A value whose
    exact unbiased exponent is below −126 becomes a zero of acc's sign (flush before rounding), a
    rounded exponent above 127 gives ±Inf, and acc = 0 gives +0.0. Every ``es`` of the signed
    12-bit range is handled (es ≥ 1024 and very negative es included): the exponent is computed
    in 14 bits and never wraps.

    Datapath, in three segments split by two cuts: (1) magnitude |acc| and, beside it (not
    after its carry chain), its leading-zero count LZ from the one's complement; cut A; (2) normalizing left shift (largest step first, so it overlaps the count),
    guard bit, sticky bit (decoded from LZ beside the shifter), biased exponent
    es + ACC_W + 126 − LZ, flush and overflow flags; cut B; (3) rounding: one 31-bit increment
    of {exponent, fraction}, whose carry out of the fraction bumps the exponent (and turns
    exponent 254 into the Inf code 255 with a zero fraction), then the flush/Inf/sign muxes.
    ``stages`` = 1 registers cut A, 2 registers A and B, 0 none. On an ECP5-85F, speed 6
    (nextpnr, registered inputs and outputs): about 63 / 104 / 121 MHz for stages 0 / 1 / 2 at
    ACC_W 32, and 95 / 113 MHz for stages 1 / 2 at ACC_W 48; 370..550 LUTs.

    The unit is fully pipelined: one conversion per cycle, no stall input, fixed latency.
    Data registers load every cycle; ``o_valid`` says which outputs are conversions. ``fp32``
    is combinational after the last register (segment 3, or 2 and 3 when ``stages`` = 1): fed
    straight into ``Fp32Accumulator.x``, whose first segment adds to it, ``stages`` = 2 gives
    about 91 MHz and ``stages`` = 1 about 68 MHz (ACC_W 32, fadd_cyc 3); a register between
    the two restores the figures of each unit alone.

    Parameters
    ----------
    acc_w : int
        Accumulator width ACC_W, 32..48.
    stages : int
        Register stages (the latency in cycles), 0..2; 0 is purely combinational.

    Members
    -------
    i_valid : In(1)
        ``acc`` and ``es`` hold a conversion this cycle.
    acc : In(signed(acc_w))
        Integer accumulator (any value, −2^(ACC_W−1) included).
    es : In(signed(12))
        Exponent of one accumulator LSB.
    o_valid : Out(1)
        ``i_valid`` delayed by ``latency`` cycles.
    fp32 : Out(32)
        The FP32 bit pattern of the conversion issued ``latency`` cycles earlier.
    """

    _CUTS = {0: (), 1: ("A",), 2: ("A", "B")}

    def __init__(self, acc_w=32, stages=1):
        self.acc_w = check_int(self, "acc_w", acc_w, 32, 48)
        self.stages = check_int(self, "stages", stages, 0, 2)
        self.latency = stages
        super().__init__({
            "i_valid": In(1),
            "acc": In(signed(acc_w)),
            "es": In(signed(12)),
            "o_valid": Out(1),
            "fp32": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        w = self.acc_w
        p = _Cuts(m, self._CUTS[self.stages])

        # (1) magnitude, leading zeros and the first normalizing shift steps. The count does
        # not wait for the negation's carry chain: it counts the one's complement ~acc =
        # |acc| - 1 of a negative acc. That count is one too large exactly when |acc| is a power
        # of two (acc is ones above zeros: no bit pair acc[i] = 1, acc[i+1] = 0, a wide AND
        # beside the count). Shifting by it is still right: it moves the lone leading one out of
        # the word and leaves the zero fraction, guard and sticky bits that a power of two has;
        # only the exponent needs the correction, added to es here, beside the count.
        m.submodules.lzc = lzc = LeadingZeroCount(w)
        acc = self.acc.as_unsigned()
        neg = acc[w - 1]
        # |acc| without its top bit, which is only ever the leading one (|acc| = 2^(w-1)) that
        # the normalized form leaves implicit.
        mag = _wire(m, "mag", Mux(neg, (-self.acc)[:w - 1], acc[:w - 1]))
        m.d.comb += lzc.i.eq(_wire(m, "ones", acc ^ neg.replicate(w)))
        pow2 = _wire(m, "pow2", neg & Cat(*[~acc[i] | acc[i + 1] for i in range(w - 1)]).all())
        # the shifts by 16 and 32 use the count's top bits, which the tree settles first
        pre = _shift_left(m, mag, lzc.count[_PRE:], "pre", scale=1 << _PRE)
        p.valid(self.i_valid, self.o_valid)
        a_neg = p.cut("A", "a_neg", neg)
        a_pre = p.cut("A", "a_pre", pre)
        a_lz = p.cut("A", "a_lz", lzc.count)
        a_zero = p.cut("A", "a_zero", ~neg & lzc.zero)
        # biased exponent before the count: es + w + 126 (+ 1 at a negative power of two)
        a_esk = p.cut("A", "a_esk", _wire(m, "esk", self.es + (w + 126) + pow2))

        # (2) finish the normalization (leading one to bit w-1), split into fraction / guard /
        # sticky, and the biased exponent eb = (es + n - 1) + 127 with n = w - lz significant
        # bits (14 bits signed: -2048 + 126 - 48 .. 2047 + 127 + 48, never wraps).
        eb = _wire(m, "eb", a_esk - a_lz)
        lz_lo = a_lz[:_PRE]
        norm = _shift_left(m, a_pre, lz_lo, "norm", lo=w - 25)   # bits w-25 .. w-2 of mag << lz
        guard = norm[0]
        # sticky = OR of norm[:w-25], computed beside the shifter: pre bit i lands below bit
        # w-25 exactly when i + lz_lo < w - 25.
        sticky = _wire(m, "sticky", Cat(*[a_pre[i] & ~ge_const_bits(lz_lo, w - 25 - i)
                                          for i in range(w - 25)]).any())
        b_neg = p.cut("B", "b_neg", a_neg)
        b_frac = p.cut("B", "b_frac", norm[1:])         # the leading one is implicit
        b_eb = p.cut("B", "b_eb", eb[:8])
        b_up = p.cut("B", "b_up", guard & (sticky | norm[1]))    # RNE round-up
        b_ftz = p.cut("B", "b_ftz", a_zero | _below_one(eb))   # acc = 0 or exponent < -126
        b_ovf = p.cut("B", "b_ovf", _above_254(eb))            # exponent > 127 before rounding

        # (3) round: the carry out of the fraction increments the exponent field.
        rounded = Cat(b_frac, b_eb) + b_up
        magnitude = Mux(b_ftz, 0, Mux(b_ovf, INF, rounded[:31]))
        m.d.comb += self.fp32.eq(Cat(magnitude, b_neg))
        return m


class Fp32Adder(wiring.Component):
    """FP32 adder: ``sum = fadd32(x, y)`` (spec dfp §4.6, DFP-F20, DFP-E9).

    IEEE 754 binary32 addition with round to nearest even, then: a result of magnitude below
    2^−126 becomes a zero with the sign of the exact sum; an exact zero sum is +0 unless both
    addends are −0; overflow gives ±Inf; Inf + (−Inf) and any NaN input give 0x7FC00000; an
    Inf input otherwise gives that Inf. Denormal inputs (which the dfp producers never emit) are
    added by their exact value, as the golden fadd32 does.

    The datapath is a classic two-path adder, in four segments split by three cuts:

    1. the operand of larger magnitude (a compare of the 31-bit magnitudes), the exponent
       difference d, the alignment shift (d clamped to 31) and the special cases; cut A;
    2. two paths side by side. Far path (an add, or d ≥ 2): right shift of the smaller
       significand with guard, round and sticky bits (sticky decoded beside the shifter) and
       the 28-bit add or subtract; the sum needs at most a one-bit normalization. Near path (a
       subtract with d ≤ 1): the exact 25-bit difference and its leading-zero count (massive
       cancellation happens only here, and needs no rounding unless nothing cancels); cut B;
    3. normalization: far, one of three placements of the sum; near, a left shift by the
       count; the path's fraction, exponent and round-up bit; cut C;
    4. a 31-bit rounding increment of {exponent, fraction} (a carry out of the fraction bumps
       the exponent, 254 + carry being the Inf code) and the NaN/Inf/flush/overflow muxes.

    The unit is fully pipelined (one add per cycle, no stall input, fixed latency); ``sum`` is
    combinational after the last register (segment 4).

    A sum below 2^−126 is a multiple of 2^−149 and exact, so flushing it after the exact
    normalization equals flushing the exact sum. ``stages`` = 1 registers cut B, 2 registers A
    and B, 3 registers A, B and C. On an ECP5-85F, speed 6 (nextpnr, registered inputs and
    outputs): about 43 / 63 / 100 / 106 MHz for stages 0 / 1 / 2 / 3; 840..1000 LUTs.

    Parameters
    ----------
    stages : int
        Register stages (the latency in cycles), 0..3; 0 is purely combinational.

    Members
    -------
    i_valid : In(1)
        ``x`` and ``y`` hold an addition this cycle.
    x, y : In(32)
        FP32 addends.
    o_valid : Out(1)
        ``i_valid`` delayed by ``latency`` cycles.
    sum : Out(32)
        The FP32 sum of the addition issued ``latency`` cycles earlier.
    """

    _CUTS = {0: (), 1: ("B",), 2: ("A", "B"), 3: ("A", "B", "C")}

    def __init__(self, stages=2):
        self.stages = check_int(self, "stages", stages, 0, 3)
        self.latency = stages
        super().__init__({
            "i_valid": In(1),
            "x": In(32),
            "y": In(32),
            "o_valid": Out(1),
            "sum": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        p = _Cuts(m, self._CUTS[self.stages])
        p.valid(self.i_valid, self.o_valid)
        _fadd32(m, p, self.x, self.y, self.sum)
        return m


def _fadd32(m, p, x, y, out):
    """The datapath of :class:`Fp32Adder`: drive ``out`` with fadd32(x, y), pipelined at the
    registered cuts of ``p``. Shared with :class:`Fp32Accumulator`, which keeps its own valid
    bits (a combinational adder's valid pass-through would lint as an unread alias)."""
    # (1) order by magnitude, exponent difference, special cases.
    def fields(v):
        e = v[23:31]
        return e, ~e.any(), e.all(), v[:23].any()

    ex, x_den, x_max, x_frac = fields(x)
    ey, y_den, y_max, y_frac = fields(y)
    exn = Cat(ex[0] | x_den, ex[1:])           # max(e, 1): a denormal's scale is 2^-126
    eyn = Cat(ey[0] | y_den, ey[1:])
    swap = Signal()
    m.d.comb += swap.eq(x[:31] < y[:31])       # |x| < |y|: y is the big operand
    big = _wire(m, "big", Mux(swap, y, x))
    small = _wire(m, "small", Mux(swap, x[:31], y[:31]))    # its sign is not needed
    x_inf, y_inf = x_max & ~x_frac, y_max & ~y_frac
    a_mb = p.cut("A", "a_mb", Cat(big[:23], big[23:31].any()))
    a_ms = p.cut("A", "a_ms", Cat(small[:23], small[23:31].any()))
    diff = _wire(m, "diff", Mux(swap, (eyn - exn)[:8], (exn - eyn)[:8]))     # d = eb - es >= 0
    a_shift = p.cut("A", "a_shift", _wire(m, "shift", diff[:5] | diff[5:].any().replicate(5)))
    a_near = p.cut("A", "a_near", (x[31] ^ y[31]) & ~diff[1:].any())    # subtract, d <= 1
    a_eb = p.cut("A", "a_eb", Mux(swap, eyn, exn))
    a_sign = p.cut("A", "a_sign", big[31])
    a_sub = p.cut("A", "a_sub", x[31] ^ y[31])
    a_nan = p.cut("A", "a_nan",
                  (x_max & x_frac) | (y_max & y_frac) | (x_inf & y_inf & (x[31] ^ y[31])))
    a_inf = p.cut("A", "a_inf", x_inf | y_inf)
    a_isign = p.cut("A", "a_isign", Mux(x_inf, x[31], y[31]))

    # (2) far path (an add, or exponents at least 2 apart): align the small significand with
    # guard, round and sticky bits (a shift >= 27 leaves only the sticky bit), and add. The sum
    # F has its leading one at bit 25, 26 or 27 (or lower for two denormals: a result below
    # 2^-126, whose exponent eb - 1 = 0 flushes it).
    aligned = shift_right_sticky(m, Cat(C(0, 3), a_ms), a_shift, "align")
    mbx = Cat(C(0, 3), a_mb)
    far = _wire(m, "far", Mux(a_sub, (mbx - aligned)[:28], (mbx + aligned)[:28]))
    # near path (a subtraction with exponents at most 1 apart): the exact difference in units
    # of half an ulp of the big operand, N = 2 Mb - Ms 2^(1-d) < 2^25, and its leading zeros.
    # Massive cancellation happens only here, and the far path never shifts left more than 1.
    ms_n = Mux(a_shift[0], Cat(a_ms, C(0, 1)), Cat(C(0, 1), a_ms))
    m.submodules.lzc = lzc = LeadingZeroCount(25)
    m.d.comb += lzc.i.eq(Cat(C(0, 1), a_mb) - ms_n)
    near = lzc.i
    b_near = p.cut("B", "b_near", a_near)
    b_far = p.cut("B", "b_far", far)
    b_n = p.cut("B", "b_n", near[:24])        # bit 24 is the leading one when lz = 0
    b_lz = p.cut("B", "b_lz", lzc.count)
    b_nzero = p.cut("B", "b_nzero", lzc.zero)
    b_eb = p.cut("B", "b_eb", a_eb)
    b_sign = p.cut("B", "b_sign", a_sign)
    b_nan = p.cut("B", "b_nan", a_nan)
    b_inf = p.cut("B", "b_inf", a_inf)
    b_isign = p.cut("B", "b_isign", a_isign)

    # (3) normalize. Far: one of three placements of F (exponent eb+1, eb, eb-1), with guard
    # and sticky. Near: N << lz (exponent eb - lz); only lz = 0 leaves a guard bit (sticky 0).
    f27, f26 = b_far[27], b_far[26]
    far_frac = Mux(f27, b_far[4:27], Mux(f26, b_far[3:26], b_far[2:25]))
    far_guard = Mux(f27, b_far[3], Mux(f26, b_far[2], b_far[1]))
    far_sticky = Mux(f27, b_far[:3].any(), Mux(f26, b_far[:2].any(), b_far[0]))
    far_up = far_guard & (far_sticky | far_frac[0])
    far_er = Mux(f27, b_eb + 1, Mux(f26, b_eb, b_eb - 1))
    shifted = _shift_left(m, b_n, b_lz, "norm")          # bits 0 .. 23 of N << lz
    near_er = b_eb - b_lz
    er = _wire(m, "er", Mux(b_near, near_er, far_er))
    zero = b_near & b_nzero                               # exact cancellation: +0
    c_frac = p.cut("C", "c_frac", _wire(m, "frac", Mux(b_near, shifted[1:24], far_frac)))
    c_er = p.cut("C", "c_er", er[:8])
    c_up = p.cut("C", "c_up", Mux(b_near, shifted[0] & shifted[1], far_up))
    c_flush = p.cut("C", "c_flush", _below_one(er) | zero)
    c_ovf = p.cut("C", "c_ovf", _above_254(er))
    c_sign = p.cut("C", "c_sign", b_sign & ~zero)
    c_nan = p.cut("C", "c_nan", b_nan)
    c_inf = p.cut("C", "c_inf", b_inf)
    c_isign = p.cut("C", "c_isign", b_isign)

    # (4) round (carry into the exponent; 254 + carry = the Inf code) and special cases.
    rounded = (Cat(c_frac, c_er) + c_up)[:31]
    with m.If(c_nan):
        m.d.comb += out.eq(QNAN)
    with m.Elif(c_inf):
        m.d.comb += out.eq(Cat(C(INF, 31), c_isign))
    with m.Elif(c_flush):
        m.d.comb += out.eq(Cat(C(0, 31), c_sign))
    with m.Elif(c_ovf):
        m.d.comb += out.eq(Cat(C(INF, 31), c_sign))
    with m.Else():
        m.d.comb += out.eq(Cat(rounded, c_sign))


class Fp32Accumulator(wiring.Component):
    """FP32 accumulator register 1956 of CHUNK mode: ``sum ← fadd32(sum, x)`` (spec dfp §4.6).

    An add issued in cycle c (``add_valid & ~busy``) computes fadd32(S, x), where S is +0.0 when
    ``clear`` or ``first`` is high in the same cycle and the current ``sum`` otherwise. The new sum shows on
    ``sum`` from cycle c + ``fadd_cyc`` on; ``busy`` is high in cycles c+1 .. c+fadd_cyc−1 (never
    when ``fadd_cyc`` = 1), and ``add_valid`` is ignored while it is high. ``clear`` in a cycle
    that issues no add (``add_valid`` low, or ignored because ``busy``) sets ``sum`` to +0.0
    from the next cycle and cancels the add in flight, if any: its result is dropped and
    ``busy`` falls in the next cycle (a clear always wins over older adds). The reset value of
    ``sum`` is +0.0. Note that fadd32(+0.0, −0.0) = +0.0.

    Built on the datapath of :class:`Fp32Adder` with ``fadd_cyc`` − 1 register stages (the cuts
    of ``Fp32Adder(stages=fadd_cyc - 1)``). ``sum`` is a register, so the loop
    sum → adder → sum is split into ``fadd_cyc`` register-to-register segments. At most one add
    is in flight, so the pipeline registers need no enables. ``first`` only selects the adder's
    operand (no effect without an issued add), so a caller can drive it from a register while
    its issue logic stays off the adder's first segment. On an ECP5-85F, speed 6: about
    95 MHz at ``fadd_cyc`` = 3 and 100 MHz at 4 (the loop includes the S multiplexer).

    Parameters
    ----------
    fadd_cyc : int
        Cycles per add (issue to visible result), 1..4.

    Members
    -------
    clear : In(1)
        Start from +0.0: with an add, the add uses S = +0.0; alone, sum becomes +0.0.
    first : In(1)
        With an issued add, the add uses S = +0.0; without one, no effect (a data select).
    add_valid : In(1)
        Add ``x`` to the sum (taken when ``busy`` is low).
    x : In(32)
        FP32 addend.
    busy : Out(1)
        An add is in flight; ``add_valid`` is ignored. An OR of register bits, no path from
        the inputs.
    sum : Out(32)
        The accumulated FP32 sum. A register output.
    """

    def __init__(self, fadd_cyc=3):
        self.fadd_cyc = check_int(self, "fadd_cyc", fadd_cyc, 1, 4)
        super().__init__({
            "clear": In(1),
            "first": In(1),
            "add_valid": In(1),
            "x": In(32),
            "busy": Out(1),
            "sum": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        lat = self.fadd_cyc - 1
        p = _Cuts(m, Fp32Adder._CUTS[lat])
        issue = self.add_valid & ~self.busy
        clear_only = self.clear & ~issue
        result = Signal(32)
        start = _wire(m, "start", Mux(self.clear | self.first, 0, self.sum))  # S of §4.6
        _fadd32(m, p, start, self.x, result)
        # live[k] is high in cycle c + 1 + k after an issue in cycle c, unless a clear came.
        if lat:
            live = Signal(lat)
            m.d.sync += live.eq(Mux(clear_only, 0, Cat(issue, live[:-1])))
            m.d.comb += self.busy.eq(live.any())
            write = live[-1]
        else:
            m.d.comb += self.busy.eq(0)
            write = issue
        with m.If(clear_only):
            m.d.sync += self.sum.eq(0)
        with m.Elif(write):
            m.d.sync += self.sum.eq(result)
        return m
