"""Leading-zero count: a log-depth tree of (all-zero, count) pairs (dfp LZC16 and LZC32)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2
from hw.common.params import check_int

__all__ = ["LeadingZeroCount"]


class LeadingZeroCount(wiring.Component):
    """Number of leading zeros of a word, counted from the most significant bit.

    ``count`` is the number of zero bits above the highest set bit of ``i``, 0..width-1, and
    ``width`` when ``i`` is 0; ``zero`` flags ``i == 0``. The part is purely combinational. The
    dfp block uses it as LZC16 (dequantizer, spec dfp §4.4) and LZC32 (headroom and down-conversion
    shift, spec dfp §4.10).

    The count comes from a binary tree. A node over a slice of the word gives two values: ``z``,
    the slice is all zero, and ``c``, the leading-zero count of the slice when it is not. A leaf
    (one bit b) has z = ~b and no count bits. A node splits its slice into an upper part of
    2**k bits, the largest power of two below the slice's size, and a lower part of the rest
    (1..2**k bits), and combines them with one AND and one 2:1 multiplexer::

        z = z_upper & z_lower
        c = z_upper ? 2**k + c_lower : c_upper        # 2**k + c_lower is a concatenation

    For a power-of-two width this is the classic halving tree; any other width behaves as the
    next power of two with the missing low bits tied to zero, without building logic for them.
    The tree is ceil_log2(width) levels deep (one AND/multiplexer stage per level), plus the final
    multiplexer that returns ``width`` for a zero word.

    Parameters
    ----------
    width : int
        Input width in bits, 1..256.

    Members
    -------
    i : In(width)
        Input word; bit ``width - 1`` is the most significant.
    count : Out(ceil_log2(width + 1))
        Leading zeros, 0..width (``width`` when ``i == 0``).
    zero : Out(1)
        1 when ``i == 0``.
    """

    MAX_WIDTH = 256

    def __init__(self, width):
        self.width = check_int(self, "width", width, 1, self.MAX_WIDTH)
        self.levels = ceil_log2(width)
        super().__init__({
            "i": In(width),
            "count": Out(ceil_log2(width + 1)),
            "zero": Out(1),
        })

    def elaborate(self, platform):
        m = Module()

        def node(lo, size, root=False):
            """(z, c) for bits lo .. lo+size-1; c is None for one bit, else ceil_log2(size) bits.

            Results are named signals, except the root's z, which drives ``zero`` directly (a
            named copy would be an unread alias of the port in the generated Verilog).
            """
            if size == 1:
                bit_zero = ~self.i[lo]
                if root:
                    return bit_zero, None
                z = Signal(name=f"z{lo}_{lo}")
                m.d.comb += z.eq(bit_zero)
                return z, None
            upper = 1 << (ceil_log2(size) - 1)            # 2**k, with upper < size <= 2 * upper
            k = ceil_log2(upper)
            z_hi, c_hi = node(lo + size - upper, upper)
            z_lo, c_lo = node(lo, size - upper)
            c_hi = C(0, 0) if c_hi is None else c_hi
            c_lo = C(0, 0) if c_lo is None else c_lo
            c_lo = Cat(c_lo, C(0, k - len(c_lo)))         # the lower part may be narrower
            label = f"{lo + size - 1}_{lo}"
            c = Signal(k + 1, name=f"c{label}")
            m.d.comb += c.eq(Mux(z_hi, Cat(c_lo, C(1, 1)), Cat(c_hi, C(0, 1))))
            if root:
                return z_hi & z_lo, c
            z = Signal(name=f"z{label}")
            m.d.comb += z.eq(z_hi & z_lo)
            return z, c

        zero, c = node(0, self.width, root=True)
        m.d.comb += self.zero.eq(zero)
        if c is None:                                      # width 1: count = 1 - i = zero
            m.d.comb += self.count.eq(self.zero)
        else:
            m.d.comb += self.count.eq(Mux(self.zero, self.width, c))
        return m
