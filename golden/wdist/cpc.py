"""G-CPC (WD-F32, SHOULD): the level-CPC engine of a mock GPC [seed ¶0169].

A GPC CGA made of m CPC CGAs is placed by an inner A5 loop over the GPC's CPCs on a private copy
of its effective free counts: each inner step queries every CPC for one CPC CGA, keeps the
reservations of the CPCs tied at the best speed (at most m − placed of them, ascending CPC) and
drops the others. The GPC-CGA speed is the minimum of the inner best speeds (§6 item 5). If an
inner step finds no valid CPC the whole GPC query fails and the inner reservations vanish with it;
otherwise the GPC-level commit or cancel (WD-F12) covers all of them. Parts come out in emission
order: inner step, then CPC index (G-EMIT).
"""

from golden.wdist.formats import FAIL
from golden.wdist.shadow import place

__all__ = ["cpc_place", "cpc_engine"]


def cpc_place(p, g, f, n, m, mode):
    """G-CPC over GPC g's local effective free counts ``f``: (a, speed, parts) or FAIL.

    Also returns, through the result tuple's ``speeds`` (4th element), the inner best speeds."""
    work = list(f)
    ranges = p.cpcs(g)
    placed, speeds, parts = 0, [], []
    while placed < m:
        resp = []
        for c, rng in enumerate(ranges):
            r = place(p, [work[i] for i in rng], n, mode)
            resp.append(r)
        valid = [c for c in range(len(ranges)) if resp[c] is not FAIL]
        if not valid:
            return FAIL
        best = max(resp[c][1] for c in valid)
        win = [c for c in valid if resp[c][1] == best][:m - placed]
        for c in win:
            a_loc = [0] * len(f)
            for i, k in zip(ranges[c], resp[c][0]):
                a_loc[i] = k
                work[i] -= k
            parts.append((c, tuple(a_loc)))
        placed += len(win)
        speeds.append(best)
    a = tuple(f[i] - work[i] for i in range(len(f)))
    return a, min(speeds), tuple(parts), tuple(speeds)


def cpc_engine(p, n, m, mode):
    """``engine(g)`` for ``select_step``: GPC g's query runs ``cpc_place``."""
    def for_gpc(g):
        def engine(f):
            r = cpc_place(p, g, f, n, m, mode)
            return r if r is FAIL else r[:3]
        return engine
    return for_gpc
