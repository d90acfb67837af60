"""One step of a restoring divider, for dividers that take one dividend bit per cycle.

Several steps can be chained in one cycle: the quotient bit of one divider is the next
divider's dividend bit, so ``n`` div ``(a·b)`` and its mixed-radix digits come out of a chain
that runs once over the dividend's bits (wdist's A9 delta decomposition, WD-F25).
"""

from amaranth import Cat, Mux

from hw.common.lintops import ge

__all__ = ["div_step"]


def div_step(rem, bit, divisor):
    """(quotient bit, next remainder) after shifting ``bit`` into the partial remainder ``rem``.

    ``rem`` < ``divisor`` holds before and after (restoring division); the next remainder has
    the width of ``rem``, which suffices when ``rem`` is as wide as the divisor or as the whole
    dividend, whichever is narrower.
    """
    shifted = Cat(bit, rem)
    q = ge(shifted, divisor)
    return q, Mux(q, shifted - divisor, shifted)[:len(rem)]
