"""Byte-lane helpers of the 128-byte TMA datapaths (line data, smem rows): a byte rotation and
a lane range mask, shared by the shared-memory writer and the store path."""

from amaranth import C, Cat, Mux, Signal

from golden.tma.formats import BE_W, DATA_W

__all__ = ["LANE_W", "gt_const", "rotate_left_bytes", "range_mask"]

LANE_W = 7                     # lane index 0..127


def gt_const(x, value):
    """``x > value`` for an unsigned ``x`` and a constant: the borrow of ``value - x``."""
    return (C(value, len(x)) - x)[len(x)]


def rotate_left_bytes(m, value, amount, name):
    """``value`` (1024 bits) rotated so that byte j moves to byte ``(j + amount) % 128``: one
    named 2:1 multiplexer level per bit of ``amount`` (7 bits)."""
    cur = value
    for bit in range(LANE_W):
        nxt = Signal(DATA_W, name=f"{name}{bit}")
        step = 8 << bit
        m.d.comb += nxt.eq(Mux(amount[bit], Cat(cur[DATA_W - step:], cur[:DATA_W - step]), cur))
        cur = nxt
    return cur


def range_mask(lo, hi):
    """Bit j of a 128-bit lane mask is ``lo <= j < hi``: a list of (j, value)."""
    return [(j, ~gt_const(lo, j) & gt_const(hi, j)) for j in range(BE_W)]
