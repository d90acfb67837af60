"""``gpublocks run trackq`` and ``gpublocks bench trackq`` on the RTL (``TrackingQueues`` or the
``SingleFifo`` baseline; the testbench sees which from the ports).

- ``run_stimulus`` plays the normalized traces of ``sim.blocks.trackq`` with the §5 driver
  conventions (requests offered in list order, each held on ``req`` until accepted; fills,
  invals, resp.ready, err_clr and config per cycle), after a reset per trace, and writes what
  the ports showed: every request's accept/pop/cmt/resp cycles and delivered fields, the
  delivery order, the counters and ``err`` after the last cycle, and the largest queue
  occupancy and pool use seen. A trace ends, as ``golden.trackq.trace.run_trace`` does, at the
  first cycle that starts with every request delivered, every input sent and the block empty
  (pool_used = 0, fast FIFO empty). The flow compares the record with the golden model.
- ``bench_brand`` runs benchmark B-RAND (spec TQ-GV19) closed loop: the driver offers the next
  request of the first warp, round robin after the last accepted one, that has requests left
  and fewer than ``window`` in flight; a miss accepted at c gets its fill at c + L (earliest due
  first, one per cycle). Every cycle is also compared with the golden model (TQ-V1); the record
  has each request's accept and resp cycles.
"""

import heapq

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.trackq.bench import brand_requests
from golden.trackq.fifo import SingleFifoModel
from golden.trackq.formats import Fill, Inval, Req, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import Config, TrackqParams
from tb.common import env
from tb.trackq.tq_tb import TqHarness


def _is_tq(dut):
    return hasattr(dut, "cfg_mode")


def _cfg_at(changes):
    points = [(c, Config(**v)) for c, v in changes]

    def at(cycle):
        current = points[0][1]
        for c, v in points:
            if c > cycle:
                break
            current = v
        return current
    return at


async def play_trace(h, trace):
    """One normalized trace on the RTL; returns the record described in the module doc."""
    p = h.p
    await h.start()
    reqs = [(offer, Req(**{**r, "dslot": tuple(r["dslot"]), "need": tuple(r["need"])}))
            for offer, r in trace["requests"]]
    fills = {c: Fill(b, d, s) for c, b, d, s in trace["fills"]}
    invals = {c: Inval(b, d) for c, b, d in trace["invals"]}
    not_ready = frozenset(trace["resp_not_ready"])
    clr = frozenset(trace["err_clr"])
    cfg_at = _cfg_at(trace["cfg"])
    last_input = max([0, *fills, *invals])
    entries = [{"index": k, "id": r.id, "offer": o} for k, (o, r) in enumerate(reqs)]
    by_id = {}                       # id -> indices of accepted, undelivered requests (oldest first)
    order = []
    max_occ = [0] * p.N_Q
    max_used = ready_low = 0
    nxt = delivered = cycle = 0
    tq = _is_tq(h.dut)
    while True:
        req = reqs[nxt][1] if nxt < len(reqs) and reqs[nxt][0] <= cycle else None
        inp = dict(req=req, fill=fills.get(cycle), inval=invals.get(cycle), cfg=cfg_at(cycle),
                   resp_ready=int(cycle not in not_ready), err_clr=int(cycle in clr))
        h._drive(inp)
        await ReadOnly()
        got = h._sample()
        empty = got.status["pool_used"] == 0 and got.status.get("fast_occ", 0) == 0
        if (nxt == len(reqs) and delivered == len(reqs) and cycle > last_input and empty
                and cycle >= trace.get("min_cycles", 0)):
            counters, err = got.counters, got.err     # the registers after the last cycle
            break
        assert cycle < trace["max_cycles"], (
            f"trace not drained after {trace['max_cycles']} cycles: {nxt}/{len(reqs)} accepted, "
            f"{delivered} delivered")
        if tq:
            max_occ = [max(a, b) for a, b in zip(max_occ, got.status["occ"])]
        max_used = max(max_used, got.status["pool_used"])
        ready_low += not got.req_ready
        if req is not None and got.req_ready:
            entries[nxt]["accept"] = cycle
            by_id.setdefault(req.id, []).append(nxt)
            nxt += 1
        if got.pop is not None:
            entries[by_id[got.pop.id][0]].update(pop=cycle)
        if got.cmt is not None:
            entries[by_id[got.cmt.id][0]].update(cmt=cycle)
        if got.resp is not None and inp["resp_ready"]:
            r = got.resp
            k = by_id[r.id].pop(0)
            entries[k].update(resp=cycle, src=r.src, q=r.q, cls=r.cls, eoi=r.eoi, eog=r.eog)
            order.append([cycle, r.id])
            delivered += 1
        await RisingEdge(h.dut.clk)
        cycle += 1
    await RisingEdge(h.dut.clk)
    return {"entries": entries, "resp_order": order, "counters": counters,
            "err": err if tq else None, "cycles": cycle,
            "max_occ": max_occ if tq else None, "max_pool_used": max_used,
            "req_ready_low_cycles": ready_low}


@cocotb.test()
async def run_stimulus(dut):
    stim = env.stimulus()
    if stim is None or "traces" not in stim:
        return
    p = TrackqParams(**env.params())
    h = TqHarness(dut, p, model_cls=TrackingQueuesModel if _is_tq(dut) else SingleFifoModel)
    results = []
    for trace in stim["traces"]:
        results.append(await play_trace(h, trace))
    env.write_result({"traces": results})


@cocotb.test()
async def bench_brand(dut):
    """B-RAND (TQ-GV19) closed loop on the RTL, lockstep with the golden model."""
    stim = env.stimulus()
    if stim is None or "brand" not in stim:
        return
    b = stim["brand"]
    p = TrackqParams(**env.params())
    tq = _is_tq(dut)
    h = TqHarness(dut, p, model_cls=TrackingQueuesModel if tq else SingleFifoModel)
    await h.start()
    cfg = p.default_config(cfg_mode=b["cfg_mode"], cfg_lgq=min(p.N_Q // 2, (1 << p.Q_W) - 1),
                           cfg_cgm=min(b["cfg_cgm"], p.POOL), cfg_reclaim=0)
    per_warp = brand_requests(b["seed"], n_warps=b["n_warps"], per_warp=b["per_warp"],
                              miss_p=b["miss_p"])
    n_warps = len(per_warp)
    total = sum(len(r) for r in per_warp)
    nxt = [0] * n_warps
    in_flight = [0] * n_warps
    last_warp = n_warps - 1            # the search starts at warp 0 (spec §6 item 27)
    offered = None
    fills, n_sched = [], 0
    ident = 0
    accept, info, resp = {}, {}, {}
    warm = b["warmup"]
    delivered = 0
    mask = (1 << p.ID_W) - 1
    while delivered < total:
        c = h.cycle
        assert c < b["max_cycles"], f"B-RAND did not finish in {b['max_cycles']} cycles"
        if offered is None and c >= warm:
            for k in range(1, n_warps + 1):
                w = (last_warp + k) % n_warps
                if nxt[w] < len(per_warp[w]) and in_flight[w] < b["window"]:
                    offered = (w, ident, per_warp[w][nxt[w]])
                    ident += 1
                    break
        fill = None
        if c < warm:
            fill = Fill(c % 4 % p.BANKS, (c // 4) % 4, c // 16)
        elif fills and fills[0][0] <= c:
            fill = heapq.heappop(fills)[2]
        req = None
        if offered is not None:
            w, i, r = offered
            bank, dslot, sector = r.sector
            req = make_req(i & mask, warp=w, sectors=[(bank % p.BANKS, dslot, sector)],
                           banks=p.BANKS)
        got, _ = await h.step(dict(req=req, fill=fill, inval=None, cfg=cfg, resp_ready=1,
                                   err_clr=0))
        if req is not None and got.req_ready:
            w, i, r = offered
            accept[i] = c
            info[i] = r
            nxt[w] += 1
            in_flight[w] += 1
            last_warp = w
            if r.miss:
                bank, dslot, sector = r.sector
                heapq.heappush(fills, (c + r.latency, n_sched, Fill(bank % p.BANKS, dslot, sector)))
                n_sched += 1
            offered = None
        if got.resp is not None:
            # ids are unique among outstanding requests: at most one per warp is in flight
            i = next(k for k in accept if k not in resp and (k & mask) == got.resp.id)
            resp[i] = c
            in_flight[info[i].warp] -= 1
            delivered += 1
    counters, _ = await h.final_counters()
    env.write_result({
        "accept": [accept[i] for i in range(total)], "resp": [resp[i] for i in range(total)],
        "miss": [bool(info[i].miss) for i in range(total)], "counters": counters,
        "lockstep_mismatches": h.mismatches, "cycles_compared": h.cycles_compared})
