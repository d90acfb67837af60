"""EntryPool and LinkedQueues golden (spec §2 "Entry pool", §4.2, TQ-F7..F11).

The pool is POOL slots of one payload RAM. Tracking queues, checked queues and the status queue
are linked lists of slot pointers over it: per list a head, a tail and a count, and a next-pointer
RAM indexed by slot. These are the seed's three storage tables [seed ¶29]: payload (the pool),
TQ links (TQs and the status queue, which no TQ entry shares) and CQ links.

Reclaim (TQ-F9, TQ-F10):

- in-order: slots are allocated at ``alloc_ptr`` and reclaimed at ``reclaim_ptr``, circularly; at
  the end of a cycle the oldest slot is reclaimed if it has been released (at most one per cycle);
- free-list: a released slot goes back to a FIFO of free slots and is free from the next cycle.

The policy changes only in a cycle that starts with the pool empty (TQ-F11). Slot numbers are not
observable at the block's ports; the free list is a FIFO initialised to 0..POOL−1 (rotated to
start at ``alloc_ptr`` when the policy switches to free-list).
"""

from collections import deque

from golden.trackq.formats import FREELIST, INORDER

__all__ = ["Entry", "EntryPool", "LinkedLists"]


class Entry:
    """One tracked packet: the request fields (cls after the TQ-E1 rewrite), and the per-slot
    state of §4.2 (seq, q, term, upartial, committed, released, tsnap) plus its source, slot and
    current location (``'TQ' 'CQ' 'SQ' 'CF' 'FF' 'OUT'``)."""

    __slots__ = ("index", "id", "warp", "cls", "dslot", "need", "eoi", "eog", "is_status",
                 "fast_path", "src", "seq", "q", "term", "upartial", "committed", "released",
                 "tsnap", "slot", "loc", "accept")

    def __init__(self, index, req, cls, accept):
        self.index = index          # acceptance order over all entries
        self.id = req.id
        self.warp = req.warp
        self.cls = cls
        self.dslot = req.dslot
        self.need = req.need
        self.eoi = req.eoi
        self.eog = req.eog
        self.is_status = req.is_status
        self.fast_path = req.fast_path
        self.src = None
        self.seq = None
        self.q = 0
        self.term = 0
        self.upartial = 0
        self.committed = 0
        self.released = 0
        self.tsnap = None
        self.slot = None
        self.loc = None
        self.accept = accept

    def __repr__(self):
        return (f"Entry(#{self.index} id={self.id} w={self.warp} cls={self.cls} src={self.src} "
                f"q={self.q} seq={self.seq} eoi={self.eoi} eog={self.eog} term={self.term} "
                f"loc={self.loc})")


class EntryPool:
    """POOL slots with in-order or free-list reclaim. ``used`` is pool_used (TQ-I9)."""

    def __init__(self, size):
        self.size = size
        self.payload = [None] * size
        self.policy = INORDER
        self.alloc_ptr = 0
        self.reclaim_ptr = 0
        self.free = deque()
        self.used = 0

    def set_policy(self, policy):
        """Load the effective policy; legal only with the pool empty (TQ-F11)."""
        if self.used:
            raise AssertionError("reclaim policy changed with slots in use")
        if policy == self.policy:
            return
        self.policy = policy
        if policy == FREELIST:
            self.free = deque((self.alloc_ptr + k) % self.size for k in range(self.size))
        else:
            self.free = deque()
            self.reclaim_ptr = self.alloc_ptr

    def alloc(self, entry):
        """Give ``entry`` a slot (the caller checked used < POOL)."""
        if self.used >= self.size:
            raise AssertionError("allocation from a full pool")
        if self.policy == INORDER:
            slot = self.alloc_ptr
            self.alloc_ptr = (slot + 1) % self.size
        else:
            slot = self.free.popleft()
        if self.payload[slot] is not None:
            raise AssertionError(f"slot {slot} allocated twice")
        self.payload[slot] = entry
        entry.slot = slot
        self.used += 1
        return slot

    def release(self, entry):
        """``entry`` was delivered on resp this cycle (TQ-F7)."""
        entry.released = 1
        if self.policy == FREELIST:
            self.payload[entry.slot] = None
            self.free.append(entry.slot)
            self.used -= 1

    def oldest(self):
        """The oldest allocated entry under in-order reclaim, or None."""
        return self.payload[self.reclaim_ptr] if self.used else None

    def reclaim(self):
        """End of cycle, in-order policy: reclaim the oldest slot if released (TQ-F9)."""
        if self.policy != INORDER or not self.used:
            return None
        entry = self.payload[self.reclaim_ptr]
        if not entry.released:
            return None
        self.payload[self.reclaim_ptr] = None
        self.reclaim_ptr = (self.reclaim_ptr + 1) % self.size
        self.used -= 1
        return entry


class LinkedLists:
    """``n`` linked lists of slot pointers sharing one next-pointer RAM of ``size`` words."""

    def __init__(self, n, size):
        self.head = [None] * n
        self.tail = [None] * n
        self.count = [0] * n
        self.nxt = [None] * size

    def push(self, k, slot):
        self.nxt[slot] = None
        if self.count[k]:
            self.nxt[self.tail[k]] = slot
        else:
            self.head[k] = slot
        self.tail[k] = slot
        self.count[k] += 1

    def pop(self, k):
        slot = self.head[k]
        if slot is None:
            raise AssertionError(f"pop from empty list {k}")
        self.count[k] -= 1
        self.head[k] = self.nxt[slot] if self.count[k] else None
        if not self.count[k]:
            self.tail[k] = None
        self.nxt[slot] = None
        return slot

    def first(self, k):
        return self.head[k]

    def second(self, k):
        """The slot after the head (the successor promoted when the head pops), or None."""
        return self.nxt[self.head[k]] if self.count[k] >= 2 else None

    def slots(self, k):
        out = []
        slot = self.head[k]
        for _ in range(self.count[k]):
            out.append(slot)
            slot = self.nxt[slot]
        return out
