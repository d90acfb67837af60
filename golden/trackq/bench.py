"""Golden-only benchmark figures of spec trackq.md (TQ-P1..P7, §5 TQ-GV1, TQ-GV4, TQ-GV17,
TQ-GV19). The RTL benchmark measures the same protocols in simulation; these are the reference
values the golden model produces.

B-RAND (TQ-GV19), normative stimulus:

- full-size build (N_Q = 48, POOL = 512, DSLOTS = 256), FAST_PATH = 0, resp.ready = 1, mode 4
  against SingleFifo;
- warm-up: hot sector h = 0..63 filled at cycle h (bank h mod 4, dslot ⌊h/4⌋ mod 4, sector ⌊h/16⌋);
- 32 warps × 64 L/G requests, single-sector needs, drawn with ``Generator(PCG64(seed))`` in
  warp-major order: u = random(); a miss iff u < 0.3, then L = integers(200, 601) and the k-th
  fresh sector (bank k mod 4, dslot 4 + ⌊k/16⌋, sector ⌊k/4⌋ mod 4); a hit draws h = integers(0,
  64) and needs hot sector h;
- driver: from cycle 64, when no request is offered, offer the next request of the first warp in
  round-robin order after the last accepted warp (warp 31 before the first acceptance) that has
  requests left and fewer than ``window`` (1) in flight; a warp's in-flight mark clears at the end
  of its resp cycle;
- fills: a miss accepted at c is due at c + L; each cycle the earliest due fill is sent, ties by
  scheduling order;
- metrics: mean hit latency (resp − accept over hits), throughput = 2048 / (last resp − first
  accept + 1).
"""

import heapq
from dataclasses import dataclass

import numpy as np

from golden.trackq.fifo import SingleFifoModel
from golden.trackq.formats import Fill, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.vectors import by_name, run_vector

__all__ = ["BRAND_PARAMS", "BrandRequest", "brand_requests", "run_brand", "e1_means",
           "gv4_stalls", "gv17_latencies", "BRAND_REFERENCE"]

BRAND_PARAMS = dict(FAST_PATH=0)
# §5 TQ-GV19 reference values (seed 2): mean hit latency, throughput, cycles, hits
BRAND_REFERENCE = {"tq": (3.06, 0.1765, 11601), "fifo": (460.10, 0.0670, 30575), "hits": 1423}


@dataclass(frozen=True)
class BrandRequest:
    warp: int
    miss: bool
    latency: int          # fill latency L of a miss (None for a hit)
    sector: tuple         # (bank, dslot, sector)


def brand_requests(seed=2, n_warps=32, per_warp=64, miss_p=0.3):
    """The B-RAND requests, per warp in program order (warp-major draw order)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    k = 0
    for w in range(n_warps):
        mine = []
        for _ in range(per_warp):
            u = rng.random()
            if u < miss_p:
                lat = int(rng.integers(200, 601))
                mine.append(BrandRequest(w, True, lat, (k % 4, 4 + k // 16, (k // 4) % 4)))
                k += 1
            else:
                h = int(rng.integers(0, 64))
                mine.append(BrandRequest(w, False, None, (h % 4, (h // 4) % 4, h // 16)))
        out.append(mine)
    return out


def run_brand(design="tq", seed=2, window=1, first_warp=0, max_cycles=200000):
    """Run B-RAND on ``design`` ("tq": TrackingQueues mode 4; "fifo": SingleFifo). Returns a dict
    of figures: mean_hit_latency, throughput, cycles, hits, first_accept, last_resp,
    cnt_req_stall and the counters. ``first_warp`` is where the driver's search starts before
    the first acceptance (0 per §6 item 27)."""
    params = TrackqParams.full(**BRAND_PARAMS)
    model = TrackingQueuesModel(params) if design == "tq" else SingleFifoModel(params)
    cfg = params.default_config(cfg_mode=3, cfg_lgq=24, cfg_cgm=32, cfg_reclaim=0)
    per_warp = brand_requests(seed)
    n_warps = len(per_warp)
    total = sum(len(r) for r in per_warp)
    nxt = [0] * n_warps
    in_flight = [0] * n_warps
    last_warp = (first_warp - 1) % n_warps
    offered = None                    # (warp, global id, BrandRequest)
    fills = []                        # heap of (due, order, Fill)
    n_sched = 0
    accept = {}
    hit_lat = []
    first_accept = last_resp = None
    delivered = 0
    ident = 0
    cycle = 0
    ids = {}
    while delivered < total:
        if cycle >= max_cycles:
            raise RuntimeError(f"B-RAND did not finish in {max_cycles} cycles")
        if offered is None and cycle >= 64:
            for k in range(1, n_warps + 1):
                w = (last_warp + k) % n_warps
                if nxt[w] < len(per_warp[w]) and in_flight[w] < window:
                    r = per_warp[w][nxt[w]]
                    offered = (w, ident, r)
                    ident += 1
                    break
        fill = None
        if cycle < 64:
            h = cycle
            fill = Fill(h % 4, (h // 4) % 4, h // 16)
        elif fills and fills[0][0] <= cycle:
            fill = heapq.heappop(fills)[2]
        req = None
        if offered is not None:
            w, i, r = offered
            req = make_req(i, warp=w, sectors=[r.sector], banks=params.BANKS)
        res = model.step(req=req, fill=fill, cfg=cfg, resp_ready=1)
        if res.accepted is not None:
            w, i, r = offered
            accept[i] = cycle
            ids[i] = r
            nxt[w] += 1
            in_flight[w] += 1
            last_warp = w
            if first_accept is None:
                first_accept = cycle
            if r.miss:
                heapq.heappush(fills, (cycle + r.latency, n_sched, Fill(*r.sector)))
                n_sched += 1
            offered = None
        if res.delivered is not None:
            i = res.delivered.id
            r = ids[i]
            in_flight[r.warp] -= 1
            if not r.miss:
                hit_lat.append(cycle - accept[i])
            last_resp = cycle
            delivered += 1
        cycle += 1
    span = last_resp - first_accept + 1
    return {"design": design, "seed": seed, "window": window,
            "mean_hit_latency": float(np.mean(hit_lat)), "hits": len(hit_lat),
            "throughput": total / span, "cycles": span, "first_accept": first_accept,
            "last_resp": last_resp, "cnt_req_stall": model.counters["cnt_req_stall"],
            "counters": dict(model.counters)}


def e1_means():
    """TQ-P2: mean pop-stage and resp latency on the E1 pattern (TQ-GV1) per design."""
    out = {}
    for name in ("mode 1", "SingleFifo", "mode 4"):
        res, _ = run_vector(by_name(f"TQ-GV1 {name}"), keep_cycles=False)
        pops = [e.pop - e.accept for e in res.entries]
        resps = [e.resp - e.accept for e in res.entries]
        out[name] = (sum(pops) / len(pops), sum(resps) / len(resps))
    return out


def gv4_stalls():
    """TQ-P7: cnt_req_stall on TQ-GV4 for in-order and free-list reclaim."""
    return {name: run_vector(by_name(f"TQ-GV4 {name}"), keep_cycles=False)[0]
            .counters["cnt_req_stall"] for name in ("in-order", "free-list")}


def gv17_latencies():
    """TQ-P1: the hit's resp − accept behind a miss of latency Lm, mode 4 and SingleFifo."""
    out = {}
    for lm in (50, 500):
        for design in ("mode 4", "SingleFifo"):
            res, labels = run_vector(by_name(f"TQ-GV17 Lm={lm} {design}"), keep_cycles=False)
            r1 = res.entries[labels.index("R1")]
            out[(lm, design)] = r1.resp - r1.accept
    return out
