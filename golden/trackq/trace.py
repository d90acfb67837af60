"""Trace runner: config + request trace + fill trace -> per-entry event cycles, counters.

The driver follows the §5 conventions: requests are offered in list order, each held on ``req``
from its offer cycle until accepted. Fills and invals are sent in the cycles given (at most one
of each per cycle, TQ-I3, TQ-I4). ``resp.ready`` and the config may vary per cycle.

Works with :class:`~golden.trackq.model.TrackingQueuesModel` and
:class:`~golden.trackq.fifo.SingleFifoModel` (same ``step`` signature).
"""

from dataclasses import dataclass, field

from golden.trackq.formats import Fill, Inval, Req
from golden.trackq.params import Config

__all__ = ["EntryRecord", "TraceResult", "run_trace", "schedule"]


@dataclass
class EntryRecord:
    """Event cycles of one request (None: did not happen). ``src``/``q``/``seq``/``tsnap`` are
    the model's routing; ``eoi``/``eog``/``resp_cls`` the values delivered on resp."""
    index: int
    id: int
    offer: int
    accept: int = None
    src: int = None
    q: int = None
    seq: int = None
    tsnap: int = None
    pop: int = None
    cmt: int = None
    resp: int = None
    eoi: int = None
    eog: int = None
    resp_cls: int = None
    resp_q: int = None
    resp_src: int = None


@dataclass
class TraceResult:
    entries: list
    cycles: list = field(repr=False)
    counters: dict = None
    err: int = 0
    n_cycles: int = 0
    model: object = field(default=None, repr=False)

    def by_id(self, ident):
        """The record of the (unique) request with id ``ident``."""
        hits = [e for e in self.entries if e.id == ident]
        if len(hits) != 1:
            raise KeyError(f"id {ident} names {len(hits)} requests")
        return hits[0]

    def pop_order(self):
        return [e.index for e in sorted((e for e in self.entries if e.pop is not None),
                                        key=lambda e: e.pop)]


def schedule(items, kind, name):
    """{cycle: payload} from [(cycle, payload)] with at most one payload per cycle."""
    out = {}
    for cycle, item in items:
        if not isinstance(item, kind):
            item = kind(*item)
        if not isinstance(cycle, int) or cycle < 0:
            raise ValueError(f"{name} cycle must be a non-negative integer, got {cycle!r}")
        if cycle in out:
            raise ValueError(f"two {name}s in cycle {cycle}: the {name} stream carries at most "
                             f"one per cycle")
        out[cycle] = item
    return out


def _per_cycle(value, name, kind=None):
    """A cycle -> value function from a constant, a callable, or a {cycle: value} dict of changes
    (each applying from its cycle on)."""
    if callable(value) and not isinstance(value, Config):
        return value
    if isinstance(value, dict):
        points = sorted(value.items())
        if not points or points[0][0] != 0:
            raise ValueError(f"{name} changes must start at cycle 0")

        def at(cycle):
            current = None
            for c, v in points:
                if c > cycle:
                    break
                current = v
            return current
        return at
    return lambda cycle: value


def run_trace(model, requests, fills=(), invals=(), cfg=None, resp_ready=1, err_clr=0,
              max_cycles=100000, min_cycles=0, keep_cycles=True, drain=True):
    """Run ``model`` on a trace until every request is delivered and the block is empty.

    ``requests``: [(offer cycle, Req)] in offer order. ``fills``: [(cycle, Fill or (bank, dslot,
    sector))]; ``invals``: [(cycle, Inval or (bank, dslot))]. ``cfg``: a Config, a {cycle: Config}
    dict or a function of the cycle (None: the model's default). ``resp_ready``, ``err_clr``: 0/1,
    {cycle: value} or a function of the cycle. The run stops once all requests are delivered, all
    fills and invals sent, the model is empty (pool reclaimed) and ``min_cycles`` have run;
    RuntimeError if that takes more than ``max_cycles`` (with ``drain=False`` it stops at
    ``max_cycles`` quietly).
    """
    reqs = []
    for k, item in enumerate(requests):
        offer, r = item
        if not isinstance(r, Req):
            raise ValueError(f"requests[{k}] must be (offer cycle, Req), got {item!r}")
        if reqs and offer < reqs[-1][0]:
            raise ValueError(f"requests[{k}] is offered before requests[{k - 1}]")
        reqs.append((offer, r))
    fill_at = schedule(fills, Fill, "fill")
    inval_at = schedule(invals, Inval, "inval")
    cfg_at = _per_cycle(cfg, "cfg") if cfg is not None else (lambda c: None)
    ready_at = _per_cycle(resp_ready, "resp_ready")
    clr_at = _per_cycle(err_clr, "err_clr")
    records = [EntryRecord(index=k, id=r.id, offer=o) for k, (o, r) in enumerate(reqs)]
    last_input = max([0, *fill_at, *inval_at])
    cycles = []
    nxt = 0
    delivered = 0
    cycle = 0
    while True:
        done = (nxt == len(reqs) and delivered == len(reqs) and cycle > last_input
                and cycle >= min_cycles and model.is_empty())
        if done:
            break
        if cycle >= max_cycles:
            if drain:
                raise RuntimeError(f"trace not drained after {max_cycles} cycles: "
                                   f"{nxt}/{len(reqs)} accepted, {delivered} delivered")
            break
        req = reqs[nxt][1] if nxt < len(reqs) and reqs[nxt][0] <= cycle else None
        res = model.step(req=req, fill=fill_at.get(cycle), inval=inval_at.get(cycle),
                         cfg=cfg_at(cycle), resp_ready=ready_at(cycle), err_clr=clr_at(cycle))
        if res.accepted is not None:
            e = res.accepted
            rec = records[nxt]
            if e.index != nxt:
                raise AssertionError("model acceptance order differs from the driver's")
            rec.accept, rec.src, rec.q, rec.seq, rec.tsnap = cycle, int(e.src), e.q, e.seq, e.tsnap
            nxt += 1
        if res.popped is not None:
            records[res.popped.index].pop = cycle
        if res.committed is not None:
            records[res.committed.index].cmt = cycle
        if res.delivered is not None:
            rec = records[res.delivered.index]
            rec.resp = cycle
            rec.eoi, rec.eog, rec.resp_cls = res.resp.eoi, res.resp.eog, res.resp.cls
            rec.resp_q, rec.resp_src = res.resp.q, res.resp.src
            delivered += 1
        if keep_cycles:
            cycles.append(res)
        cycle += 1
    return TraceResult(entries=records, cycles=cycles, counters=dict(model.counters),
                       err=model.err, n_cycles=cycle, model=model)
