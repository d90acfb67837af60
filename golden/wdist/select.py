"""G-A5: one GPU2GPC selection step (WD-F12) [seed ¶0166–0171].

Every mock GPC is queried on the same shadow; the best speed among the valid answers wins, every
GPC tied at it gets one CGA in the same step (ascending index, truncated to the CGAs remaining),
and in the same step winners are committed and every other valid GPC cancelled.
"""

from dataclasses import dataclass

__all__ = ["StepResult", "select_step"]


@dataclass(frozen=True)
class StepResult:
    resp: tuple           # one Resp per GPC
    ok: bool              # some GPC valid
    best: int = 0
    winners: tuple = ()   # ascending GPC index

    @property
    def win_mask(self):
        return sum(1 << g for g in self.winners)


def select_step(shadow, n, mode, remaining, commit=True, cga=True, engine=None):
    """Query all GPCs for one CGA of ``n`` CTAs and pick the winners.

    ``commit=True``: commit the winners and cancel the other valid GPCs (WD-F12). On failure (no
    valid GPC) nothing stays reserved. ``engine(g)`` gives a per-GPC engine for ``Shadow.query``
    (level CPC).
    """
    p = shadow.p
    resp = tuple(shadow.query(g, n, mode, None if engine is None else engine(g))
                 for g in range(p.N_GPC))
    valid = [g for g in range(p.N_GPC) if resp[g].valid]
    if not valid:
        return StepResult(resp, False)
    best = max(resp[g].speed for g in valid)
    winners = tuple([g for g in valid if resp[g].speed == best][:remaining])
    if commit:
        for g in valid:
            if g in winners:
                shadow.commit(g, resp[g].a, cga)
            else:
                shadow.cancel(g, resp[g].a)
    return StepResult(resp, True, best, winners)
