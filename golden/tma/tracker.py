"""Completion tracker: tag table for tracked L2 requests (spec tma.md §2.2 Tracker; TMA-F27..F29,
TMA-C6, §4.11 tag reuse and outstanding counter).

Every READ, WRITE and RED request takes a free tag; the entry keeps the request's placement
(where the returned bytes go, or for stores just the owning command). ``l2_resp`` beats come back in
any order and are matched by tag. A tag is not reissued before its response has been accepted;
with no free entry, generation stalls (:meth:`Tracker.full`). PREFETCH requests take no tag.

The golden allocation policy is "lowest free tag"; the hardware may choose differently (TMA-V6
compares requests without their tags, and only asks that outstanding tags be distinct).
"""

import heapq
from dataclasses import dataclass

__all__ = ["Placement", "Tracker", "TrackerError"]


class TrackerError(RuntimeError):
    """A protocol violation: a response with a tag that is not outstanding, or an issue while full."""


@dataclass(frozen=True)
class Placement:
    """What a tracker entry remembers (TMA-F28).

    ``seq``       the owning command (its acceptance index);
    ``kind``      the L2Op of the request (READ needs placement, WRITE/RED only an acknowledgement);
    ``dense``, ``lane``, ``nbytes``  the piece: line lanes ``[lane, lane+nbytes)`` go to dense offset
                  ``dense`` of the box;
    ``smem_addr`` the destination base (CTA-relative); ``swizzle`` the Swizzle code;
    ``mask``      destination CTAs; ``mbar_addr`` the barrier credited with the bytes.
    """
    seq: int
    kind: int
    dense: int = 0
    lane: int = 0
    nbytes: int = 0
    smem_addr: int = 0
    swizzle: int = 0
    mask: int = 0
    mbar_addr: int = 0


class Tracker:
    """``entries`` tags (TRK_ENTRIES) and the outstanding counter."""

    def __init__(self, entries):
        self.entries = entries
        self._free = list(range(entries))
        heapq.heapify(self._free)
        self._table = {}
        self.issued = 0
        self.responded = 0
        self.max_outstanding = 0

    @property
    def outstanding(self):
        """Tracked requests issued and not yet answered (TMA-F29)."""
        return len(self._table)

    @property
    def full(self):
        return not self._free

    def issue(self, placement):
        """Allocate the lowest free tag for a tracked request; TrackerError when none is free."""
        if not self._free:
            raise TrackerError("no free tracker entry: generation must stall (TMA-F27)")
        tag = heapq.heappop(self._free)
        self._table[tag] = placement
        self.issued += 1
        self.max_outstanding = max(self.max_outstanding, len(self._table))
        return tag

    def respond(self, tag):
        """Accept the ``l2_resp`` of ``tag``: its placement; the tag becomes free again."""
        try:
            placement = self._table.pop(tag)
        except KeyError:
            raise TrackerError(f"response with tag {tag}, which is not outstanding") from None
        heapq.heappush(self._free, tag)
        self.responded += 1
        return placement

    def outstanding_tags(self):
        """Outstanding tags, oldest issue first."""
        return list(self._table)

    def placement(self, tag):
        return self._table[tag]
