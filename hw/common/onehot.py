"""One-hot to binary encoder: one OR reduction per output bit, no priority chain."""

from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

__all__ = ["OneHotEncoder"]


class OneHotEncoder(wiring.Component):
    """Binary index of a one-hot vector.

    Output bit b is the OR of every input bit whose index has bit b set. The result is exact
    only for one-hot or zero inputs (zero gives 0); several set bits give their indices ORed,
    so callers guarantee one-hot input.

    Parameters
    ----------
    n : int
        Input width, >= 1.

    Members
    -------
    i : In(n)
        One-hot (or zero) input.
    o : Out(max(1, ceil_log2(n)))
        Index of the set bit.
    """

    def __init__(self, n):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"OneHotEncoder: n must be an integer >= 1, got {n!r}")
        self.n = n
        super().__init__({"i": In(n), "o": Out(max(1, ceil_log2(n)))})

    def elaborate(self, platform):
        m = Module()
        for b in range(len(self.o)):
            bits = [self.i[k] for k in range(self.n) if (k >> b) & 1]
            if bits:
                m.d.comb += self.o[b].eq(Cat(*bits).any())
        return m
