"""Flow adapter of the tracking queues: stimulus schema, golden run, comparison, demo, bench.

Stimulus (docs/trackq.md)::

    {"params": {"N_Q": 4, "POOL": 16},                    # optional, registry defaults
     "cfg": {"mode": 4, "lgq": 2, "cgm": 8, "reclaim": "inorder"},   # optional
     "cfg_changes": [{"cycle": 200, "mode": 1}],          # optional, from that cycle on
     "requests": [{"id": 0, "offer": 0, "warp": 1, "cls": "LG",
                   "sectors": [[0, 3, 2]], "eoi": 1, "eog": 0, "is_status": 0, "fast_path": 0},
                  ...],                                   # offered in list order, held until accepted
     "fills": [[50, 0, 3, 2], ...],                       # [cycle, bank, dslot, sector]
     "invals": [[400, 0, 3], ...],                        # [cycle, bank, dslot]
     "resp_not_ready": [5, [10, 20]],                     # cycles (or inclusive ranges) with resp.ready = 0
     "err_clr": [30],                                     # cycles with err_clr = 1
     "max_cycles": 200000}

The normalized stimulus (what the testbench ``tb.trackq.run_tb`` plays) is ``{"traces": [trace]}``
with one trace per reset; the benchmark plays several traces per build.
"""

from golden.trackq.fifo import SingleFifoModel
from golden.trackq.formats import Cls, Fill, Inval, Req, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import Config, TrackqParams
from golden.trackq.trace import run_trace
from sim.errors import UsageError
from sim.stimulus import checked_object, field, integer

TESTBENCH = "tb.trackq.run_tb"
MAX_REQUESTS = 100_000
MAX_CYCLES = 2_000_000
_TOP_KEYS = {"params", "cfg", "cfg_changes", "requests", "fills", "invals", "resp_not_ready",
             "err_clr", "max_cycles"}
_REQ_KEYS = {"id", "offer", "warp", "cls", "sectors", "dslot", "need", "eoi", "eog", "is_status",
             "fast_path"}
_CFG_KEYS = {"mode", "lgq", "cgm", "reclaim"}
_CLS_BY_NAME = {"LG": 0, "L/G": 0, "TEX": 1, "SURF": 1, "TEX/SURF": 1, "TTU": 2, "RSVD": 3}
_RECLAIM_BY_NAME = {"INORDER": 0, "IN-ORDER": 0, "FREELIST": 1, "FREE-LIST": 1}


def _params(params):
    return TrackqParams(**params)


def _cfg_fields(obj, where, base, p):
    """Config port values from a cfg object (``mode`` 1..4 as the spec numbers it)."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object with mode/lgq/cgm/reclaim")
    values = dict(base)
    for key, value in obj.items():
        if key == "cycle":
            continue
        if key not in _CFG_KEYS:
            raise UsageError(f"{where}: unknown cfg field {key!r} (fields: mode, lgq, cgm, reclaim)")
        if key == "mode":
            values["cfg_mode"] = integer(value, f"{where}.mode", 1, 4) - 1
        elif key == "lgq":
            values["cfg_lgq"] = integer(value, f"{where}.lgq", 0, (1 << p.Q_W) - 1)
        elif key == "cgm":
            values["cfg_cgm"] = integer(value, f"{where}.cgm", 0, (1 << p.CGM_W) - 1)
        else:
            if isinstance(value, str):
                if value.upper() not in _RECLAIM_BY_NAME:
                    raise UsageError(f"{where}.reclaim: {value!r} is not inorder or freelist")
                value = _RECLAIM_BY_NAME[value.upper()]
            values["cfg_reclaim"] = integer(value, f"{where}.reclaim", 0, 1)
    return values


def _cycles(items, where, hi):
    """A sorted list of cycles from cycles and inclusive [first, last] ranges."""
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of cycles or [first, last] ranges")
    out = set()
    for k, item in enumerate(items):
        if isinstance(item, list):
            if len(item) != 2:
                raise UsageError(f"{where}[{k}]: a range is [first, last]")
            a = integer(item[0], f"{where}[{k}][0]", 0, hi)
            b = integer(item[1], f"{where}[{k}][1]", a, hi)
            out.update(range(a, b + 1))
        else:
            out.add(integer(item, f"{where}[{k}]", 0, hi))
    return sorted(out)


def _request(obj, k, p, prev_offer):
    where = f"requests[{k}]"
    checked_object(obj, where, _REQ_KEYS)
    offer = integer(field(obj, "offer", where, default=prev_offer), f"{where}.offer", prev_offer,
                    MAX_CYCLES)
    cls = field(obj, "cls", where, default=0)
    if isinstance(cls, str):
        if cls.upper() not in _CLS_BY_NAME:
            raise UsageError(f"{where}.cls: {cls!r} is not one of LG, TEX, TTU, RSVD")
        cls = _CLS_BY_NAME[cls.upper()]
    cls = integer(cls, f"{where}.cls", 0, 3)
    ident = integer(field(obj, "id", where, default=k & ((1 << p.ID_W) - 1)), f"{where}.id",
                    0, (1 << p.ID_W) - 1)
    flags = {name: integer(field(obj, name, where, default=default), f"{where}.{name}", 0, 1)
             for name, default in (("eoi", 1), ("eog", 0), ("is_status", 0), ("fast_path", 0))}
    warp = integer(field(obj, "warp", where, default=0), f"{where}.warp", 0, (1 << p.WARP_W) - 1)
    if "sectors" in obj and ("dslot" in obj or "need" in obj):
        raise UsageError(f"{where}: give either sectors or dslot/need, not both")
    try:
        if "dslot" in obj or "need" in obj:
            dslot = field(obj, "dslot", where, list, default=[0] * p.BANKS)
            need = field(obj, "need", where, list, default=[0] * p.BANKS)
            req = Req(id=ident, warp=warp, cls=cls, dslot=tuple(dslot), need=tuple(need), **flags)
        else:
            sectors = field(obj, "sectors", where, list, default=[])
            triples = []
            for n, sec in enumerate(sectors):
                w = f"{where}.sectors[{n}]"
                if not isinstance(sec, list) or len(sec) != 3:
                    raise UsageError(f"{w}: expected [bank, dslot, sector]")
                b = integer(sec[0], f"{w}[0] (bank)", 0, p.BANKS - 1)
                d = integer(sec[1], f"{w}[1] (dslot)", 0, p.DSLOTS - 1)
                s = integer(sec[2], f"{w}[2] (sector)", 0, p.SECTORS - 1)
                triples.append((b, d, s))
            req = make_req(ident, warp=warp, cls=cls, sectors=triples, banks=p.BANKS, **flags)
        req.checked(p)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return offer, req


def _events(items, where, names, check, hi):
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of [{', '.join(names)}]")
    out, seen = [], set()
    for k, item in enumerate(items):
        w = f"{where}[{k}]"
        if isinstance(item, dict):
            unknown = set(item) - set(names)
            if unknown:
                raise UsageError(f"{w}: unknown field {sorted(unknown)[0]!r}")
            item = [field(item, name, w) for name in names]
        if not isinstance(item, list) or len(item) != len(names):
            raise UsageError(f"{w}: expected [{', '.join(names)}]")
        cycle = integer(item[0], f"{w}.cycle", 0, hi)
        values = [integer(v, f"{w}.{n}", 0) for v, n in zip(item[1:], names[1:])]
        if cycle in seen:
            raise UsageError(f"{w}: a second {where[:-1]} in cycle {cycle} (at most one per cycle)")
        seen.add(cycle)
        try:
            check(*values)
        except ValueError as exc:
            raise UsageError(f"{w}: {exc}") from None
        out.append([cycle, *values])
    return sorted(out)


def parse(data, block):
    """Validated (params, normalized stimulus) from a stimulus JSON object."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise UsageError(f"stimulus: unknown field {sorted(unknown)[0]!r}")
    params = block.resolve_params(field(data, "params", "stimulus", dict, default={}))
    block.check_params(params)
    p = _params(params)
    max_cycles = integer(field(data, "max_cycles", "stimulus", default=200_000),
                         "stimulus.max_cycles", 1, MAX_CYCLES)
    base = _cfg_fields(field(data, "cfg", "stimulus", dict, default={}), "stimulus.cfg",
                       p.default_config().as_dict(), p)
    cfg = [[0, base]]
    for k, change in enumerate(field(data, "cfg_changes", "stimulus", list, default=[])):
        where = f"cfg_changes[{k}]"
        if not isinstance(change, dict):
            raise UsageError(f"{where}: expected an object with cycle and cfg fields")
        cycle = integer(field(change, "cycle", where), f"{where}.cycle", 0, max_cycles)
        if cycle <= cfg[-1][0] and cycle != 0:
            raise UsageError(f"{where}.cycle: changes must be in increasing cycle order")
        values = _cfg_fields(change, where, cfg[-1][1], p)
        if cycle == 0:
            cfg[0] = [0, values]
        else:
            cfg.append([cycle, values])
    reqs_in = field(data, "requests", "stimulus", list)
    if not 1 <= len(reqs_in) <= MAX_REQUESTS:
        raise UsageError(f"stimulus.requests: needs 1..{MAX_REQUESTS} requests, got {len(reqs_in)}")
    requests, offer = [], 0
    for k, obj in enumerate(reqs_in):
        offer, req = _request(obj, k, p, offer)
        requests.append([offer, req])
    fills = _events(field(data, "fills", "stimulus", list, default=[]), "fills",
                    ("cycle", "bank", "dslot", "sector"), lambda b, d, s: Fill(b, d, s).checked(p),
                    max_cycles)
    invals = _events(field(data, "invals", "stimulus", list, default=[]), "invals",
                     ("cycle", "bank", "dslot"), lambda b, d: Inval(b, d).checked(p), max_cycles)
    trace = {
        "cfg": cfg,
        "requests": [[o, _req_dict(r)] for o, r in requests],
        "fills": fills, "invals": invals,
        "resp_not_ready": _cycles(field(data, "resp_not_ready", "stimulus", default=[]),
                                  "stimulus.resp_not_ready", max_cycles),
        "err_clr": _cycles(field(data, "err_clr", "stimulus", default=[]), "stimulus.err_clr",
                           max_cycles),
        "max_cycles": max_cycles, "min_cycles": 0,
    }
    return params, {"traces": [trace]}


def _req_dict(r):
    return {"id": r.id, "warp": r.warp, "cls": int(r.cls), "dslot": list(r.dslot),
            "need": list(r.need), "eoi": r.eoi, "eog": r.eog, "is_status": r.is_status,
            "fast_path": r.fast_path}


def vector_trace(v):
    """(params dict, normalized trace) of a ``golden.trackq.vectors.Vector``."""
    params, cfg, reqs, _ = v.build()
    return params.as_dict(), {
        "cfg": [[0, cfg.as_dict()]],
        "requests": [[o, _req_dict(r)] for o, r in reqs],
        "fills": sorted([c, *f] for c, f in v.fills),
        "invals": sorted([c, *i] for c, i in v.invals),
        "resp_not_ready": sorted(v.not_ready), "err_clr": [],
        "max_cycles": 100_000, "min_cycles": v.min_cycles}


# -- golden -----------------------------------------------------------------------------------

def golden_trace(p, trace, design="tq"):
    """What the ports show for one trace, from the golden model (same record as the RTL's)."""
    model = TrackingQueuesModel(p) if design == "tq" else SingleFifoModel(p)
    reqs = [(o, Req(**{**r, "dslot": tuple(r["dslot"]), "need": tuple(r["need"])}))
            for o, r in trace["requests"]]
    not_ready = frozenset(trace["resp_not_ready"])
    clr = frozenset(trace["err_clr"])
    res = run_trace(model, reqs, fills=[(c, tuple(f)) for c, *f in trace["fills"]],
                    invals=[(c, tuple(i)) for c, *i in trace["invals"]],
                    cfg={c: Config(**v) for c, v in trace["cfg"]},
                    resp_ready=lambda c: int(c not in not_ready),
                    err_clr=lambda c: int(c in clr), max_cycles=trace["max_cycles"],
                    min_cycles=trace.get("min_cycles", 0))
    entries = []
    for e in res.entries:
        entry = {"index": e.index, "id": e.id, "offer": e.offer}
        for key, value in (("accept", e.accept), ("pop", e.pop), ("cmt", e.cmt), ("resp", e.resp),
                           ("src", e.resp_src), ("q", e.resp_q), ("cls", e.resp_cls),
                           ("eoi", e.eoi), ("eog", e.eog)):
            if value is not None:
                entry[key] = int(value)
        entries.append(entry)
    tq = design == "tq"
    max_occ = [0] * p.N_Q
    for cyc in res.cycles:
        if tq:
            max_occ = [max(a, b) for a, b in zip(max_occ, cyc.status["occ"])]
    return {"entries": entries,
            "resp_order": [[e.resp, e.id] for e in sorted(res.entries, key=lambda e: e.resp)],
            "counters": dict(res.counters), "err": res.err if tq else None,
            "cycles": res.n_cycles, "max_occ": max_occ if tq else None,
            "max_pool_used": max([0, *(c.status["pool_used"] for c in res.cycles)]),
            "req_ready_low_cycles": sum(1 for c in res.cycles if not c.req_ready)}


def golden(params, stim, design="tq"):
    p = _params(params)
    return {"traces": [golden_trace(p, t, design) for t in stim["traces"]]}


def compare(expected, actual):
    """Mismatch descriptions, trace by trace: run length, counters, err, status maxima, then
    every request's event cycles and delivered fields."""
    problems = []
    want_all, got_all = expected["traces"], actual.get("traces", [])
    if len(want_all) != len(got_all):
        problems.append(f"{len(got_all)} traces from the RTL, {len(want_all)} expected")
    for t, (want, got) in enumerate(zip(want_all, got_all)):
        pre = f"trace {t}: " if len(want_all) > 1 else ""
        for key in ("cycles", "err", "max_occ", "max_pool_used", "req_ready_low_cycles",
                    "resp_order"):
            if want[key] != got.get(key):
                problems.append(f"{pre}{key}: RTL {got.get(key)}, golden {want[key]}")
        for key, value in want["counters"].items():
            if got.get("counters", {}).get(key) != value:
                problems.append(f"{pre}{key}: RTL {got.get('counters', {}).get(key)}, golden {value}")
        for w, g in zip(want["entries"], got.get("entries", [])):
            for key in ("accept", "pop", "cmt", "resp", "src", "q", "cls", "eoi", "eog"):
                if w.get(key) != g.get(key):
                    problems.append(f"{pre}request {w['index']} (id {w['id']}): {key} RTL "
                                    f"{g.get(key)}, golden {w.get(key)}")
    return problems


def summary(params, stim, result):
    t = result["traces"][0]
    done = [e for e in t["entries"] if "resp" in e]
    lat = [e["resp"] - e["accept"] for e in done]
    out = {"requests": len(t["entries"]), "delivered": len(done), "cycles": t["cycles"],
           "mean_latency": round(sum(lat) / len(lat), 3) if lat else None,
           "max_latency": max(lat) if lat else None,
           "fast": sum(1 for e in done if e.get("src") == 2),
           "cnt_req_stall": t["counters"]["cnt_req_stall"]}
    if t["err"]:
        out["err"] = hex(t["err"])
    return out


def demo_stimulus(params, rng, n=120):
    """A short random trace for ``make``'s demo: L/G, TTU and TEX instructions from random
    warps, status packets and fast-path hits, misses filled after 5..60 cycles, random resp
    back-pressure."""
    p = _params(params)
    reqs, fills, used_fill_cycles = [], [], set()
    valid = set()
    offer = 0
    k = 0
    while k < n:
        offer += rng.choice([0, 0, 1, 1, 2, 5])
        warp = rng.randrange(p.N_WARPS)
        kind = rng.random()
        if kind < 0.25:                                 # a TEX instruction of 1..3 packets
            packets = rng.randint(1, 3)
        else:
            packets = 1
        for j in range(packets):
            sectors = []
            if rng.random() < 0.6:
                b, d, s = rng.randrange(p.BANKS), rng.randrange(min(4, p.DSLOTS)), rng.randrange(4)
                sectors = [[b, d, s]]
                if (b, d, s) not in valid:
                    c = offer + rng.randint(5, 60)
                    while c in used_fill_cycles:
                        c += 1
                    used_fill_cycles.add(c)
                    fills.append([c, b, d, s])
                    valid.add((b, d, s))
            r = {"id": k % (1 << p.ID_W), "offer": offer, "warp": warp, "sectors": sectors}
            if packets > 1 or kind < 0.25:
                r.update(cls="TEX", eoi=int(j == packets - 1))
            elif kind < 0.35:
                r.update(cls="TTU")
            elif kind < 0.4:
                r.update(is_status=1, cls="TEX")
            elif kind < 0.6 and not sectors:
                r.update(fast_path=1)
            reqs.append(r)
            k += 1
    not_ready = sorted({rng.randrange(offer + 100) for _ in range(40)})
    return {"params": params, "cfg": {"mode": 4}, "requests": reqs, "fills": sorted(fills),
            "resp_not_ready": not_ready}


# -- benchmark (gpublocks bench trackq) --------------------------------------------------------

# B-RAND (TQ-GV19, TQ-P5): full size, FAST_PATH = 0, mode 4 against SingleFifo; 32 warps x 64
# L/G requests drawn with PCG64(2); one request in flight per warp; warm-up fills 0..63.
BRAND = {"params": TrackqParams.full(FAST_PATH=0).as_dict(), "seed": 2, "n_warps": 32,
         "per_warp": 64, "miss_p": 0.3, "window": 1, "cfg_mode": 3, "cfg_cgm": 32,
         "warmup": 64, "max_cycles": 200_000}


def _test_block(name, cls, params):
    from sim.registry import Block, Param
    return Block(name=name, kind="test", summary=cls.__name__, spec="trackq.md", top=cls,
                 params=tuple(Param(k, v, "TQ-C", k) for k, v in params.items()))


def fifo_block():
    """``SingleFifo`` as a flow block (the same name and defaults as tests/rtl/test_trackq_fifo,
    so the builds are shared)."""
    from hw.trackq.fifo import SingleFifo
    return _test_block("trackq_fifo", SingleFifo, TrackqParams.test().as_dict())


def _run_rtl(block, params, stim, seed, sim, label, testcase="run_stimulus"):
    import json
    import tempfile
    from pathlib import Path

    from sim.cocotb_run import run_testbench

    with tempfile.TemporaryDirectory() as tmp:
        stim_file, out_file = Path(tmp) / "stim.json", Path(tmp) / "rtl.json"
        stim_file.write_text(json.dumps(stim))
        run_testbench(block, block.resolve_params(params), TESTBENCH, testcase=testcase, sim=sim,
                      seed=seed, env={"GPUBLOCKS_STIM": str(stim_file),
                                      "GPUBLOCKS_RESULT": str(out_file)}, label=label)
        return json.loads(out_file.read_text())


def _fast_hit_trace():
    """TQ-P6: one fast-path L/G hit into an empty fast FIFO, resp.ready = 1."""
    return {"cfg": [[0, TrackqParams.gv().default_config().as_dict()]],
            "requests": [[0, _req_dict(make_req(0, warp=1, cls=Cls.LG, fast_path=1))]],
            "fills": [], "invals": [], "resp_not_ready": [], "err_clr": [],
            "max_cycles": 1000, "min_cycles": 0}


def _cdf(values):
    values = sorted(values)
    n = len(values)
    out = []
    for k, v in enumerate(values):
        if k + 1 == n or values[k + 1] != v:
            out.append([v, round((k + 1) / n, 5)])
    return out


def _brand_figures(result):
    lat = [r - a for a, r in zip(result["accept"], result["resp"])]
    hits = [x for x, miss in zip(lat, result["miss"]) if not miss]
    span = max(result["resp"]) - min(result["accept"]) + 1
    return {"mean_hit_latency": round(sum(hits) / len(hits), 4), "hits": len(hits),
            "requests": len(lat), "throughput": round(len(lat) / span, 5), "cycles": span,
            "mean_latency": round(sum(lat) / len(lat), 3),
            "cnt_req_stall": result["counters"]["cnt_req_stall"],
            "lockstep_mismatches": len(result["lockstep_mismatches"]),
            "cycles_compared": result["cycles_compared"],
            "cdf_hits": _cdf(hits), "cdf_all": _cdf(lat)}


def bench(block, seed, sim="verilator"):
    """The TQ-P protocols measured on the RTL (cycle counts), each design side by side with the
    SingleFifo baseline on the identical stimulus; every trace is also compared with the golden
    model (``rtl_mismatches``)."""
    from golden.trackq.vectors import by_name

    figures = {"config": {"sim": sim, "brand": {k: v for k, v in BRAND.items()}}}
    mismatches = []

    def traces(names):
        out, params = [], None
        for name in names:
            params, trace = vector_trace(by_name(name))
            out.append(trace)
        return params, out

    def play(blk, params, trs, design, label):
        stim = {"traces": trs}
        rtl = _run_rtl(blk, params, stim, seed, sim, label)
        mismatches.extend(f"{label}: {x}" for x in compare(golden(params, stim, design), rtl))
        return rtl["traces"]

    # -- TrackingQueues, §5 parameters: E1, GV17, GV18, GV10, a fast hit --------------------
    tq_names = ["TQ-GV1 mode 4", "TQ-GV1 mode 1", "TQ-GV17 Lm=50 mode 4",
                "TQ-GV17 Lm=500 mode 4", "TQ-GV18 4 warps", "TQ-GV18 1 warp", "TQ-GV10"]
    gv_params, tq_traces = traces(tq_names)
    tq_traces.append(_fast_hit_trace())
    tq = dict(zip(tq_names + ["fast"], play(block, gv_params, tq_traces, "tq", "bench_trackq_gv")))
    fifo_names = ["TQ-GV1 SingleFifo", "TQ-GV17 Lm=50 SingleFifo", "TQ-GV17 Lm=500 SingleFifo"]
    _, fifo_traces = traces(fifo_names)
    fifo = dict(zip(fifo_names, play(fifo_block(), gv_params, fifo_traces, "fifo",
                                     "bench_trackq_fifo_gv")))
    pool4_names = ["TQ-GV4 in-order", "TQ-GV4 free-list"]
    pool4_params, pool4_traces = traces(pool4_names)
    pool4 = dict(zip(pool4_names, play(block, pool4_params, pool4_traces, "tq",
                                       "bench_trackq_pool4")))

    def mean(trace, start, end):
        lat = [e[end] - e[start] for e in trace["entries"]]
        return round(sum(lat) / len(lat), 4)

    # TQ-P2: E1 mean pop-stage latency (accept -> pop) and resp latency
    figures["e1_mean_latency_fifo"] = mean(fifo["TQ-GV1 SingleFifo"], "accept", "pop")
    figures["e1_mean_latency_perwarp"] = mean(tq["TQ-GV1 mode 4"], "accept", "pop")
    figures["e1_mean_latency_mode1"] = mean(tq["TQ-GV1 mode 1"], "accept", "pop")
    figures["e1_mean_resp_latency_fifo"] = mean(fifo["TQ-GV1 SingleFifo"], "accept", "resp")
    figures["e1_mean_resp_latency_perwarp"] = mean(tq["TQ-GV1 mode 4"], "accept", "resp")
    # TQ-P1: the warp-1 hit behind a warp-0 miss of latency Lm (resp - accept of R1)
    hbm, hbm_fifo = {}, {}
    for lm in (50, 500):
        r1 = tq[f"TQ-GV17 Lm={lm} mode 4"]["entries"][1]
        hbm[str(lm)] = r1["resp"] - r1["accept"]
        f1 = fifo[f"TQ-GV17 Lm={lm} SingleFifo"]["entries"][1]
        hbm_fifo[str(lm)] = f1["resp"] - f1["accept"]
    figures["hit_behind_miss_latency"] = hbm
    figures["hit_behind_miss_latency_fifo"] = hbm_fifo
    figures["hit_behind_miss_latency_max"] = max(hbm.values())
    # TQ-P3: 64 back-to-back hits, resp.ready = 1: responses per cycle from first to last resp
    rpc = {}
    for name in ("TQ-GV18 4 warps", "TQ-GV18 1 warp"):
        resp = [e["resp"] for e in tq[name]["entries"]]
        rpc[name[8:]] = {"resp_per_cycle": round(len(resp) / (max(resp) - min(resp) + 1), 4),
                         "first_resp": min(resp), "last_resp": max(resp),
                         "cnt_req_stall": tq[name]["counters"]["cnt_req_stall"]}
    figures["resp_per_cycle_all_ready"] = min(v["resp_per_cycle"] for v in rpc.values())
    figures["resp_per_cycle_detail"] = rpc
    # TQ-P4: one warp fills the pool: largest occupancy of one queue, req.ready low cycles
    gv10 = tq["TQ-GV10"]
    figures["max_single_queue_occupancy"] = max(gv10["max_occ"])
    figures["pool"] = gv_params["POOL"]
    figures["pool_full_req_ready_low_cycles"] = gv10["req_ready_low_cycles"]
    # TQ-P6: fast-path hit latency
    f = tq["fast"]["entries"][0]
    figures["fast_hit_latency"] = f["resp"] - f["accept"]
    # TQ-P7: cnt_req_stall on TQ-GV4
    figures["gv4_cnt_req_stall_inorder"] = pool4["TQ-GV4 in-order"]["counters"]["cnt_req_stall"]
    figures["gv4_cnt_req_stall_freelist"] = pool4["TQ-GV4 free-list"]["counters"]["cnt_req_stall"]

    # -- B-RAND (TQ-P5, TQ-GV19): closed loop at full size, both designs --------------------
    brand_stim = {"brand": {k: v for k, v in BRAND.items() if k != "params"}}
    runs = {}
    for design, blk in (("perwarp", block), ("fifo", fifo_block())):
        result = _run_rtl(blk, BRAND["params"], brand_stim, seed, sim, f"bench_trackq_brand_{design}",
                          testcase="bench_brand")
        runs[design] = _brand_figures(result)
        mismatches.extend(f"brand {design}: {x}" for x in result["lockstep_mismatches"])
    pw, ff = runs["perwarp"], runs["fifo"]
    figures["random_mix_mean_hit_latency_fifo"] = ff["mean_hit_latency"]
    figures["random_mix_mean_hit_latency_perwarp"] = pw["mean_hit_latency"]
    figures["random_mix_speedup"] = round(ff["mean_hit_latency"] / pw["mean_hit_latency"], 3)
    figures["random_mix_throughput_fifo"] = ff["throughput"]
    figures["random_mix_throughput_perwarp"] = pw["throughput"]
    figures["random_mix_cnt_req_stall_fifo"] = ff["cnt_req_stall"]
    figures["random_mix_cnt_req_stall_perwarp"] = pw["cnt_req_stall"]
    figures["random_mix"] = {d: {k: v for k, v in r.items() if not k.startswith("cdf")}
                             for d, r in runs.items()}
    figures["random_mix_latency_cdf"] = {d: {"hits": r["cdf_hits"], "all": r["cdf_all"]}
                                         for d, r in runs.items()}
    figures["rtl_mismatches"] = len(mismatches)
    figures["mismatch_examples"] = mismatches[:20]
    return figures


def plot(figures, path):
    """Latency CDFs of B-RAND, FIFO baseline against per-warp queues: hits (left) and all
    requests (right), log latency axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    cdf = figures["random_mix_latency_cdf"]
    for ax, kind in zip(axes, ("hits", "all")):
        for design, label in (("fifo", "SingleFifo (baseline)"), ("perwarp", "TrackingQueues mode 4")):
            points = cdf[design][kind]
            xs = [max(1, points[0][0])] + [max(1, x) for x, _ in points]
            ys = [0.0] + [y for _, y in points]
            ax.step(xs, ys, where="post", label=label)
        ax.set_xscale("log")
        ax.set(xlabel="latency resp - accept (cycles)", ylabel="fraction of requests",
               title=f"B-RAND latency CDF, {kind} (RTL)", ylim=(0, 1.02))
        ax.grid(True, which="both", lw=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"random mix: mean hit latency {figures['random_mix_mean_hit_latency_fifo']} vs "
                 f"{figures['random_mix_mean_hit_latency_perwarp']} cycles "
                 f"(x{figures['random_mix_speedup']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
