"""Golden vectors TQ-GV1 .. TQ-GV18 of spec trackq.md §5, transcribed once for the golden tests and
the RTL testbenches (TQ-GV16, the arbiter table, lives in ``golden.common.arbiter_vectors``;
TQ-GV19, the B-RAND benchmark, in ``golden.trackq.bench``).

§5 conventions: requests are offered in list order and held until accepted; unless stated,
resp.ready = 1, N_Q = 4, POOL = 16, FAST_PATH = 1, FAST_DEPTH = 4, COMMIT_DEPTH = 4, mode 4,
cfg_cgm = 8, in-order reclaim; cycle 0 is the first cycle after reset; "sX" is bank 0, dslot 0,
sector X; "hit" is need = 0; requests are L/G unless marked; L/G and TTU carry eoi = 1, eog = 0;
TEX eoi as stated, eog = 0 on input. Status packets carry cls = TEX and need = 0 (the spec gives
neither; the block ignores both for a status packet).

Each :class:`Vector` holds the stimulus and the expected values exactly as printed: per request
label the cycles ``ins``/``pop``/``cmt``/``resp`` and, where printed, the delivered ``eoi``/``eog``,
``q`` and ``cls``; counters and the final ``err``.
"""

from dataclasses import dataclass, field

from golden.common.arbiter_vectors import TQ_GV16, TQ_GV16_N
from golden.trackq.fifo import SingleFifoModel
from golden.trackq.formats import (ERR_CLS, ERR_FAST_MISS, ERR_FAST_TEX, ERR_INVAL_LIVE, ERR_TEX_SPLIT,
                                   LG, TEX, TTU, make_req)
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.trace import run_trace

__all__ = ["Vector", "VECTORS", "by_name", "run_vector", "regenerate", "TQ_GV16", "TQ_GV16_N",
           "GV1_MEANS", "GV12_SEQUENCE", "GV12_QUEUES", "s", "R"]


def s(x):
    """"sX": bank 0, dslot 0, sector X."""
    return (0, 0, x)


def R(label, offer, warp=0, cls=LG, needs=(), eoi=1, status=0, fast=0):
    """One request of a vector: (label, offer cycle, Req fields)."""
    return (label, offer, dict(warp=warp, cls=int(cls), sectors=tuple(needs), eoi=eoi,
                               is_status=status, fast_path=fast))


@dataclass(frozen=True)
class Vector:
    name: str                       # e.g. "TQ-GV4 in-order"
    ref: str                        # where in the spec
    requests: tuple                 # (label, offer, fields) in offer order
    expect: dict                    # label -> {"ins"/"pop"/"cmt"/"resp"/"eoi"/"eog"/"q"/"cls": v}
    fills: tuple = ()               # (cycle, (bank, dslot, sector))
    invals: tuple = ()              # (cycle, (bank, dslot))
    params: dict = field(default_factory=dict)    # changes to the §5 defaults
    cfg: dict = field(default_factory=dict)       # changes to the default config
    not_ready: tuple = ()           # cycles with resp.ready = 0
    counters: dict = field(default_factory=dict)
    err: int = None
    design: str = "tq"              # "tq" (TrackingQueues) or "fifo" (SingleFifo)
    min_cycles: int = 0

    def build(self):
        """(params, config, [(offer, Req)], labels)."""
        params = TrackqParams.gv(**self.params)
        cfg = params.default_config(**self.cfg)
        reqs, labels = [], []
        for k, (label, offer, f) in enumerate(self.requests):
            reqs.append((offer, make_req(k, banks=params.BANKS, **f)))
            labels.append(label)
        return params, cfg, reqs, labels


def _ids(prefix, n):
    return [f"{prefix}{k}" for k in range(n)]


VECTORS = []


def _add(v):
    VECTORS.append(v)
    return v


# TQ-GV1 (E1, hit behind miss) ------------------------------------------------------------------
_GV1_REQ = tuple(R(f"R{i}", i, warp=i, needs=[s(i)]) for i in range(4))
_GV1_FILLS = ((10, s(1)), (12, s(2)), (14, s(3)), (100, s(0)))
for _name, _design, _mode in (("mode 1", "tq", 0), ("SingleFifo", "fifo", 0),
                              ("mode 4", "tq", 3)):
    _pops = (100, 101, 102, 103) if _mode == 0 else (100, 10, 12, 14)
    _resps = (102, 103, 104, 105) if _mode == 0 else (102, 12, 14, 16)
    _add(Vector(f"TQ-GV1 {_name}", "§5 TQ-GV1", _GV1_REQ,
                {f"R{i}": {"pop": _pops[i], "resp": _resps[i]} for i in range(4)},
                fills=_GV1_FILLS, cfg={"cfg_mode": _mode}, design=_design))
# mean pop latency, mean resp latency (TQ-P2)
GV1_MEANS = {"mode 1": (100.0, 102.0), "SingleFifo": (100.0, 102.0), "mode 4": (32.5, 34.5)}

# TQ-GV2 (E2, order within a warp) --------------------------------------------------------------
_add(Vector("TQ-GV2 L/G", "§5 TQ-GV2",
            (R("R0", 0, needs=[s(0)]), R("R1", 1, needs=[s(1)])),
            {"R0": {"pop": 20, "resp": 22, "q": 0}, "R1": {"pop": 21, "resp": 23, "q": 0}},
            fills=((5, s(1)), (20, s(0)))))
_add(Vector("TQ-GV2 TTU", "§5 TQ-GV2",
            (R("R0", 0, cls=TTU, needs=[s(0)]), R("R1", 1, cls=TTU, needs=[s(1)])),
            {"R0": {"pop": 20, "resp": 22, "q": 0}, "R1": {"pop": 5, "resp": 7, "q": 1}},
            fills=((5, s(1)), (20, s(0)))))

# TQ-GV3 (E3, round-robin fairness, N_Q = 3) ----------------------------------------------------
_GV3_LABELS = ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]
_add(Vector("TQ-GV3", "§5 TQ-GV3",
            tuple(R(lab, k, warp="abc".index(lab[0]), needs=[s(0)])
                  for k, lab in enumerate(_GV3_LABELS)),
            {lab: {"pop": 20 + k} for k, lab in enumerate(_GV3_LABELS)},
            fills=((20, s(0)),), params={"N_Q": 3}))
_GV3V_LABELS = ["a0", "b0", "c0", "a1", "c1", "a2", "c2"]
_add(Vector("TQ-GV3 variant", "§5 TQ-GV3 (warp 1 sends only b0)",
            tuple(R(lab, k, warp="abc".index(lab[0]), needs=[s(0)])
                  for k, lab in enumerate(_GV3V_LABELS)),
            {lab: {"pop": 20 + k} for k, lab in enumerate(_GV3V_LABELS)},
            fills=((20, s(0)),), params={"N_Q": 3}))

# TQ-GV4 (E4, shared pool and in-order reclaim, POOL = 4) -----------------------------------------
_GV4_REQ = tuple(R(lab, i, warp=i, needs=[s(i)]) for i, lab in enumerate("ABCD")) + (
    R("E", 4, warp=1),)
_GV4_FILLS = ((5, s(1)), (6, s(2)), (7, s(3)), (50, s(0)))
_GV4_COMMON = {"A": {"pop": 50, "resp": 52}, "B": {"pop": 5, "resp": 7},
               "C": {"pop": 6, "resp": 8}, "D": {"pop": 7, "resp": 9}}
_add(Vector("TQ-GV4 in-order", "§5 TQ-GV4", _GV4_REQ,
            {**_GV4_COMMON, "E": {"ins": 53, "pop": 54, "resp": 56}},
            fills=_GV4_FILLS, params={"POOL": 4}, counters={"cnt_req_stall": 49}))
_add(Vector("TQ-GV4 free-list", "§5 TQ-GV4", _GV4_REQ,
            {**_GV4_COMMON, "E": {"ins": 8, "pop": 9, "resp": 11}},
            fills=_GV4_FILLS, params={"POOL": 4}, cfg={"cfg_reclaim": 1},
            counters={"cnt_req_stall": 4}))

# TQ-GV5 (commit groups and instruction lock, cfg_cgm = 2) --------------------------------------
_add(Vector("TQ-GV5", "§5 TQ-GV5",
            tuple(R(f"P{i}", i, warp=0, cls=TEX, eoi=int(i == 4), needs=[s(1)] if i == 2 else ())
                  for i in range(5))
            + (R("Q0", 5, warp=1, cls=TEX, eoi=1), R("L", 6, warp=2)),
            {"P0": {"eog": 0, "eoi": 0, "pop": 1, "cmt": 3, "resp": 4},
             "P1": {"eog": 1, "eoi": 0, "pop": 2, "cmt": 4, "resp": 5},
             "P2": {"eog": 0, "eoi": 0, "pop": 30, "cmt": 32, "resp": 33},
             "P3": {"eog": 1, "eoi": 0, "pop": 31, "cmt": 33, "resp": 34},
             "P4": {"eog": 0, "eoi": 1, "pop": 32, "cmt": 34, "resp": 35},
             "Q0": {"eog": 0, "eoi": 1, "pop": 6, "cmt": 35, "resp": 36},
             "L": {"eog": 0, "eoi": 1, "pop": 7, "cmt": 8, "resp": 9}},
            fills=((30, s(1)),), cfg={"cfg_cgm": 2}))
GV5_LOCK = (4, 34)      # set by P1's commit, released by P4's commit (lock_valid shows in 5..34)

# TQ-GV6 (oldest-first rule, cfg_cgm = 2) -------------------------------------------------------
_add(Vector("TQ-GV6", "§5 TQ-GV6",
            (R("L0", 0, warp=0, needs=[s(0)]),) + tuple(
                R(f"T{i}", 1 + i, warp=1, cls=TEX, eoi=int(i == 2)) for i in range(3)),
            {"L0": {"pop": 20, "cmt": 21, "resp": 22}, "T0": {"pop": 2, "cmt": 22, "resp": 23},
             "T1": {"pop": 3, "cmt": 23, "resp": 24}, "T2": {"pop": 4, "cmt": 24, "resp": 25}},
            fills=((20, s(0)),), cfg={"cfg_cgm": 2}))

# TQ-GV7 (status ordering) ----------------------------------------------------------------------
_add(Vector("TQ-GV7", "§5 TQ-GV7",
            (R("X", 0, warp=0, cls=TEX, needs=[s(0)], eoi=1), R("S", 1, cls=TEX, status=1),
             R("Y", 2, warp=1, cls=TEX, eoi=1), R("Z", 3, warp=2)),
            {"X": {"pop": 20, "cmt": 21, "resp": 22}, "S": {"cmt": 22, "resp": 23},
             "Y": {"pop": 3, "cmt": 23, "resp": 24}, "Z": {"pop": 4, "cmt": 5, "resp": 6}},
            fills=((20, s(0)),)))

# TQ-GV8 (status in mid-instruction) ------------------------------------------------------------
_add(Vector("TQ-GV8", "§5 TQ-GV8",
            (R("T0", 0, warp=0, cls=TEX, eoi=0), R("S", 1, cls=TEX, status=1),
             R("T1", 2, warp=0, cls=TEX, eoi=1)),
            {"T0": {"pop": 1, "cmt": 2, "resp": 3, "eog": 1, "eoi": 0},
             "S": {"cmt": 3, "resp": 4}, "T1": {"pop": 3, "cmt": 4, "resp": 5}}))
GV8_LOCK = (2, 4)       # set by T0's commit, released by T1's commit

# TQ-GV9 (fast/slow interlock and output hold) --------------------------------------------------
_GV9_REQ = (R("A", 0, warp=0), R("F", 1, warp=1, fast=1), R("B", 2, warp=2))
_add(Vector("TQ-GV9a", "§5 TQ-GV9 (a)", _GV9_REQ,
            {"A": {"pop": 1, "cmt": 2, "resp": 7}, "F": {"resp": 6, "tsnap": 1},
             "B": {"pop": 3, "cmt": 7, "resp": 8, "seq": 1}},
            not_ready=tuple(range(6)), counters={"cnt_interlock": 3, "cnt_resp_stall": 4}))
_add(Vector("TQ-GV9b", "§5 TQ-GV9 (b)", _GV9_REQ,
            {"A": {"resp": 3}, "F": {"resp": 2}, "B": {"cmt": 4, "resp": 5}},
            counters={"cnt_interlock": 0}))
_add(Vector("TQ-GV9c", "§5 TQ-GV9 (c)", (R("A", 0, warp=0), R("F", 3, warp=1, fast=1)),
            {"A": {"resp": 5}, "F": {"resp": 6}},
            not_ready=tuple(range(5)), counters={"cnt_resp_stall": 2}))

# TQ-GV10 (single queue holds the whole pool) ---------------------------------------------------
_GV10_EXPECT = {f"W{k}": {"ins": k, "pop": 100 + k, "resp": 102 + k} for k in range(16)}
_GV10_EXPECT["W16"] = {"ins": 103, "pop": 116, "resp": 118}
_add(Vector("TQ-GV10", "§5 TQ-GV10",
            tuple(R(f"W{k}", k, warp=0, needs=[s(0)]) for k in range(17)), _GV10_EXPECT,
            fills=((100, s(0)),), counters={"cnt_req_stall": 87, "cnt_pool_full": 87}))
GV10_NOT_READY = (16, 102)      # req.ready = 0 exactly in cycles 16..102

# TQ-GV11 (error routing) -----------------------------------------------------------------------
_add(Vector("TQ-GV11", "§5 TQ-GV11",
            (R("F1", 0, warp=0, needs=[s(0)], fast=1), R("F2", 1, warp=1, cls=TEX, eoi=1, fast=1),
             R("F3", 2, warp=2, cls=3), R("F4", 3, warp=3, cls=TTU, fast=1)),
            {"F1": {"q": 0, "pop": 5, "cmt": 6, "resp": 7},
             "F2": {"q": 1, "pop": 2, "cmt": 3, "resp": 5},
             "F3": {"q": 2, "pop": 3, "cmt": 4, "resp": 6, "cls": 0},
             "F4": {"src": 2, "resp": 4}},
            fills=((5, s(0)),), err=ERR_CLS | ERR_FAST_TEX | ERR_FAST_MISS,
            counters={"cnt_fast": 1}))
_add(Vector("TQ-GV11 FAST_PATH=0", "§5 TQ-GV11 (FAST_PATH = 0)", (R("F", 0, fast=1),),
            {"F": {"src": 0, "pop": 1, "resp": 3}}, params={"FAST_PATH": 0}, err=0))
_add(Vector("TQ-GV11 TEX fast miss", "§5 TQ-GV11 (lone TEX fast_path miss)",
            (R("T", 0, warp=0, cls=TEX, eoi=1, needs=[s(0)], fast=1),),
            {"T": {"q": 0, "pop": 3, "resp": 5}}, fills=((3, s(0)),),
            err=ERR_FAST_TEX | ERR_FAST_MISS, counters={"cnt_err": 1}))

# TQ-GV12 (mapping, N_Q = 4, cfg_lgq = 2, fresh reset per mode) ---------------------------------
GV12_SEQUENCE = ((LG, 0), (TTU, 0), (TEX, 1), (TTU, 5), (LG, 3), (TTU, 2), (TTU, 0), (TEX, 6))
GV12_QUEUES = {1: (0, 0, 0, 0, 0, 0, 0, 0), 2: (0, 1, 0, 2, 0, 3, 1, 0),
               3: (0, 2, 1, 3, 1, 2, 3, 0), 4: (0, 0, 1, 1, 3, 2, 3, 2)}
for _mode, _queues in GV12_QUEUES.items():
    _add(Vector(f"TQ-GV12 mode {_mode}", "§5 TQ-GV12",
                tuple(R(f"M{k}", k, warp=w, cls=c, eoi=1)
                      for k, (c, w) in enumerate(GV12_SEQUENCE)),
                {f"M{k}": {"q": q} for k, q in enumerate(_queues)},
                cfg={"cfg_mode": _mode - 1, "cfg_lgq": 2}))

# TQ-GV13 (same-cycle fill bypass) --------------------------------------------------------------
_add(Vector("TQ-GV13a", "§5 TQ-GV13 (a)",
            (R("H", 0, warp=0), R("A", 1, warp=1, needs=[s(0)]), R("R0", 2, warp=0, needs=[s(0)]),
             R("R1", 3, warp=0, needs=[s(1)])),
            {"H": {"pop": 1}, "A": {"pop": 10, "resp": 12}, "R0": {"pop": 11, "resp": 13},
             "R1": {"pop": 12, "resp": 14}},
            fills=((10, s(0)), (11, s(1)))))
_add(Vector("TQ-GV13b", "§5 TQ-GV13 (b)", (R("X", 0, warp=2, needs=[s(2)]),),
            {"X": {"pop": 1, "resp": 3}}, fills=((0, s(2)),)))

# TQ-GV14 (inval) -------------------------------------------------------------------------------
_add(Vector("TQ-GV14a", "§5 TQ-GV14 (a)",
            (R("A", 0, warp=0, needs=[s(0)]), R("B", 8, warp=1, needs=[s(0)])),
            {"A": {"pop": 1, "resp": 3}, "B": {"pop": 15, "resp": 17}},
            fills=((1, s(0)), (15, s(0))), invals=((4, (0, 0)),), err=0))
_add(Vector("TQ-GV14b", "§5 TQ-GV14 (b)", (R("A", 0, warp=0, needs=[s(0)]),),
            {"A": {"pop": 9, "resp": 11}}, fills=((9, s(0)),), invals=((3, (0, 0)),),
            err=ERR_INVAL_LIVE))

# TQ-GV15 (TEX split and L/G-closed group) ------------------------------------------------------
_add(Vector("TQ-GV15", "§5 TQ-GV15",
            (R("T0", 0, warp=0, cls=TEX, eoi=0), R("T1", 1, warp=1, cls=TEX, eoi=1),
             R("T2", 2, warp=0, cls=TEX, eoi=0), R("L", 3, warp=2),
             R("T3", 4, warp=0, cls=TEX, eoi=1)),
            {"T0": {"cmt": 2, "resp": 3, "eoi": 1, "eog": 0}, "T1": {"cmt": 3, "resp": 4},
             "T2": {"cmt": 4, "resp": 5, "eoi": 0, "eog": 1}, "L": {"cmt": 5, "resp": 6},
             "T3": {"cmt": 6, "resp": 7}},
            err=ERR_TEX_SPLIT))
GV15_LOCK = (4, 6)      # set by T2's commit, L passes it, released by T3's commit

# TQ-GV17 (P1 latency) --------------------------------------------------------------------------
for _lm in (50, 500):
    for _design in ("tq", "fifo"):
        _r1 = (2, 4) if _design == "tq" else (_lm + 1, _lm + 3)
        _add(Vector(f"TQ-GV17 Lm={_lm} {'mode 4' if _design == 'tq' else 'SingleFifo'}",
                    "§5 TQ-GV17", (R("R0", 0, warp=0, needs=[s(0)]), R("R1", 1, warp=1)),
                    {"R0": {"resp": _lm + 2}, "R1": {"pop": _r1[0], "resp": _r1[1],
                                                     "latency": 3 if _design == "tq" else _lm + 2}},
                    fills=((_lm, s(0)),), design=_design))

# TQ-GV18 (throughput) --------------------------------------------------------------------------
for _case, _warps in (("4 warps", 4), ("1 warp", 1)):
    _add(Vector(f"TQ-GV18 {_case}", "§5 TQ-GV18",
                tuple(R(f"H{i}", i, warp=i % _warps) for i in range(64)),
                {f"H{i}": {"resp": 3 + i} for i in range(64)},
                counters={"cnt_req_stall": 0}))
_add(Vector("TQ-GV18 COMMIT_DEPTH=1", "§5 TQ-GV18 (COMMIT_DEPTH = 1, single warp)",
            tuple(R(f"H{i}", i, warp=0) for i in range(64)), {"H63": {"resp": 129}},
            params={"COMMIT_DEPTH": 1}, counters={"cnt_req_stall": 35}))


def by_name(name):
    for v in VECTORS:
        if v.name == name:
            return v
    raise KeyError(name)


def run_vector(v, keep_cycles=True):
    """Run one vector through its design; returns (TraceResult, labels)."""
    params, cfg, reqs, labels = v.build()
    model = SingleFifoModel(params) if v.design == "fifo" else TrackingQueuesModel(params)
    not_ready = frozenset(v.not_ready)
    res = run_trace(model, reqs, fills=v.fills, invals=v.invals, cfg=cfg,
                    resp_ready=lambda c: int(c not in not_ready), keep_cycles=keep_cycles,
                    min_cycles=v.min_cycles)
    return res, labels


_FIELD = {"ins": "accept", "pop": "pop", "cmt": "cmt", "resp": "resp", "eoi": "eoi",
          "eog": "eog", "cls": "resp_cls", "src": "resp_src", "seq": "seq", "tsnap": "tsnap"}


def regenerate(v):
    """The vector's table as the model generates it: same labels and columns as ``v.expect``
    (TQ-V17), plus the counters and err the vector states."""
    res, labels = run_vector(v, keep_cycles=False)
    table = {}
    for label, want in v.expect.items():
        rec = res.entries[labels.index(label)]
        row = {}
        for col in want:
            if col == "q":
                row[col] = rec.q if rec.src == 0 else None
            elif col == "latency":
                row[col] = rec.resp - rec.accept
            else:
                row[col] = getattr(rec, _FIELD[col])
        table[label] = row
    counters = {k: res.counters[k] for k in v.counters}
    return table, counters, res.err, res
