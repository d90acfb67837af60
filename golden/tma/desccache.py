"""Descriptor cache with look-ahead (spec tma.md §4.12; TMA-F4..F8, TMA-C5, TMA-V15; seed ¶87).

Fully associative, DC_ENTRIES entries ``(valid, tag = desc_addr >> 7, data, lru_stamp)``.

- Cache users are the tensor ops that pass rules 0x01-0x04 (:func:`golden.tma.validate.is_cache_user`);
  each looks its tag up once in setup (:meth:`DescCache.lookup`), also when a later rule rejects it.
  Nothing else makes a lookup, read, install or LRU update.
- A miss reads the 128-byte line once (one ``desc_rd``) and installs it in an invalid entry, else in
  the least recently used entry not held by the command in setup.
- Look-ahead (:meth:`DescCache.lookahead`): while the head command is being processed, the next
  queued cache user whose line is not cached is fetched and installed (one ``desc_rd``); a look-ahead
  of a cached line does nothing (no LRU refresh). No look-ahead while DESC_INVAL is at the head.
- A use (setup lookup, look-ahead install) refreshes the entry's stamp. DESC_INVAL clears all valid
  bits.

Transaction-level equivalence: a look-ahead install of command k+1 happens after command k's lookup
and, for the LRU order, acts exactly like k+1's own lookup one step early (k's entry, just refreshed,
is never the LRU victim since DC_ENTRIES >= 2). So the sequence of reads and installs does not
depend on whether the look-ahead found k+1 in the queue in time; only its timing does (TMA-F6).

:func:`golden_desc_reads` is the §4.12 golden ``desc_rd`` count (exact, or bounds).
"""

from dataclasses import dataclass

from golden.tma.formats import LINE, CmdOp
from golden.tma.validate import is_cache_user, precheck

__all__ = ["DescCache", "DescRead", "golden_desc_reads"]


@dataclass(frozen=True)
class DescRead:
    """One ``desc_rd_req``: line address ``addr``; ``lookahead`` when issued for the next queued
    command rather than by a setup lookup; ``seq`` the acceptance index of the command it serves."""
    addr: int
    lookahead: bool
    seq: int


class _Entry:
    __slots__ = ("valid", "tag", "data", "stamp")

    def __init__(self):
        self.valid, self.tag, self.data, self.stamp = False, 0, None, 0


class DescCache:
    """``entries`` descriptor lines; ``fetch(addr)`` returns the 128 bytes of line ``addr``."""

    def __init__(self, entries, fetch):
        if not isinstance(entries, int) or entries < 2:
            raise ValueError(f"DC_ENTRIES must be an integer >= 2, got {entries!r}")
        self.entries = [_Entry() for _ in range(entries)]
        self.fetch = fetch
        self.reads = []
        self._clock = 0

    def _find(self, tag):
        for i, e in enumerate(self.entries):
            if e.valid and e.tag == tag:
                return i
        return None

    def _use(self, i):
        self._clock += 1
        self.entries[i].stamp = self._clock

    def _install(self, tag, seq, lookahead, held):
        addr = tag * LINE
        data = bytes(self.fetch(addr))
        self.reads.append(DescRead(addr, lookahead, seq))
        invalid = [i for i, e in enumerate(self.entries) if not e.valid]
        if invalid:
            i = invalid[0]
        else:
            candidates = [i for i, e in enumerate(self.entries) if e.tag != held]
            i = min(candidates, key=lambda j: self.entries[j].stamp)
        e = self.entries[i]
        e.valid, e.tag, e.data = True, tag, data
        self._use(i)
        return i

    def contains(self, addr):
        return self._find(addr // LINE) is not None

    def lookup(self, addr, seq=0):
        """Setup lookup of descriptor ``addr`` (128 B aligned): ``(data, hit)``."""
        tag = addr // LINE
        i = self._find(tag)
        if i is not None:
            self._use(i)
            return self.entries[i].data, True
        i = self._install(tag, seq, False, None)
        return self.entries[i].data, False

    def lookahead(self, addr, held_addr=None, seq=0):
        """Look-ahead for the next queued command: fetch and install ``addr`` unless cached,
        never evicting ``held_addr`` (the line of the command in setup). True if a read was made."""
        tag = addr // LINE
        if self._find(tag) is not None:
            return False
        self._install(tag, seq, True, None if held_addr is None else held_addr // LINE)
        return True

    def invalidate(self):
        """DESC_INVAL (TMA-F8)."""
        for e in self.entries:
            e.valid = False

    def lines(self):
        """Cached line addresses, least recently used first."""
        return [e.tag * LINE for e in sorted(self.entries, key=lambda e: e.stamp) if e.valid]


def golden_desc_reads(cmds, dc_entries):
    """§4.12 golden ``desc_rd`` count of a command stream: ``(low, high)``.

    Epochs are split at each accepted DESC_INVAL (one with ``mcast = 1`` is rejected by rule 0x02
    and invalidates nothing). When every epoch has at most ``dc_entries`` distinct lines among
    its cache users the count is exact (``low == high`` = the sum of distinct lines); otherwise only
    ``low`` (that sum) <= count <= ``high`` (the number of cache users) is known."""
    epochs = [[]]
    for cmd in cmds:
        if cmd.op == CmdOp.DESC_INVAL and precheck(cmd) == 0:      # a rejected one invalidates nothing
            epochs.append([])
        elif is_cache_user(cmd):
            epochs[-1].append(cmd.desc_addr // LINE)
    distinct = [len(set(e)) for e in epochs]
    low = sum(distinct)
    if all(n <= dc_entries for n in distinct):
        return low, low
    return low, sum(len(e) for e in epochs)
