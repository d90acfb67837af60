"""Closed-loop run of ``WdistModel`` with SM stubs: commands offered in order (each from its
``at`` cycle, held until accepted), ``cfg`` writes first, until the block is quiescent (or, with
holding stubs, idle) or ``max_cycles``.
"""

from dataclasses import dataclass, field

from golden.wdist.model import WdistModel
from golden.wdist.stubs import SmStubs

__all__ = ["RunResult", "run"]


@dataclass
class RunResult:
    model: WdistModel
    cycles: int
    timeout: bool
    accept_cycle: list = field(default_factory=list)   # per command: the cycle it transferred


def run(params, commands, cfg=(), at=None, seed=0, latency=(1, 20), hold=False,
        grid_latency=None, flush_latency=(1, 4), max_cycles=200000, model=None):
    """``commands``: Commands in order; ``at``: their earliest offer cycles (default 0);
    ``cfg``: dicts for ``ResourceTracker.cfg_write`` applied one per cycle from cycle 0; commands
    are offered only after the last ``cfg`` write."""
    m = model or WdistModel(params)
    shapes = {}
    for c in commands:
        shapes.setdefault(c.grid_id, c.shape)
    stubs = SmStubs(params, shapes, seed, latency, hold, grid_latency, flush_latency)
    at = list(at) if at is not None else [0] * len(commands)
    cfg = list(cfg)
    k, accept = 0, []
    while m.t < max_cycles:
        t = m.t
        c = commands[k] if k < len(commands) and at[k] <= t and t >= len(cfg) else None
        w = cfg[t] if t < len(cfg) else None
        cc, fd = stubs.inputs(t)
        if m.step(cmd=c, cta_complete=cc, flush_done=fd, cfg=w):
            accept.append(t)
            k += 1
        stubs.observe(t, m)
        if k == len(commands) and t >= len(cfg) and m.idle_launcher() and not stubs.busy():
            if m.quiescent() or hold:
                return RunResult(m, m.t, False, accept)
    return RunResult(m, m.t, True, accept)
