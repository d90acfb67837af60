"""G-A3: the multicast engine of a mock GPC (WD-F10) [seed ¶0142, ¶0214; ordering §6 item 4].

At most one CTA of a CGA per SM. SMs of TPCs whose every SM has a free slot (class A) rank above
all other SMs with a free slot (class B); within a class, more free slots first, then the lower
index. The same level search and prefix popcount as G-A2 run over the rank keys
``f + 2**FREE_W·classA`` with FREE_W + 1 search bits. A disabled SM has f = 0 and so breaks its
TPC's class A (WD-F29).
"""

from dataclasses import dataclass

from golden.common.popcount import blelloch_prefix_popcount
from golden.wdist.formats import FAIL
from golden.wdist.waterfill import level_search

__all__ = ["McResult", "mc_keys", "mc_place"]


@dataclass(frozen=True)
class McResult:
    a: tuple
    speed: int
    level: int            # T
    rem: int
    keys: tuple
    trace: tuple


def mc_keys(f, tpcs, free_w):
    """Rank keys: 0 for f = 0, else f, plus 2**FREE_W when the SM's TPC is class A."""
    key = [0] * len(f)
    for group in tpcs:
        class_a = all(f[j] >= 1 for j in group)
        for i in group:
            key[i] = 0 if f[i] == 0 else f[i] + ((1 << free_w) if class_a else 0)
    return key


def mc_place(f, n, tpcs, free_w):
    """G-A3 over free counts ``f`` with TPC groups ``tpcs`` (lists of local indices)."""
    key = mc_keys(f, tpcs, free_w)
    if n > sum(k > 0 for k in key):
        return FAIL
    steps = []

    def pred(t):
        c = sum(k > t for k in key)
        steps.append((t, c, c > n))
        return c > n

    t = level_search(pred, free_w + 1)
    a = [1 if k > t else 0 for k in key]
    rem = n - sum(a)
    cand = 0
    for i, k in enumerate(key):
        if t >= 1 and k == t:
            cand |= 1 << i
    prefix, _ = blelloch_prefix_popcount(cand, len(f))
    for i in range(len(f)):
        if (cand >> i) & 1 and prefix[i] < rem:
            a[i] = 1
    speed = min(f[i] - 1 for i in range(len(f)) if a[i] == 1)
    return McResult(tuple(a), speed, t, rem, tuple(key), tuple(steps))
