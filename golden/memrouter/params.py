"""Build parameters (MR-C1..C10), run-time configuration (MR-C11..C28) and the reference
configurations CFG-A..D and CFG-G64 (MR-GV1).

Build parameters are checked at construction with a ``ValueError`` naming the parameter and its
legal range, as the hardware constructors do. The run-time configuration is what the CSRs hold;
its legality (MR-C18..C21, PAGES <= PT_ENTRIES) is checked by PT_INIT, which refuses an illegal
one (MR-E12) — :func:`config_error` is that check.
"""

from dataclasses import asdict, dataclass, field, replace

__all__ = ["MemrouterParams", "Config", "PortQos", "Geometry", "SLOT_H", "slot_m", "parse_slots",
           "slot_text", "geometry", "config_error", "reference", "CFG_NAMES"]

SLOT_H = 0


def slot_m(m):
    """SLOT CSR value of target M(m): [0] kind = 1, [3:1] module."""
    return 1 | (m << 1)


def parse_slots(text):
    """'H,M0,H,M1' -> SLOT CSR values."""
    out = []
    for tok in text.replace(" ", "").split(","):
        if tok == "H":
            out.append(SLOT_H)
        elif tok[:1] == "M" and tok[1:].isdigit():
            out.append(slot_m(int(tok[1:])))
        else:
            raise ValueError(f"slot {tok!r}: expected H or M<module>")
    return tuple(out)


def slot_text(slots):
    return ",".join("H" if s & 1 == 0 else f"M{s >> 1}" for s in slots)


RANGES = {"LOG2G": (9, 16), "PT_ENTRIES": (256, 4096), "NUM_LINES": (4, 16), "N_PROC": (1, 4),
          "N_OFF": (1, 4), "MAX_LEN": (1, 16), "ROB_BEATS": (2, 1 << 16), "QDEN": (1, 255),
          "CMDQ_DEPTH": (1, 16), "EVT_DEPTH": (1, 16)}


def _check_int(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")


@dataclass(frozen=True)
class MemrouterParams:
    """Elaboration parameters (MR-C1..C10); defaults are the spec defaults."""
    LOG2G: int = 12
    PT_ENTRIES: int = 1024
    NUM_LINES: int = 8
    N_PROC: int = 1
    N_OFF: int = 3
    MAX_LEN: int = 8
    ROB_BEATS: int = 256
    QDEN: int = 24
    CMDQ_DEPTH: int = 4
    EVT_DEPTH: int = 4

    def __post_init__(self):
        for name, (lo, hi) in RANGES.items():
            _check_int(name, getattr(self, name), lo, hi)
        if self.PT_ENTRIES & (self.PT_ENTRIES - 1):
            raise ValueError(f"PT_ENTRIES must be a power of 2 in 256..4096, got {self.PT_ENTRIES}")
        _check_int("MAX_LEN", self.MAX_LEN, 1, min(16, self.NS))
        _check_int("ROB_BEATS", self.ROB_BEATS, 2 * self.MAX_LEN, 1 << 16)

    @property
    def G(self):
        return 1 << self.LOG2G

    @property
    def NS(self):
        return self.G >> 5

    def replace(self, **changes):
        return replace(self, **changes)


@dataclass
class PortQos:
    """Per-port QoS CSRs (MR-C26..C28)."""
    RATE_N: int = 3
    RATE_F: int = 0
    BURST_N: int = 8
    BURST_F: int = 8
    UTH: int = 0


@dataclass
class Config:
    """The run-time configuration held in the CSRs (MR-C11..C28); defaults are CFG-B's."""
    MODE: int = 0
    MIG_STALL: int = 0
    EN_EXPLICIT: int = 1
    EN_ACC: int = 0
    EN_SECT: int = 0
    FAR_ALLOC: int = 1
    WALK_PAUSE: int = 0
    WALK_STOP_EN: int = 0
    QOS_UTH_EN: int = 0
    SLOTS: tuple = parse_slots("H,M0,H,M1,H,M2,H")
    NEAR_FRAMES: int = 112
    NEAR_RESERVE: int = 0
    HBM_FRAMES: int = 64
    MOD_FRAMES: int = 256
    T_SECT: int = 32
    T_ACC: int = 16
    WINDOW: int = 4096
    WALK_STOP: int = 0
    MIG_OUTSTANDING: int = 8
    MIG_STARVE: int = 1024
    UW: int = 1024
    QOS: list = field(default_factory=lambda: [PortQos(12, 0)] + [PortQos() for _ in range(3)])

    CTRL_BITS = ("MODE", "MIG_STALL", "EN_EXPLICIT", "EN_ACC", "EN_SECT", "FAR_ALLOC",
                 "WALK_PAUSE", "WALK_STOP_EN", "QOS_UTH_EN")

    @property
    def ctrl(self):
        return sum(getattr(self, n) << i for i, n in enumerate(self.CTRL_BITS))

    def set_ctrl(self, word):
        for i, n in enumerate(self.CTRL_BITS):
            setattr(self, n, (word >> i) & 1)

    def copy(self, **changes):
        c = replace(self, QOS=[replace(q) for q in self.QOS])
        for k, v in changes.items():
            if not hasattr(c, k):
                raise ValueError(f"unknown configuration field {k!r}")
            setattr(c, k, parse_slots(v) if k == "SLOTS" and isinstance(v, str) else v)
        return c

    def as_dict(self):
        d = asdict(self)
        d["SLOTS"] = slot_text(self.SLOTS)
        return d


@dataclass(frozen=True)
class Geometry:
    """Quantities of §4.2 derived from the slot table and frame counts."""
    RLEN: int
    RON: int
    CNT: tuple          # slots per module
    REG: int
    CARVE: int
    FAR_FRAMES: int
    PAGES: int          # for the configured MODE


def geometry(params, cfg):
    """RLEN, RON, CNT[m], REG, CARVE, FAR_FRAMES and PAGES of §4.2 (no legality check)."""
    slots = cfg.SLOTS
    rlen = len(slots)
    ron = sum(1 for s in slots if s & 1 == 0)
    cnt = tuple(sum(1 for s in slots if s == slot_m(m)) for m in range(params.N_OFF))
    reg = cfg.NEAR_FRAMES // rlen if rlen else 0
    carve = reg * (cnt[0] if cnt else 0)
    far = params.N_OFF * (cfg.MOD_FRAMES - carve)
    pages = far if cfg.MODE == 1 else cfg.NEAR_FRAMES - cfg.NEAR_RESERVE + far
    return Geometry(rlen, ron, cnt, reg, carve, far, pages)


def config_error(params, cfg):
    """The reason PT_INIT refuses ``cfg`` (MR-E12: MR-C18..C21, PAGES > PT_ENTRIES), else None."""
    slots = cfg.SLOTS
    if not 1 <= len(slots) <= 16:
        return f"SLOT_LEN {len(slots)} not in 1..16"
    for s in slots:
        if s & 1 and not (s >> 1) < params.N_OFF:
            return f"slot module {s >> 1} >= N_OFF {params.N_OFF}"
        if s & ~0xF:
            return f"slot value {s:#x} has bits above [3:0]"
    g = geometry(params, cfg)
    if len(set(g.CNT)) > 1:
        return f"modules named unequally often in the slot table: {g.CNT}"
    if cfg.NEAR_FRAMES % g.RLEN or cfg.NEAR_FRAMES > params.PT_ENTRIES:
        return f"NEAR_FRAMES {cfg.NEAR_FRAMES} not a multiple of SLOT_LEN {g.RLEN} <= PT_ENTRIES"
    if not 0 <= cfg.NEAR_RESERVE <= cfg.NEAR_FRAMES:
        return f"NEAR_RESERVE {cfg.NEAR_RESERVE} not in 0..NEAR_FRAMES"
    if g.RON * g.REG > cfg.HBM_FRAMES:
        return f"RON*NEAR_FRAMES/SLOT_LEN = {g.RON * g.REG} > HBM_FRAMES {cfg.HBM_FRAMES}"
    if g.CARVE > cfg.MOD_FRAMES:
        return f"CARVE {g.CARVE} > MOD_FRAMES {cfg.MOD_FRAMES}"
    if g.PAGES > params.PT_ENTRIES:
        return f"PAGES {g.PAGES} > PT_ENTRIES {params.PT_ENTRIES}"
    if (max(cfg.HBM_FRAMES, cfg.MOD_FRAMES) << params.LOG2G) > (1 << 24):
        return "a port's capacity exceeds DEV_W = 24 address bits"
    return None


# MR-GV1: name -> (build parameter changes, config changes, OFF RATE_N/RATE_F)
_CFGS = {
    "A": (dict(N_OFF=2), dict(SLOTS="H,M0,H,H,M1,H", HBM_FRAMES=96, MOD_FRAMES=256,
                              NEAR_FRAMES=144), (3, 0)),
    "B": (dict(N_OFF=3), dict(SLOTS="H,M0,H,M1,H,M2,H", HBM_FRAMES=64, MOD_FRAMES=256,
                              NEAR_FRAMES=112), (3, 0)),
    "C": (dict(N_OFF=3), dict(SLOTS="H,M0,H,H,M1,H,H,M2,H", HBM_FRAMES=48, MOD_FRAMES=192,
                              NEAR_FRAMES=72), (2, 1)),
    "D": (dict(N_OFF=2), dict(SLOTS="H", HBM_FRAMES=96, MOD_FRAMES=256, NEAR_FRAMES=96), (0, 3)),
    "G64": (dict(N_OFF=3, LOG2G=16, PT_ENTRIES=256, NUM_LINES=4),
            dict(SLOTS="H,M0,H,M1,H,M2,H", HBM_FRAMES=8, MOD_FRAMES=5, NEAR_FRAMES=14), (3, 0)),
}
CFG_NAMES = tuple(_CFGS)


def build_reference(CFG=1, N_PROC=1, ROB_BEATS=256, LOG2G=0, NUM_LINES=0, **changes):
    """(params, config) of a build's parameters: reference configuration CFG_NAMES[CFG] with
    those hardware parameters (LOG2G and NUM_LINES of 0 keep the configuration's) and the
    config ``changes``."""
    hw = dict(N_PROC=N_PROC, ROB_BEATS=ROB_BEATS)
    hw.update((k, v) for k, v in (("LOG2G", LOG2G), ("NUM_LINES", NUM_LINES)) if v)
    return reference(CFG_NAMES[CFG], hw, **changes)


def reference(name, params=None, **changes):
    """(params, config) of reference configuration CFG-``name`` (MR-GV1), with ``changes``.

    ``params`` overrides build parameters (a dict); ``changes`` are config fields. T_SECT defaults
    to NS/4 (MR-C22)."""
    pchg, cchg, (rn, rf) = _CFGS[name]
    p = MemrouterParams(**{**pchg, **(params or {})})
    c = Config().copy(**cchg)
    c.T_SECT = p.NS // 4
    c.QOS = [PortQos(12, 0)] + [PortQos(rn, rf) for _ in range(p.N_OFF)]
    return p, c.copy(**changes)

