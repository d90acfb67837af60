"""SM stubs of the testbench (§2): they hold the CTAs the rasterizers hand them, complete each
after a latency (or never, ``hold``), and answer every ``flush_req`` with one
``dsmem_flush_done`` per CTA, naming the SMs that held the CGA's CTAs.

``cta_complete`` and ``dsmem_flush_done`` carry at most one beat per cycle each, so due
completions queue: earliest due first, then arrival order. Each CTA's shape comes from its
grid (``shapes``: grid_id -> Shape), as the real SM would know it (§6 item 12).
"""

import heapq
import random

__all__ = ["SmStubs"]


class SmStubs:
    def __init__(self, p, shapes, seed=0, latency=(1, 20), hold=False, grid_latency=None,
                 flush_latency=(1, 4)):
        self.p = p
        self.shapes = shapes
        self.rng = random.Random(seed)
        self.latency = tuple(latency)
        self.grid_latency = dict(grid_latency or {})
        self.hold = hold
        self.flush_latency = tuple(flush_latency)
        self.due = []              # heap (time, order, sm, record)
        self.order = 0
        self.members = {}          # (gpc, cga_id) -> [sm, ...] of its CTAs
        self.flush_due = []        # heap (time, order, sm, cga_id)
        self.resident = 0

    def observe(self, t, model):
        """Take the records and flush requests ``model`` produced in cycle ``t``."""
        for s, rec in model.new_records:
            self.resident += 1
            if rec.is_cga:
                self.members.setdefault((self.p.gpc_of(s)[0], rec.cga_id), []).append(s)
            if self.hold:
                continue
            lo, hi = self.grid_latency.get(rec.grid_id, self.latency)
            heapq.heappush(self.due, (t + self.rng.randint(lo, hi), self.order, s, rec))
            self.order += 1
        for ft, r in model.flush_reqs[-1:]:
            if ft != t:
                continue
            sms = self.members.pop((r.gpc, r.cga_id))
            assert len(sms) == r.n_ctas, "flush_req n_ctas differs from the CTAs held"
            base = t + self.rng.randint(*self.flush_latency)
            for k, s in enumerate(sms):
                heapq.heappush(self.flush_due, (base + k, self.order, s, r.cga_id))
                self.order += 1

    def inputs(self, t):
        """(cta_complete, dsmem_flush_done) to drive in cycle ``t`` (each or None)."""
        cc = fd = None
        if self.due and self.due[0][0] <= t:
            _, _, s, rec = heapq.heappop(self.due)
            self.resident -= 1
            cc = (s, rec.is_cga, rec.cga_id, self.shapes[rec.grid_id])
        if self.flush_due and self.flush_due[0][0] <= t:
            _, _, s, cid = heapq.heappop(self.flush_due)
            fd = (s, cid)
        return cc, fd

    def busy(self):
        return bool(self.due or self.flush_due)
