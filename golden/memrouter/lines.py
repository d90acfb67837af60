"""Migration-cache lines (spec §4.5-§4.6, MR-F12..F18): page-sized lines with per-sector valid,
dirty and pending bits, lock/nomig/mod flags, a saturating access counter and true LRU order."""

from collections import deque

__all__ = ["Line", "LineSet"]


class Line:
    """One page-sized line. Sector sets are int bit masks (bit s = sector s)."""

    def __init__(self, idx, ns):
        self.idx, self.ns = idx, ns
        self.clear()

    def clear(self):
        self.tv = False
        self.tag = 0
        self.lock = self.nomig = self.mod = False
        self.cnt = 0
        self.valid = self.dirty = self.pending = 0
        self.data = [0] * self.ns
        self.waiters = {}                        # sector -> deque of waiters, acceptance order
        self.acks = 0                            # write-out acknowledgements outstanding

    def reset_for(self, p):
        self.clear()
        self.tv = True
        self.tag = p

    @property
    def full(self):
        return self.valid == (1 << self.ns) - 1

    def vcount(self):
        return self.valid.bit_count()

    def wait(self, s, waiter):
        self.waiters.setdefault(s, deque()).append(waiter)

    def status(self):
        """LINE_STATUS: [0] tag valid, [1] lock, [2] nomig, [15:4] valid count, [31:16] ppn."""
        if not self.tv:
            return 0
        return (1 | self.lock << 1 | self.nomig << 2 | (self.vcount() & 0xFFF) << 4
                | (self.tag & 0xFFFF) << 16)


class LineSet:
    """NUM_LINES lines, the tag lookup and the LRU order (MR-F15, MR-F16)."""

    def __init__(self, n, ns):
        self.lines = [Line(i, ns) for i in range(n)]
        self.lru = list(range(n))                # LRU first, MRU last

    def __iter__(self):
        return iter(self.lines)

    def __getitem__(self, i):
        return self.lines[i]

    def of(self, p):
        for line in self.lines:
            if line.tv and line.tag == p:
                return line
        return None

    def touch(self, line):
        self.lru.remove(line.idx)
        self.lru.append(line.idx)

    def victim(self):
        """The allocation victim (MR-F16): the lowest-index free line, else the LRU line that is
        unlocked and (our reading, docs §ambiguities) has no fill in flight; None = wait."""
        for line in self.lines:
            if not line.tv:
                return line
        for i in self.lru:
            line = self.lines[i]
            if not line.lock and not line.pending:
                return line
        return None
