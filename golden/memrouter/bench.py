"""Ideal-router estimates of the §4.14 benchmark workloads: the cycle-exact port models (§4.11)
and QoS arbiters (§4.10) fed by a router with no pipeline cost (one request header per cycle,
round robin over processor ports, routed by the page table in its acceptance cycle into the
NEAR or FAR class queue of its port, ROB_BEATS reservation per processor port, one prsp beat per
cycle per port, in order). They are the golden bounds the RTL benchmarks MR-P1..P5 are set
against; the MR-P figures themselves come from RTL simulation."""

from collections import deque

from golden.memrouter.formats import FAR, NEAR
from golden.memrouter.ifmap import pt_init
from golden.memrouter.portmodel import PortModel
from golden.memrouter.qos import QosArbiter

__all__ = ["streaming_requests", "carveout_requests", "far_requests", "simulate", "streaming",
           "qos_shares"]

HBM_BW, OFF_BW = (4, 8, 32), (1, 8, 96)      # BW_NUM, BW_DEN, LAT (MR-C29, MR-C30)


def _pages_forever(params, pages):
    per_page = params.NS // 8
    while True:
        for p in pages:
            for k in range(per_page):
                yield (p << params.LOG2G) + 256 * k


def streaming_requests(params, cfg, init):
    """§4.14 streaming: NSTR = SLOT_LEN streams over the used near pages, len-7 reads, one
    request per stream per round, each stream wrapping at its end."""
    used = cfg.NEAR_FRAMES - cfg.NEAR_RESERVE
    nstr = len(cfg.SLOTS)
    streams = [_pages_forever(params, range(i, used, nstr)) for i in range(nstr)]
    while True:
        for s in streams:
            yield next(s)


def carveout_requests(params, cfg, init):
    """§4.14 QoS, preq[0]: len-7 reads over the carve-out pages, round robin over modules."""
    used = cfg.NEAR_FRAMES - cfg.NEAR_RESERVE
    by_mod = {}
    for p in range(used):
        if init.pt[p].port != 0:
            by_mod.setdefault(init.pt[p].port, []).append(p)
    streams = [_pages_forever(params, by_mod[j]) for j in sorted(by_mod)]
    while True:
        for s in streams:
            yield next(s)


def far_requests(params, cfg, init):
    """§4.14 QoS, preq[1]: len-7 reads over the far pages in ppn order."""
    used = cfg.NEAR_FRAMES - cfg.NEAR_RESERVE
    return _pages_forever(params, range(used, init.pages))


def simulate(params, cfg, sources, cycles=15000, window=(5000, 15000)):
    """Run ``sources`` (one address generator or None per processor port; all len-7 reads).

    Returns dict(prsp = beats per processor port in the window, rd = {(port, cls): sectors
    transferred on mreq in the window})."""
    init = pt_init(params, cfg)
    ports = [PortModel(0, *HBM_BW, frames=cfg.HBM_FRAMES, log2g=params.LOG2G)] + [
        PortModel(1 + m, *OFF_BW, frames=cfg.MOD_FRAMES, log2g=params.LOG2G)
        for m in range(params.N_OFF)]
    arbs = [QosArbiter(params.QDEN, q.RATE_N, q.RATE_F, q.BURST_N, q.BURST_F, cfg.QOS_UTH_EN,
                       q.UTH, cfg.UW, cfg.MIG_STARVE) for q in cfg.QOS[:len(ports)]]
    queues = [{NEAR: deque(), FAR: deque()} for _ in ports]
    presented = [None] * len(ports)
    inport = [deque() for _ in ports]            # uids accepted by each port, in order
    gens = [s(params, cfg, init) if s else None for s in sources]
    nxt = [next(g) if g else None for g in gens]
    rob = [deque() for _ in sources]             # [beats left, beats arrived]
    used = [0] * len(sources)
    entries = {}
    uid = 0
    rr = 0
    lo, hi = window
    prsp = [0] * len(sources)
    rd = {}
    for t in range(cycles):
        for k in range(len(sources)):            # one header per cycle, round robin
            i = (rr + k) % len(sources)
            if gens[i] is None or used[i] + 8 > params.ROB_BEATS:
                continue
            a = nxt[i]
            nxt[i] = next(gens[i])
            e = init.pt[a >> params.LOG2G]
            entry = [8, 0]
            rob[i].append(entry)
            entries[uid] = entry
            queues[e.port][e.pool].append(dict(tag=uid & 0xFF, addr=e.desc.dev(
                a & (params.G - 1), params.LOG2G), len=7, wr=0, data=0, be=0, last=1, uid=uid,
                cls=e.pool))
            uid += 1
            used[i] += 8
            rr = (i + 1) % len(sources)
            break
        for i, q in enumerate(rob):              # one prsp beat per cycle per port
            if q and q[0][1] > 0:
                q[0][0] -= 1
                q[0][1] -= 1
                used[i] -= 1
                if lo <= t < hi:
                    prsp[i] += 1
                if q[0][0] == 0:
                    q.popleft()
        for j, pm in enumerate(ports):
            ready = pm._writing is not None or len(pm.q) < pm.pq_depth
            xfer = presented[j] is not None and ready
            can = presented[j] is None or xfer
            heads = {c: 8 for c in (NEAR, FAR) if queues[j][c]}
            sel, _ = arbs[j].cycle(heads, xfer)
            _, rsp = pm.cycle(presented[j])
            if xfer:
                r = presented[j]
                inport[j].append(r["uid"])
                if lo <= t < hi:
                    rd[(j, r["cls"])] = rd.get((j, r["cls"]), 0) + 8
                presented[j] = None
            if can and sel is not None:
                presented[j] = queues[j][sel].popleft()
            if rsp is not None:
                entries[inport[j][0]][1] += 1
                if rsp["last"]:
                    del entries[inport[j].popleft()]
    return dict(prsp=prsp, rd=rd)


def streaming(params, cfg, cycles=15000, window=(5000, 15000)):
    """MR-P1..P3 workload: delivered prsp beats per cycle, and the simulate() result."""
    res = simulate(params, cfg, [streaming_requests], cycles, window)
    return res["prsp"][0] / (window[1] - window[0]), res


def qos_shares(params, cfg, near=True, far=True, cycles=15000, window=(5000, 15000)):
    """MR-P4/P5 workload (CFG-C, FAR_ALLOC = 0): per OFF port (near sectors, far sectors)."""
    res = simulate(params.replace(N_PROC=2), cfg,
                   [carveout_requests if near else None, far_requests if far else None],
                   cycles, window)
    return {j: (res["rd"].get((j, NEAR), 0), res["rd"].get((j, FAR), 0))
            for j in range(1, params.N_OFF + 1)}
