"""G-A2: the load-balance engine of a mock GPC (WD-F7, WD-F8, WD-F9) [seed ¶0145–0157].

CTAs are poured like water onto SMs whose depth is their free slots: an MSB-first binary search
finds the final water level L (one V(L) evaluation per iteration, FREE_W iterations), everything
above L is placed at once, and the R CTAs of the last partial level go to the candidates whose
exclusive prefix popcount is below R (SM0 highest priority). The result equals the one-CTA-at-a-
time greedy "most free slots first, ties to the lowest index" (checked in the tests against an
independent greedy loop). ``seed_bisection`` is the seed's formulation over the height h = max f − L
(WD-GV4 row 3), kept to show it reaches the same level by a different probe sequence.
"""

from dataclasses import dataclass

from golden.common.popcount import blelloch_prefix_popcount
from golden.wdist.formats import FAIL

__all__ = ["level_search", "water_volume", "LbResult", "lb_place", "seed_bisection"]


def level_search(pred, width, trace=None):
    """The L* with pred(L) True for L < L* and False for L >= L*, MSB first over ``width`` bits.

    ``trace``: a list receiving (L tested, pred(L)) per iteration.
    """
    x = 0
    for b in range(width - 1, -1, -1):
        probe = x + (1 << b) - 1
        ok = pred(probe)
        if trace is not None:
            trace.append((probe, ok))
        if ok:
            x += 1 << b
    return x


def water_volume(f, level):
    """V(L) = Σ max(0, f − L): the CTAs that fit strictly above level L."""
    return sum(max(0, x - level) for x in f)


@dataclass(frozen=True)
class LbResult:
    a: tuple              # CTAs per SM
    speed: int            # min(f − a) over SMs with a > 0
    level: int            # L
    rem: int              # R, the CTAs of the final partial level
    candidates: int       # SMs with f >= L (L >= 1)
    trace: tuple          # (L tested, V(L), V(L) > N) per search iteration


def lb_place(f, n, width):
    """G-A2 over free counts ``f`` (priority = index order) for ``n`` >= 1 CTAs: LbResult or FAIL."""
    f = list(f)
    if n > sum(f):
        return FAIL
    steps = []

    def pred(level):
        v = water_volume(f, level)
        steps.append((level, v, v > n))
        return v > n

    level = level_search(pred, width)
    a = [max(0, x - level) for x in f]
    rem = n - sum(a)
    cand = 0
    for i, x in enumerate(f):
        if level >= 1 and x >= level:
            cand |= 1 << i
    if f:
        prefix, total = blelloch_prefix_popcount(cand, len(f))
    else:
        prefix, total = [], 0
    for i in range(len(f)):
        if (cand >> i) & 1 and prefix[i] < rem:
            a[i] += 1
    speed = min(f[i] - a[i] for i in range(len(f)) if a[i] > 0)
    return LbResult(tuple(a), speed, level, rem, total, tuple(steps))


def seed_bisection(f, n):
    """WD-GV4 row 3: the largest height h in [0, max f] with V(max f − h) <= n, by bisection with
    the midpoint rounded up. Returns (h, L, [(h, L, V, "raise" | "too much"), ...])."""
    top = max(f)
    lo, hi = 0, top
    trace = []
    while lo < hi:
        h = (lo + hi + 1) // 2
        level = top - h
        v = water_volume(f, level)
        if v <= n:
            lo = h
            trace.append((h, level, v, "raise"))
        else:
            hi = h - 1
            trace.append((h, level, v, "too much"))
    return lo, top - lo, trace
