"""One-hot to binary encoding: one OR reduction per output bit, no priority chain."""

from amaranth import Cat, Const, Signal
from amaranth.utils import ceil_log2

__all__ = ["onehot_to_binary"]


def onehot_to_binary(vector, m=None, name="bin"):
    """Index of the set bit of a one-hot (or zero) ``vector``, as a max(1, ⌈log2 n⌉)-bit value.

    Output bit b is the OR of every input bit whose index has bit b set, so the result is exact
    only for one-hot or zero inputs (zero gives 0); callers guarantee one-hot input. With a
    module ``m``, each output bit is a named signal of it, so that a wide ``vector`` is
    reduced once however often the index is used.
    """
    n = len(vector)
    bits = []
    for b in range(max(1, ceil_log2(n))):
        members = [vector[k] for k in range(n) if (k >> b) & 1]
        bit = Cat(*members).any() if members else Const(0, 1)
        if m is not None and members:
            named = Signal(name=f"{name}{b}")
            m.d.comb += named.eq(bit)
            bit = named
        bits.append(bit)
    return Cat(*bits)
