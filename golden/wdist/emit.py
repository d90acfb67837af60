"""``wd_emitter``: LAUNCH beat construction and sequence numbers (WD-F18, WD-F19; G-EMIT).

One beat per innermost placement unit; CTA ranks are contiguous in ascending local SM index
(§6 item 7); ``seq`` is allocated once per launch unit and wraps at 2^SEQ_W.
"""

from golden.wdist.formats import Beat, Kind

__all__ = ["SeqCounter", "pad", "launch_beat"]


class SeqCounter:
    """``alloc_seq()``: the current value, then +1 mod 2^SEQ_W; 0 after reset."""

    def __init__(self, width):
        self.width = width
        self.value = 0

    def alloc(self):
        v = self.value
        self.value = (v + 1) % (1 << self.width)
        return v


def pad(p, a):
    """A GPC's local counts as the beat's S_MAX-entry ``cnt`` (entries >= SM_PER_GPC[g] are 0)."""
    a = tuple(int(x) for x in a)
    return a + (0,) * (p.S_MAX - len(a))


def launch_beat(p, grid_id, seq, g, a, first_rank=0, is_cga=0, gcga_first=0, gcga_last=0,
                end_of_cga=0):
    return Beat(Kind.LAUNCH, grid_id, seq=seq, gpc=g, cnt=pad(p, a), first_rank=first_rank,
                is_cga=is_cga, gcga_first=gcga_first, gcga_last=gcga_last, end_of_cga=end_of_cga)
