"""QueueMapper golden (spec §4.3, TQ-F1..F5): {cls, warp} -> tracking queue, per mode.

The mode and W (cfg_lgq) are the legalised values of the cycle (``params.legalise``, TQ-F6,
TQ-E7). cls 3 has already been turned into L/G (TQ-E1). The TTU round-robin keeps one pointer
``ttu_ptr`` (reset 0) shared by all modes; it is a wrap-around pointer, not a modulo counter.
"""

from golden.trackq.formats import TTU

__all__ = ["QueueMapper", "ttu_range"]


def ttu_range(mode, n_q, lgq):
    """The (lo, hi) queue range of the TTU round-robin in ``mode``, or None (mode 1)."""
    if mode == 1:
        return None
    if mode == 2:
        return 1, n_q - 1
    if mode == 3:
        return lgq, n_q - 1
    return 0, n_q - 1


class QueueMapper:
    """The mapper with its one register, ``ttu_ptr``."""

    def __init__(self, n_q):
        self.n_q = n_q
        self.ttu_ptr = 0

    def _ttu(self, lo, hi):
        q = self.ttu_ptr if lo <= self.ttu_ptr <= hi else lo
        self.ttu_ptr = q + 1 if q < hi else lo
        return q

    def map(self, cls, warp, mode, lgq):
        """Queue of one slow TQ packet; advances ``ttu_ptr`` for TTU in modes 2..4."""
        if mode == 1:
            return 0
        if cls != TTU:
            if mode == 2:
                return 0
            return warp % (lgq if mode == 3 else self.n_q)
        lo, hi = ttu_range(mode, self.n_q, lgq)
        return self._ttu(lo, hi)
