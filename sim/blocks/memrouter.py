"""Flow adapter of the memory router: stimulus schema, golden run, comparison, demo, bench.

Stimulus (docs/memrouter.md, "Stimulus")::

    {"params": {"CFG": "CFG-B", "N_PROC": 1, "ROB_BEATS": 256},       # optional: the build
     "config": {"MODE": 0, "FAR_ALLOC": 1, "NEAR_RESERVE": 1,          # optional: run-time CSRs
                "SLOTS": "H,M0,H,M1,H,M2,H", "QOS": [{"port": 1, "RATE_N": 2, "RATE_F": 1}]},
     "pt": [{"ppn": 5, "state": "UNMAPPED"},                           # optional PT_DATA writes
            {"ppn": 6, "state": "STABLE", "pool": "FAR", "port": 2, "frame": 40}],
     "poison": [{"port": 0, "dev": "0x20"}, {"addr": "0x3040"}],       # optional poisoned sectors
     "requests": [{"port": 0, "addr": "0x1000", "len": 7},             # a read of 8 sectors
                  {"port": 0, "addr": "0x2000", "len": 1, "wr": 1, "id": 9,
                   "data": ["0x11", "0x22"], "be": ["0xffffffff", "0x0000ffff"], "at": 100}],
     "mig_cmds": [{"op": "PROMOTE", "ppn": 200, "at": 50},             # optional (golden only)
                  {"op": "SWAP", "ppn": 201, "victim": 3}],
     "flush": [400],                                                   # optional (golden only)
     "seed": 1, "max_cycles": 200000, "ready": 0.8, "gap": 0.0}

``params`` are the registry's build parameters (``CFG`` also as "CFG-B", "B" or an index into
A, B, C, D, G64). ``config`` fields are those of ``golden.memrouter.params.Config`` (the §3.3
CSRs: CTRL bits, frame registers, T_*, WINDOW, ...; ``SLOTS`` as "H,M0,..." or a list; ``QOS``
a list of per-port changes); unset fields keep the reset configuration of the build
(``reference(CFG)`` with ``RESET_CHANGES``). Requests: ``len`` = sectors - 1 as on ``preq``
(0..15, > MAX_LEN - 1 gives E_RANGE); ``wr`` 0/1; write ``data``/``be`` per beat as hex strings
or integers (default: random data from ``seed``, full byte enables); ``id`` defaults to the
request's index mod 256; ``at`` (default 0) is the earliest cycle, counted from the end of the
set-up (reset, PT_INIT, configuration, PT writes), at which the request is offered.

The global order (MR-F1) is ``requests``, ``mig_cmds`` and ``flush`` sorted by ``at``
(stable; at one cycle requests, then commands, then flushes). The golden router takes them in
that order and settles after each (its cycle counter advanced by the ``at`` differences). The
RTL testbench (``tb.memrouter.run_tb``) offers every request at its ``at`` on its port, in
order per port, and holds a request back while an earlier one of another port with a common
sector (one of the two a write) is not accepted, so the RTL's acceptance order gives the same
result as the golden order. ``rtl_unsupported`` lists what an RTL run cannot be compared on.

Result (golden and RTL alike): ``responses`` per processor port (``id``, ``wr``, ``data`` and
``err`` per beat), ``mreqs`` (every memory request ``[port, class, device address, sectors,
wr]``, sorted: a multiset), ``ports`` (per memory port the RD_N .. WR_M beat counters),
``counters`` (0x200..), ``events`` (``evt``), ``written`` (final content of every device sector
written), ``pt_writes`` (CSR err per ``pt`` entry), ``mig_cmds`` (err per command; golden also
MIG_STATUS after it). The golden result adds ``pt_changes`` (entries that differ from PT_INIT
at the end) and the RTL result ``cycles`` and ``order``.
"""

import random

from golden.memrouter.formats import (CLASS_NAMES, EVENT_NAMES, FULL_BE, OP_DEMOTE, OP_PROMOTE,
                                      OP_SWAP, PTE, Desc)
from golden.memrouter.params import CFG_NAMES, Config, PortQos, build_reference, \
    config_error, parse_slots
from sim.errors import UsageError
from sim.stimulus import checked_object, field, int_or_text

__all__ = ["build_top", "mr_config", "parse", "rtl_unsupported", "golden", "compare", "summary",
           "demo_stimulus", "bench", "plot", "TESTBENCH", "BENCH_TB", "RESET_CHANGES"]

TESTBENCH = "tb.memrouter.run_tb"
BENCH_TB = "tb.memrouter.bench_tb"

# Reset configuration of the flow's builds: CFG-x with these changes (none: the spec's reset
# values, FAR_ALLOC = 1 by MR-C15); the stimulus default follows.
RESET_CHANGES = dict()

MAX_REQUESTS = 20_000
MAX_CYCLES = 10_000_000
PORT_BEATS = (("RD_N", 0, 0), ("RD_F", 0, 1), ("RD_M", 0, 2),
              ("WR_N", 1, 0), ("WR_F", 1, 1), ("WR_M", 1, 2))       # (name, wr, cls)
_TOP_KEYS = {"params", "config", "pt", "poison", "requests", "mig_cmds", "flush", "seed",
             "max_cycles", "ready", "gap"}
_REQ_KEYS = {"port", "addr", "len", "wr", "id", "data", "be", "at"}
_OPS = {"PROMOTE": OP_PROMOTE, "DEMOTE": OP_DEMOTE, "SWAP": OP_SWAP}
_STATES = {"UNMAPPED": 0, "STABLE": 1}
MIG_STATUS_NAMES = ("IDLE", "BUSY", "DONE", "REJ_RANGE", "REJ_STATE", "REJ_NOFRAME", "ABORTED",
                    "REJ_FULL")
_POOLS = {"NEAR": 0, "FAR": 1}
# config fields: (lo, hi); None = check against NS
_CTRL = Config.CTRL_BITS
_CFG_RANGES = {"NEAR_FRAMES": (0, 4096), "NEAR_RESERVE": (0, 4096), "HBM_FRAMES": (1, 1 << 15),
               "MOD_FRAMES": (1, 1 << 15), "T_SECT": (1, None), "T_ACC": (1, 255),
               "WINDOW": (0, (1 << 32) - 1), "WALK_STOP": (0, None), "MIG_OUTSTANDING": (1, 64),
               "MIG_STARVE": (0, 65535), "UW": (1, 65535)}
_QOS_RANGES = {"RATE_N": (0, 65535), "RATE_F": (0, 65535), "BURST_N": (1, 255),
               "BURST_F": (1, 255), "UTH": (0, 65535)}


# -- build ------------------------------------------------------------------------------------

def mr_config(CFG=1, N_PROC=1, ROB_BEATS=256, LOG2G=0, NUM_LINES=0, POISON=0, **changes):
    """(MemrouterParams, reset Config) of the registry parameters (ValueError when illegal).

    ``LOG2G`` and ``NUM_LINES`` of 0 keep the reference configuration's (MR-C1, MR-C3);
    ``POISON`` is a property of the build, not of the configuration."""
    if isinstance(CFG, bool) or not isinstance(CFG, int) or not 0 <= CFG < len(CFG_NAMES):
        raise ValueError(f"CFG must be an integer in 0..{len(CFG_NAMES) - 1} "
                         f"({', '.join(CFG_NAMES)}), got {CFG!r}")
    return build_reference(CFG, N_PROC, ROB_BEATS, LOG2G, NUM_LINES,
                           **{**RESET_CHANGES, **changes})


def build_top(CFG=1, N_PROC=1, ROB_BEATS=256, LOG2G=0, NUM_LINES=0, POISON=0):
    """``Memrouter`` of reference configuration ``CFG_NAMES[CFG]`` (CFG-B by default) with
    ``RESET_CHANGES`` as its CSR reset values; ``POISON`` 1: a test build whose colliding
    block-RAM reads return inverted data."""
    from hw.memrouter.top import Memrouter
    if POISON not in (0, 1) or isinstance(POISON, bool):
        raise ValueError(f"POISON must be 0 or 1, got {POISON!r}")
    p, cfg = mr_config(CFG, N_PROC, ROB_BEATS, LOG2G, NUM_LINES)
    return Memrouter(p, cfg, poison=POISON)


# -- stimulus ---------------------------------------------------------------------------------

def _prob(data, key, default):
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise UsageError(f"{key}: expected a probability in (0, 1], got {value!r}")
    return float(value)


def _params(raw, block):
    raw = dict(checked_object(raw, "params", {p.name for p in block.params}))
    if "CFG" in raw and isinstance(raw["CFG"], str):
        name = raw["CFG"].upper()
        name = name[4:] if name.startswith("CFG-") else name
        if name not in CFG_NAMES:
            raise UsageError(f"params.CFG: {raw['CFG']!r} is not one of "
                             f"{', '.join('CFG-' + n for n in CFG_NAMES)} or an index")
        raw["CFG"] = CFG_NAMES.index(name)
    params = block.resolve_params(raw)
    try:
        p, cfg = mr_config(**params)
    except ValueError as exc:
        raise UsageError(f"params: {exc}") from None
    return params, p, cfg


def _slots(value, p):
    where = "config.SLOTS"
    if isinstance(value, list):
        value = ",".join(str(v) if isinstance(v, str) else ("H" if v == 0 else f"M{v >> 1}")
                         for v in value)
    if not isinstance(value, str):
        raise UsageError(f"{where}: expected \"H,M0,...\" or a list of H / M<m>")
    try:
        slots = parse_slots(value)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    if not 1 <= len(slots) <= 16:
        raise UsageError(f"{where}: {len(slots)} slots, 1..16 allowed")
    return slots


def _config(raw, p, cfg):
    """The run-time Config: the build's reset configuration with ``raw``'s changes."""
    if not isinstance(raw, dict):
        raise UsageError("config: expected an object of Config fields")
    cfg = cfg.copy()
    for key, value in raw.items():
        where = f"config.{key}"
        if key in _CTRL:
            setattr(cfg, key, int_or_text(value, where, 0, 1))
        elif key in _CFG_RANGES:
            lo, hi = _CFG_RANGES[key]
            setattr(cfg, key, int_or_text(value, where, lo, p.NS if hi is None else hi))
        elif key == "SLOTS":
            cfg.SLOTS = _slots(value, p)
        elif key == "QOS":
            if not isinstance(value, list):
                raise UsageError(f"{where}: expected a list of {{port, RATE_N, ...}}")
            for k, q in enumerate(value):
                w = f"{where}[{k}]"
                checked_object(q, w, {"port", *_QOS_RANGES})
                j = int_or_text(field(q, "port", w), f"{w}.port", 0, p.N_OFF)
                for name, (lo, hi) in _QOS_RANGES.items():
                    if name in q:
                        setattr(cfg.QOS[j], name, int_or_text(q[name], f"{w}.{name}", lo, hi))
        else:
            known = ", ".join([*_CTRL, "SLOTS", *_CFG_RANGES, "QOS"])
            raise UsageError(f"{where}: unknown configuration field (fields: {known})")
    err = config_error(p, cfg)
    if err:
        raise UsageError(f"config: PT_INIT refuses this configuration (MR-E12): {err}")
    return cfg


def _name_or_int(value, where, names, lo, hi):
    if isinstance(value, str) and value.upper() in names:
        return names[value.upper()]
    if isinstance(value, str) and not value[:1].isdigit():
        raise UsageError(f"{where}: {value!r} is not one of {', '.join(names)}")
    return int_or_text(value, where, lo, hi)


def _pt(items, p, cfg):
    if not isinstance(items, list):
        raise UsageError("pt: expected a list of {ppn, state, pool, port, frame} or {ppn, pte}")
    max_frame = (1 << 24) >> p.LOG2G
    out = []
    for k, obj in enumerate(items):
        w = f"pt[{k}]"
        checked_object(obj, w, {"ppn", "state", "pool", "port", "frame", "pte"})
        ppn = int_or_text(field(obj, "ppn", w), f"{w}.ppn", 0, p.PT_ENTRIES - 1)
        if "pte" in obj:
            if len(obj) != 2:
                raise UsageError(f"{w}: give either pte or state/pool/port/frame")
            pte = PTE.decode(int_or_text(obj["pte"], f"{w}.pte", 0, (1 << 32) - 1))
        else:
            state = _name_or_int(field(obj, "state", w), f"{w}.state", _STATES, 0, 1)
            pool = _name_or_int(obj.get("pool", "NEAR"), f"{w}.pool", _POOLS, 0, 1)
            port = int_or_text(obj.get("port", 0), f"{w}.port", 0, p.N_OFF)
            frame = int_or_text(obj.get("frame", 0), f"{w}.frame", 0, max_frame - 1)
            pte = PTE.of(state, pool, Desc(port, frame))
        if pte.state not in (0, 1):
            raise UsageError(f"{w}.state: only UNMAPPED (0) and STABLE (1) can be written "
                             f"(a MIGRATING page without a migration would hold forever)")
        if pte.state == 1:
            frames = cfg.HBM_FRAMES if pte.port == 0 else cfg.MOD_FRAMES
            if pte.port > p.N_OFF or pte.frame >= frames:
                raise UsageError(f"{w}: port {pte.port} frame {pte.frame} is outside the "
                                 f"memory (HBM_FRAMES {cfg.HBM_FRAMES}, MOD_FRAMES "
                                 f"{cfg.MOD_FRAMES}, ports 0..{p.N_OFF})")
        out.append([ppn, pte.encode()])
    return out


def _poison(items, p, cfg, pt_writes):
    from golden.memrouter.ifmap import pt_init
    if not isinstance(items, list):
        raise UsageError("poison: expected a list of {port, dev} or {addr}")
    init = pt_init(p, cfg)
    pt = list(init.pt)
    for ppn, word in pt_writes:
        pt[ppn] = PTE.decode(word)
    out, per_port = [], {}
    for k, obj in enumerate(items):
        w = f"poison[{k}]"
        checked_object(obj, w, {"port", "dev", "addr"})
        if "addr" in obj:
            if "port" in obj or "dev" in obj:
                raise UsageError(f"{w}: give either addr (partition) or port and dev (device)")
            a = int_or_text(obj["addr"], f"{w}.addr", 0, (init.pages << p.LOG2G) - 1)
            e = pt[a >> p.LOG2G]
            if e.state != 1:
                raise UsageError(f"{w}.addr: page {a >> p.LOG2G} is not mapped")
            j, dev = e.port, e.desc.dev(a & (p.G - 1) & ~31, p.LOG2G)
        else:
            j = int_or_text(field(obj, "port", w), f"{w}.port", 0, p.N_OFF)
            frames = cfg.HBM_FRAMES if j == 0 else cfg.MOD_FRAMES
            dev = int_or_text(field(obj, "dev", w), f"{w}.dev", 0, (frames << p.LOG2G) - 32)
            if dev & 31:
                raise UsageError(f"{w}.dev: {dev:#x} is not sector (32-byte) aligned")
        per_port[j] = per_port.get(j, 0) + 1
        if per_port[j] > 4:
            raise UsageError(f"{w}: more than 4 poisoned sectors on port {j} "
                             f"(the port model has 4 poison registers, MR-I10)")
        out.append([j, dev])
    return out


def _beats(obj, key, w, nb, rng, default):
    if key not in obj:
        return [default(rng) for _ in range(nb)]
    value = obj[key]
    if not isinstance(value, list) or len(value) != nb:
        raise UsageError(f"{w}.{key}: expected a list of {nb} values (one per beat, len + 1)")
    bits = 256 if key == "data" else 32
    return [int_or_text(v, f"{w}.{key}[{b}]", 0, (1 << bits) - 1) for b, v in enumerate(value)]


def _requests(items, p, rng):
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_REQUESTS:
        raise UsageError(f"requests: expected a list of 1..{MAX_REQUESTS} requests")
    out = []
    for k, obj in enumerate(items):
        w = f"requests[{k}]"
        checked_object(obj, w, _REQ_KEYS)
        port = int_or_text(obj.get("port", 0), f"{w}.port", 0, p.N_PROC - 1)
        addr = int_or_text(field(obj, "addr", w), f"{w}.addr", 0, (1 << 32) - 1)
        ln = int_or_text(field(obj, "len", w), f"{w}.len", 0, 15)
        wr = int_or_text(obj.get("wr", 0), f"{w}.wr", 0, 1)
        rid = int_or_text(obj.get("id", k & 0xFF), f"{w}.id", 0, 0xFF)
        at = int_or_text(obj.get("at", 0), f"{w}.at", 0, MAX_CYCLES)
        req = {"k": k, "port": port, "addr": addr, "len": ln, "wr": wr, "id": rid, "at": at}
        if wr:
            req["data"] = [f"{x:x}" for x in _beats(obj, "data", w, ln + 1, rng,
                                                    lambda r: r.getrandbits(256))]
            req["be"] = [f"{x:x}" for x in _beats(obj, "be", w, ln + 1, rng,
                                                  lambda r: FULL_BE)]
        elif "data" in obj or "be" in obj:
            raise UsageError(f"{w}: data and be belong to writes (wr = 1)")
        out.append(req)
    return out


def _mig_cmds(items):
    if not isinstance(items, list):
        raise UsageError("mig_cmds: expected a list of {op, ppn, victim, at}")
    out = []
    for k, obj in enumerate(items):
        w = f"mig_cmds[{k}]"
        checked_object(obj, w, {"op", "ppn", "victim", "at"})
        op = _name_or_int(field(obj, "op", w), f"{w}.op", _OPS, 0, 15)
        out.append({"op": op, "ppn": int_or_text(field(obj, "ppn", w), f"{w}.ppn", 0, 0xFFFF),
                    "victim": int_or_text(obj.get("victim", 0), f"{w}.victim", 0, 0xFFFF),
                    "at": int_or_text(obj.get("at", 0), f"{w}.at", 0, MAX_CYCLES)})
    return out


def parse(data, block):
    """Validate a user's stimulus (UsageError naming the field); returns (params, normalized).

    The normalized stimulus has every default filled in: ``config`` is the whole
    ``Config.as_dict()``, writes carry hex ``data``/``be`` per beat, ``poison`` is
    ``[[port, device address]]``, ``pt`` is ``[[ppn, PT_DATA word]]``."""
    if not isinstance(data, dict):
        raise UsageError("stimulus: the top level must be a JSON object")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise UsageError(f"stimulus.{sorted(unknown)[0]}: unknown field "
                         f"(fields: {', '.join(sorted(_TOP_KEYS))})")
    params, p, reset_cfg = _params(field(data, "params", "stimulus", dict, default={}), block)
    cfg = _config(data.get("config", {}), p, reset_cfg)
    seed = int_or_text(data.get("seed", 1), "seed", 0)
    rng = random.Random(seed)
    pt = _pt(data.get("pt", []), p, cfg)
    poison = _poison(data.get("poison", []), p, cfg, pt)
    requests = _requests(field(data, "requests", "stimulus"), p, rng)
    mig = _mig_cmds(data.get("mig_cmds", []))
    flush = data.get("flush", [])
    if not isinstance(flush, list):
        raise UsageError("flush: expected a list of cycles (one FLUSH, CMD = 2, at each)")
    flush = [int_or_text(x, f"flush[{k}]", 0, MAX_CYCLES) for k, x in enumerate(flush)]
    max_cycles = int_or_text(data.get("max_cycles", 200_000), "max_cycles", 1, MAX_CYCLES)
    cfg_dict = cfg.as_dict()
    cfg_dict["QOS"] = [dict(q) for q in cfg_dict["QOS"]]
    return params, {"config": cfg_dict, "pt": pt, "poison": poison, "requests": requests,
                    "mig_cmds": mig, "flush": flush, "seed": seed, "max_cycles": max_cycles,
                    "ready": _prob(data, "ready", 0.8), "gap": _gap(data)}


def _gap(data):
    value = data.get("gap", 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise UsageError(f"gap: expected a probability in [0, 1), got {value!r}")
    return float(value)


def stim_config(stim):
    """The golden ``Config`` of a normalized stimulus."""
    d = dict(stim["config"])
    qos = [PortQos(**q) for q in d.pop("QOS")]
    cfg = Config().copy(**d)
    cfg.QOS = qos
    return cfg


def rtl_unsupported(stim):
    """Why ``run`` cannot compare an RTL run of ``stim`` with the golden model (one line), or
    None. ``run`` compares exactly; a migration (a MIG_CMD, or the ACC / SECT triggers) or a
    FLUSH between requests makes the result depend on timing the golden router does not model
    (walker runs, which requests see a line). Those are verified by tests/rtl/
    test_memrouter_mig.py and the flat-reference tests of test_memrouter_top.py."""
    if stim["mig_cmds"]:
        return ("mig_cmds: an RTL run with migration commands is timing-dependent and cannot be "
                "compared exactly; use --sim golden")
    for key in ("EN_ACC", "EN_SECT"):
        if stim["config"][key]:
            return (f"config.{key}: automatic migration makes an RTL run timing-dependent; "
                    f"use --sim golden")
    if stim["flush"]:
        return ("flush: a FLUSH between requests is not played by the RTL testbench; use "
                "--sim golden")
    if stim["config"]["FAR_ALLOC"] and len({r["port"] for r in stim["requests"]}) > 1:
        return ("config.FAR_ALLOC: with requests on several ports the lines' LRU order depends "
                "on the RTL's acceptance order across ports; use one port, FAR_ALLOC 0 or "
                "--sim golden")
    return None


def schedule(stim):
    """The global order: [("req", request) | ("mig", k, cmd) | ("flush", cycle)] by ``at``."""
    items = [((r["at"], 0, n), ("req", r)) for n, r in enumerate(stim["requests"])]
    items += [((c["at"], 1, n), ("mig", n, c)) for n, c in enumerate(stim["mig_cmds"])]
    items += [((t, 2, n), ("flush", t)) for n, t in enumerate(stim["flush"])]
    return [x for _, x in sorted(items, key=lambda x: x[0])]


# -- golden -----------------------------------------------------------------------------------

def _hex(v):
    return f"{v:064x}"


def port_beats(beats):
    """{RD_N..WR_M: n} of a golden port's {(wr, cls): n}."""
    return {name: beats[(wr, cls)] for name, wr, cls in PORT_BEATS}


def golden(params, stim):
    """The golden router (``golden.memrouter.router.Router`` + ``csr.Csr``) on the stimulus in
    the global order, settled after every item."""
    from golden.memrouter.csr import Csr
    from golden.memrouter.router import Router
    p, _ = mr_config(**params)
    r = Router(p, stim_config(stim))
    csr = Csr(r)
    pt_errs = []
    for ppn, word in stim["pt"]:
        csr.write("PT_ADDR", ppn)
        pt_errs.append(csr.write("PT_DATA", word))
    for j, dev in stim["poison"]:
        r.ports[j].poison.add(dev)
    responses = [[] for _ in range(p.N_PROC)]
    mig, now = [], 0
    for item in schedule(stim):
        at = item[1]["at"] if item[0] == "req" else item[2]["at"] if item[0] == "mig" else item[1]
        if at > now:
            r.tick(at - now)
            now = at
        if item[0] == "req":
            q = item[1]
            data = [int(x, 16) for x in q.get("data", [])] or None
            be = [int(x, 16) for x in q.get("be", [])] or None
            while r.request(q["port"], q["id"], q["addr"], q["len"] + 1, bool(q["wr"]),
                            data, be) is None:
                if not r.step():
                    raise RuntimeError("golden router: request never accepted")
        elif item[0] == "mig":
            c = item[2]
            csr.write("MIG_ARG", c["victim"])
            err = csr.write("MIG_CMD", c["op"] | c["ppn"] << 16)
            mig.append({"k": item[1], "op": c["op"], "ppn": c["ppn"], "victim": c["victim"],
                        "err": err})
        else:
            csr.write("CMD", 2)
        r.settle()
        if item[0] == "mig":
            code = csr.read("MIG_STATUS") & 0xF
            mig[-1]["mig_status"] = MIG_STATUS_NAMES[code]
        for i in range(p.N_PROC):
            responses[i] += r.responses(i)
    written = {}
    for m in r.ports.log:
        if m.wr:
            for k in range(m.nb):
                a = m.addr + 32 * k
                written.setdefault(str(m.port), {})[f"{a:x}"] = _hex(r.ports[m.port].read_sector(a))
    from golden.memrouter.ifmap import pt_init
    init = pt_init(p, r.cfg)
    return {
        "responses": [[{"id": x.id, "wr": int(x.wr), "err": [e for _, e in x.beats],
                        "data": [_hex(d) for d, _ in x.beats]} for x in out]
                      for out in responses],
        "mreqs": sorted([m.port, CLASS_NAMES[m.cls], m.addr, m.nb, int(m.wr)]
                        for m in r.ports.log),
        "ports": [port_beats(port.beats) for port in r.ports.ports],
        "counters": {k: v & 0xFFFFFFFF for k, v in r.counters.items()},
        "events": [{"code": EVENT_NAMES.get(c, c), "line": ln, "ppn": pp, "arg": a}
                   for c, ln, pp, a in r.events],
        "written": written,
        "pt_writes": pt_errs,
        "mig_cmds": [{k: v for k, v in c.items() if k != "k"}
                     for c in sorted(mig, key=lambda c: c["k"])],
        "pt_changes": {str(k): e.encode() for k, e in enumerate(r.pt)
                       if e.encode() != init.pt[k].encode()},
        "order": [q["k"] for kind, q, *_ in schedule(stim) if kind == "req"],
    }


# -- comparison -------------------------------------------------------------------------------

def _multiset_diff(want, got):
    from collections import Counter
    w, g = Counter(map(tuple, want)), Counter(map(tuple, got))
    missing, extra = sorted((w - g).elements()), sorted((g - w).elements())
    out = []
    if missing:
        out.append(f"{len(missing)} golden-only (e.g. {list(missing[0])})")
    if extra:
        out.append(f"{len(extra)} RTL-only (e.g. {list(extra[0])})")
    return ", ".join(out)


def compare(expected, actual):
    """Mismatch descriptions. Compared: every response per processor port in order (id, wr,
    err and data per beat); the multiset of memory requests; per-port beat counters; the
    counters; the events in order; the final content of every written device sector; the err
    of every PT write and MIG_CMD write. Not compared: cycles, the golden-only ``pt_changes``."""
    problems = []
    want_r, got_r = expected["responses"], actual.get("responses", [])
    for i in range(max(len(want_r), len(got_r))):
        w = want_r[i] if i < len(want_r) else []
        g = got_r[i] if i < len(got_r) else []
        if len(w) != len(g):
            problems.append(f"prsp[{i}]: {len(g)} responses from the RTL, {len(w)} expected")
        for n, (a, b) in enumerate(zip(w, g)):
            for key in ("id", "wr", "err", "data"):
                if a[key] != b[key]:
                    if key in ("err", "data"):
                        beat = next(k for k, (x, y) in enumerate(zip(a[key], b[key])) if x != y) \
                            if len(a[key]) == len(b[key]) else "count"
                        problems.append(f"prsp[{i}] response {n} (id {a['id']}): {key} of beat "
                                        f"{beat}: RTL {b[key] if beat == 'count' else b[key][beat]}"
                                        f", golden {a[key] if beat == 'count' else a[key][beat]}")
                    else:
                        problems.append(f"prsp[{i}] response {n}: {key} RTL {b[key]}, golden "
                                        f"{a[key]}")
                    break
    if sorted(map(tuple, expected["mreqs"])) != sorted(map(tuple, actual.get("mreqs", []))):
        problems.append("memory requests [port, class, addr, sectors, wr] differ: "
                        + _multiset_diff(expected["mreqs"], actual.get("mreqs", [])))
    if len(expected["ports"]) != len(actual.get("ports", [])):
        problems.append(f"beat counters of {len(actual.get('ports', []))} memory ports from the "
                        f"RTL, {len(expected['ports'])} expected")
    for j, (w, g) in enumerate(zip(expected["ports"], actual.get("ports", []))):
        for name in w:
            if w[name] != g.get(name):
                problems.append(f"port {j} {name}: RTL {g.get(name)}, golden {w[name]}")
    for name, value in expected["counters"].items():
        if actual.get("counters", {}).get(name) != value:
            problems.append(f"counter {name}: RTL {actual.get('counters', {}).get(name)}, "
                            f"golden {value}")
    if expected["events"] != actual.get("events"):
        problems.append(f"events differ: RTL {len(actual.get('events', []))}, golden "
                        f"{len(expected['events'])} (first golden {expected['events'][:1]}, "
                        f"RTL {actual.get('events', [])[:1]})")
    got_w = actual.get("written", {})
    for j, sectors in expected["written"].items():
        for a, v in sectors.items():
            if got_w.get(j, {}).get(a) != v:
                problems.append(f"port {j} sector {int(a, 16):#x}: RTL "
                                f"{got_w.get(j, {}).get(a)}, golden {v}")
    for j, sectors in got_w.items():
        for a in set(sectors) - set(expected["written"].get(j, {})):
            problems.append(f"port {j} sector {int(a, 16):#x}: written by the RTL only")
    if expected["pt_writes"] != actual.get("pt_writes"):
        problems.append(f"PT_DATA write err: RTL {actual.get('pt_writes')}, golden "
                        f"{expected['pt_writes']}")
    want_m = [c["err"] for c in expected["mig_cmds"]]
    got_m = [c["err"] for c in actual.get("mig_cmds", [])]
    if want_m != got_m:
        problems.append(f"MIG_CMD write err: RTL {got_m}, golden {want_m}")
    return problems


def summary(params, stim, result):
    resp = [x for port in result["responses"] for x in port]
    names = {1: "E_RANGE", 2: "E_UNMAPPED", 3: "E_POISON"}
    errs = {}
    for e in (e for x in resp for e in x["err"] if e):
        errs[names.get(e, e)] = errs.get(names.get(e, e), 0) + 1
    out = {"requests": len(stim["requests"]), "responses": len(resp),
           "reads": sum(1 for x in resp if not x["wr"]),
           "writes": sum(1 for x in resp if x["wr"]),
           "mreqs": len(result["mreqs"]), "error_beats": errs,
           "events": len(result["events"])}
    if stim["mig_cmds"]:
        out["mig_cmds"] = len(stim["mig_cmds"])
    if "cycles" in result:
        out["cycles"] = result["cycles"]
    return out


def demo_stimulus(params, rng, n=48):
    """A short random mix for ``make``'s demo: reads and writes (partial byte enables) over
    near HBM, near carve-out and far pages (through lines with one processor port), one
    request crossing a page, one range error, one unmapped page, one poisoned HBM sector."""
    from golden.memrouter.ifmap import pt_init
    p, cfg = mr_config(**params)
    init = pt_init(p, cfg)
    used = cfg.NEAR_FRAMES - cfg.NEAR_RESERVE
    hbm = [q for q in range(used) if init.pt[q].port == 0][:4]
    carve = [q for q in range(used) if init.pt[q].port != 0][:4]
    far = list(range(used, min(init.pages, used + 4)))
    unmapped = far[-1]
    pages = hbm + carve + far[:-1]
    hot = [(rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS - 8) for _ in range(6)]
    reqs = []
    for k in range(n):
        nb = rng.randint(1, p.MAX_LEN)
        addr = rng.choice(hot) if rng.random() < 0.4 else \
            (rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS - nb + 1)
        req = {"port": rng.randrange(p.N_PROC), "addr": hex(addr), "len": nb - 1,
               "wr": int(rng.random() < 0.5), "at": 4 * k}
        if req["wr"]:
            req["be"] = [hex(rng.choice((FULL_BE, rng.getrandbits(32)))) for _ in range(nb)]
        reqs.append(req)
    reqs.append({"addr": hex(((hbm[0] + 1) << p.LOG2G) - 64), "len": 3, "at": 4 * n})  # split
    reqs.append({"addr": hex((hbm[1] << p.LOG2G) + 4), "len": 0, "at": 4 * n})          # E_RANGE
    reqs.append({"addr": hex(unmapped << p.LOG2G), "len": 1, "at": 4 * n})              # E_UNMAPPED
    reqs.append({"addr": hex((hbm[0] << p.LOG2G) + 32), "len": 2, "at": 4 * n})         # poison
    stim = {"params": params, "pt": [{"ppn": unmapped, "state": "UNMAPPED"}],
            "poison": [{"addr": hex((hbm[0] << p.LOG2G) + 64)}],
            "requests": reqs, "seed": rng.randrange(1 << 16), "ready": 0.8}
    if p.N_PROC > 1:            # far pages direct: see rtl_unsupported
        stim["config"] = {"FAR_ALLOC": 0}
    return stim


# -- benchmark (gpublocks bench memrouter) ----------------------------------------------------

OFF_BEATS = 1250                # one OFF port in the 10,000-cycle window at 1/8 beat per cycle
SHARE_WINDOW = 500              # cycles per sample of the bandwidth-share plot
PEAK = {"A": 0.75, "B": 0.875, "D": 0.5}        # the ports' sum of beats per cycle (MR-GV19)


def _bench_tb(build, testcase, seed, sim, label, tb=BENCH_TB, **env):
    """One testcase of testbench ``tb`` (``tb.memrouter.bench_tb`` by default) on test build
    ``build`` (tb.memrouter.builds); its result JSON."""
    import json
    import tempfile
    from pathlib import Path

    from sim.cocotb_run import run_testbench
    from tb.memrouter.builds import BLOCK, BUILDS

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        env = {k: str(v) for k, v in env.items()}
        res = run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), tb,
                            testcase=testcase, sim=sim, seed=seed, label=label,
                            env={"GPUBLOCKS_RESULT": str(out), **env})
        data = json.loads(out.read_text())
        data["_seconds"] = {"build": round(res.build_seconds, 1), "sim": round(res.test_seconds, 1)}
        return data


def measure_streaming(seed, sim):
    """MR-P1..P3: streaming beats/cycle on CFG-B (build B), CFG-A and CFG-D (build A2)."""
    runs = {"B": _bench_tb("B", "streaming", seed, sim, "bench_mr_stream_B"),
            "A": _bench_tb("A2", "streaming", seed, sim, "bench_mr_stream_A"),
            "D": _bench_tb("A2", "streaming", seed, sim, "bench_mr_stream_D", RUN_CFG="D")}
    bw = {k: v["bandwidth"] for k, v in runs.items()}
    return {
        "stream_bw_fraction_512_256": round(bw["A"] / PEAK["A"], 4),
        "stream_bw_fraction_512_384": round(bw["B"] / PEAK["B"], 4),
        "speedup_vs_hbm_512_256": round(bw["A"] / bw["D"], 4),
        "speedup_vs_hbm_512_384": round(bw["B"] / bw["D"], 4),
        "streaming": {f"CFG-{k}": {"beats_per_cycle": round(bw[k], 4), "peak": PEAK[k],
                                   "prsp_beats": runs[k]["beats"], "seconds": runs[k]["_seconds"]}
                      for k in runs},
    }


def measure_qos(seed, sim):
    """MR-P4/P5 on CFG-C (build C2): near share per OFF port at RATE 2/1 and 1/2, and each class
    alone (work conservation); per-window samples for the plot."""
    shares, errors, windows = {}, [], {}
    for rn, rf in ((2, 1), (1, 2)):
        res = _bench_tb("C2", "qos", seed, sim, f"bench_mr_qos_{rn}{rf}", QOS_RATE=f"{rn},{rf}",
                        QOS_SAMPLE=SHARE_WINDOW)
        target = rn / (rn + rf)
        per = {}
        for j, (n, f) in res["shares"].items():
            share = n / (n + f) if n + f else 0.0
            errors.append(abs(share - target) * 100)
            per[j] = {"near": n, "far": f, "near_share": round(share, 4),
                      "port_use": round((n + f) / OFF_BEATS, 4)}
        shares[f"RATE_{rn}_{rf}"] = {"target_near_share": round(target, 4), "ports": per}
        if "samples" in res:
            windows[f"RATE_{rn}_{rf}"] = res["samples"]
    alone = {}
    fractions = []
    for near, far in ((1, 0), (0, 1)):
        res = _bench_tb("C2", "qos", seed, sim, f"bench_mr_alone_{near}{far}", QOS_NEAR=near,
                        QOS_FAR=far)
        key = "near_alone" if near else "far_alone"
        per = {j: (n if near else f) for j, (n, f) in res["shares"].items()}
        fractions += [v / OFF_BEATS for v in per.values()]
        alone[key] = {j: {"beats": v, "fraction": round(v / OFF_BEATS, 4)} for j, v in per.items()}
    return {
        "qos_near_share_error_pp": round(max(errors), 3),
        "work_conserving_fraction": round(min(fractions), 4),
        "qos": {"shares": shares, "alone": alone, "window": [5000, 15000],
                "port_capacity_beats": OFF_BEATS},
        "qos_samples": {"window_cycles": SHARE_WINDOW, "runs": windows},
    }


TRACE_N = 20_000                # expanded trace accesses of the MR-P9 benchmark


def measure_migration(seed, sim):
    """MR-P6, P7, P10: an explicit PROMOTE of an idle far page into a free HBM frame on CFG-B
    (``tb.memrouter.mig_tb`` ``promote_time``, checked exactly against the golden router), at
    the reset MIG_OUTSTANDING = 8 and at 16."""
    res = _bench_tb("B", "promote_time", seed, sim, "bench_mr_promote", tb="tb.memrouter.mig_tb")
    deep = _bench_tb("B", "promote_time", seed, sim, "bench_mr_promote16",
                     tb="tb.memrouter.mig_tb", MIG_OUTSTANDING=16)
    return {"migration_proc_link_beats": res["proc_link_extra_beats"],
            "promotion_far_read_bytes": res["far_read_bytes"],
            "promotion_near_write_bytes": res["near_write_bytes"],
            "promotion_cycles": res["mig_cycles"],
            "promotion_cycles_outstanding16": deep["mig_cycles"]}


def measure_trace(seed, sim):
    """MR-P9: the recorded trace (first TRACE_N accesses) on CFG-D, without and with automatic
    migration (``tb.memrouter.trace_tb``, both runs checked against the flat reference)."""
    out = {}
    for migrate, name in ((0, "static"), (1, "migrating")):
        res = _bench_tb("A2", "program_trace", seed, sim, f"bench_mr_trace{migrate}",
                        tb="tb.memrouter.trace_tb", MIGRATE=migrate, TRACE_N=TRACE_N)
        out[f"trace_hbm_fraction_{name}"] = res["F_HBM"]
        out[f"trace_{name}"] = {k: res[k] for k in ("F_HBM", "F_NEARM", "F_LINE", "F_FILL",
                                                    "F_FARD", "migrations", "requests",
                                                    "accesses", "cycles")}
    return out


def bench(block, seed, sim="verilator"):
    """The §4.14 benchmarks on the RTL (``tb.memrouter.bench_tb`` on the test builds of
    ``tb.memrouter.builds``, every run checked against the golden router inside the
    testbench): streaming (MR-P1..P3), QoS (MR-P4, P5), a promotion (MR-P6, P7, P10) and the
    program trace (MR-P9)."""
    from tb.memrouter.builds import BUILDS
    figures = {}
    figures.update(measure_streaming(seed, sim))
    figures.update(measure_qos(seed, sim))
    figures.update(measure_migration(seed, sim))
    figures.update(measure_trace(seed, sim))
    figures["targets"] = {"stream_bw_fraction": 0.97, "speedup_vs_hbm_512_256": 1.455,
                          "speedup_vs_hbm_512_384": 1.6975, "qos_near_share_error_pp": 2.0,
                          "work_conserving_fraction": 0.97, "migration_proc_link_beats": 0,
                          "promotion_far_read_bytes": 4096, "promotion_near_write_bytes": 4096,
                          "promotion_cycles": 1600,
                          "trace_hbm_fraction_migrating": "> trace_hbm_fraction_static"}
    figures["config"] = {
        "sim": sim, "builds": {k: dict(v) for k, v in BUILDS.items()},
        "build_use": {"CFG-B": "B", "CFG-A": "A2", "CFG-D": "A2 reprogrammed (RUN_CFG=D)",
                      "CFG-C QoS": "C2"},
        "memory": "golden cycle-exact port models (HBM 4/8 beat/cycle LAT 32, OFF 1/8 LAT 96), "
                  "prsp.ready = 1",
        "window": "cycles [5000, 15000) after the first accepted header",
        "streaming": "NSTR = SLOT_LEN streams of len-7 reads over the used near pages, "
                     "(near pages only, so FAR_ALLOC does not matter)",
        "promotion": "CFG-B, NEAR_RESERVE 1, FAR_ALLOC 1, idle system, explicit PROMOTE of the "
                     "first far page into the free HBM frame",
        "trace": f"tb/memrouter/traces/gzip.mtrace.gz, first {TRACE_N} expanded accesses, "
                 "CFG-D exclusive, 8 lines, FAR_ALLOC 1, MIG_STALL 0; run 2 EN_ACC 1 T_ACC 16 "
                 "WINDOW 4096 EN_SECT 1 T_SECT 32",
        "qos": "CFG-C, N_PROC 2, ROB_BEATS 1024, preq[0] carve-out reads, preq[1] far reads; "
               "share = near / (near + far) sectors on mreq per OFF port",
        "baseline": "CFG-D (HBM alone) on the same A2 build",
    }
    return figures


def plot(figures, path):
    """Near / far beats per ``SHARE_WINDOW`` cycles on every OFF port in the two QoS runs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = figures.get("qos_samples", {}).get("runs", {})
    w = figures.get("qos_samples", {}).get("window_cycles", SHARE_WINDOW)
    fig, axes = plt.subplots(1, max(1, len(runs)), figsize=(6 * max(1, len(runs)), 4),
                             squeeze=False)
    for ax, (name, samples) in zip(axes[0], runs.items()):
        for j, series in sorted(samples.items()):
            t = [w * (k + 0.5) for k in range(len(series["near"]))]
            ax.plot(t, series["near"], label=f"port {j} near", lw=1.2)
            ax.plot(t, series["far"], label=f"port {j} far", lw=1.2, ls="--")
        ax.axvspan(5000, 15000, color="0.92", zorder=0)
        ax.set_title(f"CFG-C {name.replace('_', ' ', 1).replace('_', '/')}: beats per {w} cycles")
        ax.set_xlabel("cycle (from the first accepted request)")
        ax.set_ylabel("sectors of requests accepted on mreq")
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle("memrouter QoS: bandwidth shares per OFF port over time (RTL)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
