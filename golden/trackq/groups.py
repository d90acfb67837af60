"""Group tracker golden: commit groups, forced eog and retroactive marks at insertion
(spec §4.4 STEP 6, TQ-F28, TQ-F35, TQ-F36, TQ-F37, TQ-E9; §6 items 11 and 21).

State (§4.2): ``inst_open``, ``inst_q``, ``last`` (last TEX slow entry), ``gfirst`` (first entry of
``last``'s group), ``grp_open`` (= last.term == 0) and ``grp_cnt``. Marks written here are the
per-slot flag bits of the RTL (eoi, eog, term, upartial); a term bit that turns on while its entry
already sits in a checked queue is reported through ``on_term`` so the owner can count it
(the RTL's ``tcnt[q]``).
"""

from golden.trackq.formats import ERR_TEX_SPLIT

__all__ = ["GroupTracker"]


class GroupTracker:
    def __init__(self):
        self.inst_open = False
        self.inst_q = None
        self.last = None
        self.gfirst = None
        self.grp_open = False
        self.grp_cnt = 0

    def close_eog(self, on_term):
        """close('eog'): a status packet (TQ-F35) or an L/G or TTU slow packet (TQ-F37) arrives
        while a TEX group is open; the last TEX packet gets eog = 1 and its group is partial."""
        if not self.grp_open:
            return
        last = self.last
        last.eog = 1
        last.term = 1
        on_term(last)
        self.gfirst.upartial = int(bool(last.eog and not last.eoi))
        self.grp_open = False
        self.grp_cnt = 0

    def close_eoi(self, picker, on_term):
        """close('eoi') (TQ-F36): a TEX packet maps to a queue other than the open instruction's.
        If the instruction's last packet is uncommitted it gets eoi = 1; otherwise the lock held by
        that queue, if any, is released."""
        last = self.last
        if not last.committed:
            was_term = last.term
            last.eoi = 1
            last.term = 1
            if not was_term:
                on_term(last)
            if not self.gfirst.committed:
                self.gfirst.upartial = 0
        elif picker.lock_q == self.inst_q:
            picker.lock_q = None
        self.inst_open = False
        self.grp_open = False
        self.grp_cnt = 0

    def on_tex(self, e, q, cgm, picker, on_term):
        """A TEX slow packet ``e`` mapped to queue q is inserted; cgm is the cycle's legal
        cfg_cgm. Sets e.eog (forced when the group count reaches cgm, ``>=`` per §6 item 21) and
        e.term; returns the error events (ERR_TEX_SPLIT)."""
        err = 0
        if self.inst_open and self.inst_q != q:
            self.close_eoi(picker, on_term)
            err = ERR_TEX_SPLIT
        self.grp_cnt += 1
        if self.grp_cnt == 1:
            self.gfirst = e
        e.eog = int(bool(e.eog or self.grp_cnt >= cgm))
        e.term = int(bool(e.eoi or e.eog))
        self.last = e
        self.inst_q = q
        self.inst_open = not e.eoi
        self.grp_open = not e.term
        if e.term:
            self.gfirst.upartial = int(bool(e.eog and not e.eoi))
            self.grp_cnt = 0
        return err
