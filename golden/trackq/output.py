"""Fast FIFO, commit FIFO and output merge golden (spec §4.4 STEP 1 and STEP 7, TQ-F27,
TQ-F38, TQ-F41, TQ-F42, TQ-I5; §6 items 13 and 26).

``resp`` presents the commit-FIFO head if that head was presented and not taken in the previous
cycle (``hold_cf``); otherwise the fast-FIFO head, and if the fast FIFO is empty the commit-FIFO
head. A presented entry therefore stays on ``resp`` until it transfers.
"""

from collections import deque

__all__ = ["OutputMerge", "CF", "FF"]

CF, FF = "CF", "FF"


class OutputMerge:
    def __init__(self, fast_depth, commit_depth):
        self.fast_depth = fast_depth
        self.commit_depth = commit_depth
        self.ff = deque()          # fast FIFO: entries with tsnap
        self.cf = deque()          # commit FIFO
        self.hold_cf = False

    def select(self):
        """STEP 1: (entry, ``CF`` or ``FF``) presented on resp this cycle, or (None, None)."""
        if self.hold_cf:
            return self.cf[0], CF
        if self.ff:
            return self.ff[0], FF
        if self.cf:
            return self.cf[0], CF
        return None, None

    def ff_tsnap(self):
        """tsnap of the fast-FIFO head, None when the fast FIFO is empty (TQ-F39)."""
        return self.ff[0].tsnap if self.ff else None

    def push_fast(self, entry):
        if len(self.ff) >= self.fast_depth:
            raise AssertionError("fast FIFO overflow")
        self.ff.append(entry)

    def push_commit(self, entry):
        if len(self.cf) >= self.commit_depth:
            raise AssertionError("commit FIFO overflow")
        self.cf.append(entry)

    def clock(self, out, which, resp_ready):
        """STEP 7 (output part): the hold register and the transfer; returns the delivered entry
        or None."""
        self.hold_cf = which == CF and not resp_ready
        if out is None or not resp_ready:
            return None
        popped = (self.cf if which == CF else self.ff).popleft()
        if popped is not out:
            raise AssertionError("presented entry is not the FIFO head")
        return out
