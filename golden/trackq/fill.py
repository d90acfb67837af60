"""SectorValidTable and HeadTracker golden: check once, then wake on fills (spec §2 item 3,
§4.4 STEP 3-4, TQ-F12..F18, TQ-E5, TQ-E10).

The SVT is BANKS × DSLOTS × SECTORS valid bits. The head tracker holds, per tracking queue, the
head's dslot[BANKS], used[BANKS] (need[b] != 0) and missing[BANKS][SECTORS]. A head is checked
exactly once, when it becomes head: missing[b] = need[b] & ~SVT[b][dslot[b]], with the SVT after
the cycle's inval and fill. After that its missing bits are cleared only by fills whose {bank,
dslot} matches (all heads are compared in parallel, so one fill may complete several heads); an
inval never sets them again. An inval of a {bank, dslot} used by a current head is ignored
(TQ-E5).
"""

import numpy as np

__all__ = ["SectorValidTable", "HeadTracker"]


class SectorValidTable:
    """BANKS × DSLOTS masks of SECTORS valid bits (reset: all invalid, TQ-F44)."""

    def __init__(self, banks, dslots, sectors):
        self.banks, self.dslots, self.sectors = banks, dslots, sectors
        self.bits = np.zeros((banks, dslots), dtype=np.uint8)

    def mask(self, bank, dslot):
        return int(self.bits[bank, dslot])

    def fill(self, bank, dslot, sector):
        """TQ-F14: set one sector valid (a fill to a valid sector changes nothing, TQ-E10)."""
        self.bits[bank, dslot] |= np.uint8(1 << sector)

    def clear(self, bank, dslot):
        """TQ-F16: clear all sectors of one dslot."""
        self.bits[bank, dslot] = 0

    def missing(self, dslot, need):
        """Per-bank masks of needed sectors that are not valid (sectors not needed count as valid,
        §6 item 17)."""
        return tuple(n & ~int(self.bits[b, dslot[b]]) if n else 0 for b, n in enumerate(need))

    def all_valid(self, dslot, need):
        return not any(self.missing(dslot, need))


class HeadTracker:
    """Per-queue check slots. ``checks`` counts the checks of the current cycle (TQ-F18)."""

    def __init__(self, n_q, banks, sectors):
        self.n_q, self.banks, self.sectors = n_q, banks, sectors
        self.valid = [False] * n_q
        self.dslot = [None] * n_q
        self.used = [0] * n_q          # bit b: need[b] != 0
        self.miss = [0] * n_q          # missing[b][s] at bit b * SECTORS + s
        self.seq = [None] * n_q
        self.checks = 0

    def check(self, q, entry, svt):
        """Promote ``entry`` to head of queue q and check it once against ``svt`` (TQ-F12)."""
        self.valid[q] = True
        self.dslot[q] = entry.dslot
        self.used[q] = sum(1 << b for b, n in enumerate(entry.need) if n)
        miss = 0
        for b, m in enumerate(svt.missing(entry.dslot, entry.need)):
            miss |= m << (b * self.sectors)
        self.miss[q] = miss
        self.seq[q] = entry.seq
        self.checks += 1

    def clear(self, q):
        """Queue q became empty: its check slot is empty."""
        self.valid[q] = False
        self.dslot[q] = None
        self.used[q] = 0
        self.miss[q] = 0
        self.seq[q] = None

    def fill(self, bank, dslot, sector):
        """TQ-F14: clear bit ``sector`` of missing[bank] in every head whose dslot[bank] matches."""
        bit = ~(1 << (bank * self.sectors + sector))
        for q in range(self.n_q):
            if self.valid[q] and self.dslot[q][bank] == dslot:
                self.miss[q] &= bit

    def uses(self, bank, dslot):
        """TQ-E5: is {bank, dslot} used (used[b] = 1 and dslot[b] = d) by any current head?"""
        return any(self.valid[q] and (self.used[q] >> bank) & 1 and self.dslot[q][bank] == dslot
                   for q in range(self.n_q))

    def ready(self, q):
        """TQ-F17: head present and no missing bit."""
        return self.valid[q] and self.miss[q] == 0

    def ready_vec(self):
        vec = 0
        for q in range(self.n_q):
            if self.valid[q] and self.miss[q] == 0:
                vec |= 1 << q
        return vec

    def missing(self, q):
        """Per-bank missing masks of queue q's head."""
        mask = (1 << self.sectors) - 1
        return tuple((self.miss[q] >> (b * self.sectors)) & mask for b in range(self.banks))
