"""Scoreboard: compares what a DUT produces with what the golden model expects.

Pure Python (no cocotb import), so its bookkeeping is tested without a simulator; testbenches
pass the cycle of each event (``Transfer.cycle``) for the messages.
"""

from collections import OrderedDict, deque

__all__ = ["Scoreboard", "ScoreboardError"]


class ScoreboardError(AssertionError):
    """Raised by :meth:`Scoreboard.check_done`; ``errors`` holds the individual messages."""

    def __init__(self, message, errors):
        super().__init__(message)
        self.errors = errors


class Scoreboard:
    """Expected items against observed items, ordered or matched by key.

    ``ordered=True``: each observed item is compared with the oldest outstanding expected one.
    ``ordered=False``: each observed item is matched with the oldest outstanding expected item
    of the same ``key(item)`` (for example the tag of an out-of-order response) and compared
    with it; an observed item whose key has nothing outstanding is *unexpected* (this is how a
    duplicate shows up). :meth:`check_done` raises if anything mismatched, was unexpected, or is
    still expected (lost or still in flight).

    Parameters
    ----------
    name : str
        Name in messages.
    ordered : bool
        In-order comparison (True) or match by key (False).
    key : callable, optional
        Item -> hashable key for unordered mode (default: the item itself).
    compare : callable, optional
        (expected, observed) -> bool (default ``==``).
    """

    def __init__(self, name, ordered=True, key=None, compare=None):
        self.name = name
        self.ordered = ordered
        self.key = key if key is not None else (lambda item: item)
        self.compare = compare if compare is not None else (lambda exp, obs: exp == obs)
        self._ordered = deque()                 # (item, cycle)
        self._by_key = OrderedDict()            # key -> deque of (item, cycle)
        self.expected = 0
        self.observed = 0
        self.matched = 0
        self.mismatches = []                    # (expected, observed, cycle)
        self.unexpected = []                    # (observed, cycle)
        self.reordered = 0                      # unordered mode: matches that overtook an older one
        self._seq = 0

    # -- feeding -------------------------------------------------------------------------------

    def expect(self, item, cycle=None):
        """Add an item the DUT must produce."""
        self.expected += 1
        entry = (item, cycle, self._seq)
        self._seq += 1
        if self.ordered:
            self._ordered.append(entry)
        else:
            self._by_key.setdefault(self.key(item), deque()).append(entry)

    def expect_all(self, items, cycle=None):
        for item in items:
            self.expect(item, cycle)

    def observe(self, item, cycle=None):
        """Record an item the DUT produced; returns True when it matched its expectation."""
        self.observed += 1
        if self.ordered:
            if not self._ordered:
                self.unexpected.append((item, cycle))
                return False
            expected, _, _ = self._ordered.popleft()
        else:
            key = self.key(item)
            queue = self._by_key.get(key)
            if not queue:
                self.unexpected.append((item, cycle))
                return False
            expected, _, seq = queue.popleft()
            if not queue:
                del self._by_key[key]
            if any(q[0][2] < seq for q in self._by_key.values()):
                self.reordered += 1
        if self.compare(expected, item):
            self.matched += 1
            return True
        self.mismatches.append((expected, item, cycle))
        return False

    # -- state ---------------------------------------------------------------------------------

    @property
    def pending(self):
        """Expected items not observed yet, oldest first, as (item, cycle_expected)."""
        if self.ordered:
            entries = list(self._ordered)
        else:
            entries = sorted((e for q in self._by_key.values() for e in q), key=lambda e: e[2])
        return [(item, cycle) for item, cycle, _ in entries]

    @property
    def ok(self):
        """No mismatch and nothing unexpected so far (items may still be pending)."""
        return not self.mismatches and not self.unexpected

    def errors(self, done=True):
        """Messages for every problem; with ``done`` the pending items count as lost."""
        def at(cycle):
            return "" if cycle is None else f" (cycle {cycle})"
        out = [f"mismatch{at(c)}: expected {e!r}, got {o!r}" for e, o, c in self.mismatches]
        out += [f"unexpected or duplicated{at(c)}: {o!r}" for o, c in self.unexpected]
        if done:
            out += [f"never observed (lost or in flight), expected{at(c)}: {i!r}"
                    for i, c in self.pending]
        return out

    def check(self):
        """Raise now if something mismatched or was unexpected (pending items are fine)."""
        self._raise(self.errors(done=False))

    def check_done(self):
        """End-of-test check: everything expected was observed exactly once and matched."""
        self._raise(self.errors(done=True))

    def _raise(self, errors):
        if errors:
            shown = "\n  ".join(errors[:20])
            more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
            raise ScoreboardError(
                f"scoreboard {self.name}: {len(errors)} problem(s) "
                f"(expected {self.expected}, observed {self.observed}, matched {self.matched}):"
                f"\n  {shown}{more}", errors)

    def summary(self):
        return (f"{self.name}: expected {self.expected}, observed {self.observed}, "
                f"matched {self.matched}, mismatched {len(self.mismatches)}, "
                f"unexpected {len(self.unexpected)}, pending {len(self.pending)}")
