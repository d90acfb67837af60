"""Stimulus and result format of ``gpublocks run wdist`` (sketch; schema in ``docs/wdist.md``).

A stimulus is a JSON object: build ``params`` (WD-C*), ``cfg`` writes applied on the empty
machine from cycle 0 (one per cycle), the ``grids`` offered in order on ``cmd``, the behaviour of
the SM stubs and a cycle limit::

    {"params": {"N_GPC": 4, "SM_PER_GPC": [8, 8, 8, 8], "DISTRIBUTOR": "shadow"},
     "cfg": [{"sm": 0, "slot_cap": 4}],
     "grids": [{"grid_id": 1, "level": "GPC", "mode": "LB", "grid": [24, 1, 1],
                "in": [8, 1, 1], "out": [1, 1, 1], "regs_g": 1, "smem_g": 1, "warps": 1,
                "at": 0}],
     "sm": {"latency": [1, 20], "hold": false, "seed": 1, "flush_latency": [1, 4],
            "grid_latency": {"1": [1, 5]}},
     "max_cycles": 200000, "ready": 0.8}

Every field but ``grids`` is optional. ``ready`` (RTL runs only) is the probability that each
output stream's ``ready`` is high in a cycle (random back-pressure, WD-V15); the golden model's
outputs are always ready. ``parse`` raises ``StimulusError`` whose message starts
with the offending field's path (``grids[2].in``); the flow turns it into one line and exit
status 2. ``run_stimulus`` runs the golden model; ``result`` turns a run into the result JSON;
``outcome`` is the timing-independent summary that ``gpublocks run wdist`` compares between the
RTL and the golden model (the golden shadow launcher's sessions take 0 cycles, so cycle numbers
are not compared).
"""

from collections import Counter

from dataclasses import dataclass, fields as dc_fields

from golden.wdist.driver import run
from golden.wdist.formats import Command, Level, Mode
from golden.wdist.params import WdistParams
from golden.wdist.validate import check_fits_ports

__all__ = ["StimulusError", "Stimulus", "parse", "run_stimulus", "result", "beat_json", "outcome",
           "check_invariants", "TOP_KEYS"]

_PARAM_NAMES = {f.name for f in dc_fields(WdistParams)}
_CFG_KEYS = ("sm", "enable", "regs_cap_g", "smem_cap_g", "warp_cap", "slot_cap")
TOP_KEYS = ("params", "cfg", "grids", "sm", "max_cycles", "ready")


class StimulusError(ValueError):
    """A bad stimulus; the message names the field."""


@dataclass
class Stimulus:
    params: WdistParams
    commands: list
    at: list
    cfg: list
    sm: dict
    max_cycles: int
    ready: float = 1.0


def _int(v, where, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, int):
        raise StimulusError(f"{where}: expected an integer, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise StimulusError(f"{where}: {v} is outside {lo}..{hi}")
    return v


def _triple(v, where):
    if not isinstance(v, list) or len(v) != 3:
        raise StimulusError(f"{where}: expected a list of 3 integers, got {v!r}")
    return tuple(_int(x, f"{where}[{i}]", 0) for i, x in enumerate(v))


def _enum(v, enum, where):
    if isinstance(v, str):
        try:
            return int(enum[v.upper()])
        except KeyError:
            raise StimulusError(f"{where}: {v!r} is not one of {[e.name for e in enum]}")
    return _int(v, where, 0, 7)


def _pair(v, where):
    if not isinstance(v, list) or len(v) != 2:
        raise StimulusError(f"{where}: expected [lo, hi], got {v!r}")
    lo, hi = (_int(x, f"{where}[{i}]", 0) for i, x in enumerate(v))
    if lo > hi:
        raise StimulusError(f"{where}: lo {lo} > hi {hi}")
    return (lo, hi)


def parse(data):
    if not isinstance(data, dict):
        raise StimulusError("stimulus: the top level must be an object")
    for key in data:
        if key not in TOP_KEYS:
            raise StimulusError(f"stimulus.{key}: unknown field (fields: {', '.join(TOP_KEYS)})")
    raw = data.get("params", {})
    if not isinstance(raw, dict):
        raise StimulusError("params: expected an object")
    for key in raw:
        if key not in _PARAM_NAMES:
            raise StimulusError(f"params.{key}: unknown parameter")
    raw = dict(raw)
    if isinstance(raw.get("SM_PER_GPC"), list):
        raw["SM_PER_GPC"] = tuple(raw["SM_PER_GPC"])
    try:
        p = WdistParams(**raw)
    except (ValueError, TypeError) as exc:
        raise StimulusError(f"params: {exc}")
    cfg = []
    widths = dict(zip(_CFG_KEYS, (p.SM_ID_W, 1, 9, 10, 7, p.FREE_W)))
    if not isinstance(data.get("cfg", []), list):
        raise StimulusError("cfg: expected a list of objects")
    for i, w in enumerate(data.get("cfg", [])):
        where = f"cfg[{i}]"
        if not isinstance(w, dict) or "sm" not in w:
            raise StimulusError(f"{where}: expected an object with 'sm'")
        for key in w:
            if key not in _CFG_KEYS:
                raise StimulusError(f"{where}.{key}: unknown field")
        cfg.append({k: _int(v, f"{where}.{k}", 0, (1 << widths[k]) - 1) for k, v in w.items()})
    grids = data.get("grids")
    if not isinstance(grids, list) or not grids:
        raise StimulusError("grids: expected a non-empty list")
    commands, at, shapes = [], [], {}
    for i, g in enumerate(grids):
        where = f"grids[{i}]"
        if not isinstance(g, dict):
            raise StimulusError(f"{where}: expected an object")
        for key in g:
            if key not in ("grid_id", "level", "mode", "grid", "in", "out", "regs_g", "smem_g",
                           "warps", "at"):
                raise StimulusError(f"{where}.{key}: unknown field")
        if "grid" not in g:
            raise StimulusError(f"{where}: missing field 'grid'")
        gx, gy, gz = _triple(g["grid"], f"{where}.grid")
        ix, iy, iz = _triple(g.get("in", [1, 1, 1]), f"{where}.in")
        ox, oy, oz = _triple(g.get("out", [1, 1, 1]), f"{where}.out")
        cmd = Command(grid_id=_int(g.get("grid_id", i), f"{where}.grid_id", 0),
                      level=_enum(g.get("level", 0), Level, f"{where}.level"),
                      mode=_enum(g.get("mode", 0), Mode, f"{where}.mode"),
                      grid_x=gx, grid_y=gy, grid_z=gz, in_x=ix, in_y=iy, in_z=iz,
                      out_x=ox, out_y=oy, out_z=oz,
                      regs_g=_int(g.get("regs_g", 1), f"{where}.regs_g", 0),
                      smem_g=_int(g.get("smem_g", 1), f"{where}.smem_g", 0),
                      warps=_int(g.get("warps", 1), f"{where}.warps", 0))
        try:
            check_fits_ports(p, cmd)
        except ValueError as exc:
            raise StimulusError(f"{where}: {exc}")
        if shapes.setdefault(cmd.grid_id, cmd.shape) != cmd.shape:
            raise StimulusError(f"{where}.grid_id: {cmd.grid_id} is reused with another shape "
                                "(the SM stubs identify a CTA's shape by its grid_id)")
        commands.append(cmd)
        at.append(_int(g.get("at", 0), f"{where}.at", 0))
    sm = data.get("sm", {})
    if not isinstance(sm, dict):
        raise StimulusError("sm: expected an object")
    opts = {}
    for key, v in sm.items():
        where = f"sm.{key}"
        if key in ("latency", "flush_latency"):
            opts[key] = _pair(v, where)
        elif key == "hold":
            if not isinstance(v, bool):
                raise StimulusError(f"{where}: expected true or false")
            opts[key] = v
        elif key == "seed":
            opts[key] = _int(v, where, 0)
        elif key == "grid_latency":
            if not isinstance(v, dict):
                raise StimulusError(f"{where}: expected an object")
            gl = {}
            for gid, pair in v.items():
                try:
                    gl[int(gid)] = _pair(pair, f"{where}.{gid}")
                except ValueError as exc:
                    raise StimulusError(f"{where}.{gid}: {exc}")
            opts[key] = gl
        else:
            raise StimulusError(f"{where}: unknown field")
    max_cycles = _int(data.get("max_cycles", 200000), "max_cycles", 1, 10 ** 7)
    ready = data.get("ready", 0.8)
    if isinstance(ready, bool) or not isinstance(ready, (int, float)) or not 0 < ready <= 1:
        raise StimulusError(f"ready: expected a probability in (0, 1], got {ready!r}")
    return Stimulus(p, commands, at, cfg, opts, max_cycles, float(ready))


def run_stimulus(stim):
    return run(stim.params, stim.commands, cfg=stim.cfg, at=stim.at,
               max_cycles=stim.max_cycles, **stim.sm)


def beat_json(b):
    d = {"kind": int(b.kind), "grid_id": b.grid_id}
    if b.kind == 0:
        d.update(level=b.level, mode=b.mode, grid=list(b.grid), inner=list(b.inner),
                 outer=list(b.outer))
        return d
    d.update(seq=b.seq, gpc=b.gpc, cnt=list(b.cnt), first_rank=b.first_rank, is_cga=b.is_cga,
             gcga_first=b.gcga_first, gcga_last=b.gcga_last, end_of_cga=b.end_of_cga,
             cga_id=b.cga_id)
    if b.kind == 2:
        d.update(ctaid=list(b.ctaid), cga_cta_id=b.cga_cta_id)
    return d


def result(res):
    """The result JSON of one golden run (``RunResult``)."""
    m = res.model
    return {
        "block": "wdist",
        "params": m.p.as_dict(),
        "cycles": res.cycles,
        "timeout": res.timeout,
        "quiescent": m.quiescent(),
        "fail_cnt": m.fail_cnt,
        "accept_cycle": res.accept_cycle,
        "launched": {str(k): v for k, v in m.launched.items()},
        "err": [{"cycle": t, "code": e.code, "grid_id": e.grid_id, "info": e.info}
                for t, e in m.errs],
        "bcast": [dict(beat_json(b), cycle=t) for t, b in m.bcast],
        "cta_id": {str(s): [{"cycle": t, "grid_id": r.grid_id, "seq": r.seq,
                             "ctaid": list(r.ctaid), "is_cga": r.is_cga,
                             "cga_cta_id": r.cga_cta_id, "cga_id": r.cga_id}
                            for t, r in recs] for s, recs in enumerate(m.cta_ids)},
        "flush_req": [{"cycle": t, "gpc": r.gpc, "cga_id": r.cga_id, "n_ctas": r.n_ctas}
                      for t, r in m.flush_reqs],
        "cga_complete": [{"cycle": t, "gpc": r.gpc, "cga_id": r.cga_id, "grid_id": r.grid_id,
                          "seq": r.seq} for t, r in m.cga_completes],
        "trace_records": len(m.traces),
    }


def outcome(m, quiescent, invariants="passed", **extra):
    """The timing-independent result of a run, from a ``WdistModel`` or a testbench's record of
    the RTL ports (attributes ``p``, ``commands``, ``cta_ids``, ``cga_completes``, ``errs``,
    ``bcast``): per ``grid_id`` of the accepted commands the sorted multiset of launched
    ``ctaid`` and the number of ``cga_complete``; the ``err`` beats as a sorted multiset of
    [code, grid_id, info]; ``quiescent`` at the end; ``invariants`` ("passed" or the checker's
    AssertionError message). ``timing`` (per grid: cmd transfer, first and last ``cta_id``
    transfer) and ``extra`` are informational, never compared."""
    ids, first, last = {}, {}, {}
    for s in range(m.p.N_SM):
        for t, r in m.cta_ids[s]:
            ids.setdefault(r.grid_id, []).append(list(r.ctaid))
            first[r.grid_id] = min(first.get(r.grid_id, t), t)
            last[r.grid_id] = max(last.get(r.grid_id, t), t)
    cgas = Counter(r.grid_id for _, r in m.cga_completes)
    accept = {}
    for t, c in m.commands:
        accept.setdefault(c.grid_id, t)
    grids = {str(g): {"ctas": len(ids.get(g, [])), "ctaids": sorted(ids.get(g, [])),
                      "cgas_completed": cgas[g]} for g in accept}
    timing = {str(g): {"cmd": accept[g], "first_cta": first.get(g), "last_cta": last.get(g)}
              for g in accept}
    return {"grids": grids,
            "err": sorted([e.code, e.grid_id, e.info] for _, e in m.errs),
            "quiescent": bool(quiescent), "invariants": invariants,
            "beats": len(m.bcast), "timing": timing, **extra}


def check_invariants(m, quiescent):
    """``golden.wdist.invariants`` on a record: "passed" or the first AssertionError's message.
    A grid still waiting at the end (SM stubs that hold their CTAs) is checked like one aborted
    after the units it launched (WD-V8); the end-state checks run only when ``quiescent``."""
    from golden.wdist.formats import Err, Level
    from golden.wdist.invariants import (_units, check_gpm, check_quiescent, check_raster,
                                         check_resources, check_units, grids_of)
    try:
        check_units(m)
        aborted = {e.grid_id: e.info for _, e in m.errs if e.code == Err.NEVER_FITS}
        for gb, beats in grids_of(m):
            total = gb.grid[0] * gb.grid[1] * gb.grid[2]
            if gb.grid_id not in aborted and sum(sum(b.cnt) for b in beats) < total:
                aborted[gb.grid_id] = (sum(sum(b.cnt) for b in beats) if gb.level == Level.PLAIN
                                       else len(_units(beats)))
        check_raster(m, aborted)
        check_resources(m)
        check_gpm(m)
        if quiescent:
            check_quiescent(m)
    except AssertionError as exc:
        return str(exc).splitlines()[0] if str(exc) else "AssertionError"
    return "passed"
