"""trackq build parameters (TQ-C1..C12) and run-time configuration (TQ-C13..C16, TQ-E6..E8).

Build parameters are checked at construction with a ``ValueError`` naming the parameter and its
legal range (TQ-C17), as the hardware constructors do. Run-time config values are port values:
one that does not fit its port width cannot exist on the wire and raises ``ValueError``; one that
fits but is illegal is legalised every cycle (clamped or ignored) and raises ERR_CFG (TQ-E6..E8),
which is what the block does.
"""

from dataclasses import asdict, dataclass, fields as dc_fields

from golden.trackq.formats import ERR_CFG, FREELIST, INORDER

__all__ = ["RANGES", "TEST_DEFAULTS", "FULL_DEFAULTS", "GV_DEFAULTS", "TrackqParams", "Config",
           "EffectiveConfig", "legalise", "clog2"]


def clog2(n):
    """⌈log2 n⌉ for n >= 1."""
    return (n - 1).bit_length()


# Legal ranges of §3.3 (SEQ_W's lower bound depends on POOL and is checked separately).
RANGES = {
    "N_Q": (1, 64), "POOL": (2, 4096), "N_WARPS": (1, 64), "BANKS": (1, 8), "SECTORS": (4, 4),
    "DSLOTS": (2, 4096), "ID_W": (1, 32), "FAST_PATH": (0, 1), "FAST_DEPTH": (1, 64),
    "COMMIT_DEPTH": (1, 64), "FREELIST": (0, 1),
}

TEST_DEFAULTS = dict(N_Q=4, POOL=16, N_WARPS=8, BANKS=4, SECTORS=4, DSLOTS=16, ID_W=8,
                     FAST_PATH=1, FAST_DEPTH=2, COMMIT_DEPTH=4, FREELIST=1, SEQ_W=16)
FULL_DEFAULTS = dict(N_Q=48, POOL=512, N_WARPS=64, BANKS=4, SECTORS=4, DSLOTS=256, ID_W=16,
                     FAST_PATH=1, FAST_DEPTH=4, COMMIT_DEPTH=4, FREELIST=1, SEQ_W=16)
# §5 "Conventions for all vectors": the test defaults with FAST_DEPTH = 4.
GV_DEFAULTS = dict(TEST_DEFAULTS, FAST_DEPTH=4)


def _check_int(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")


@dataclass(frozen=True)
class TrackqParams:
    """Build parameters of one ``TrackingQueues`` instance; defaults are the test defaults (§3.3).

    Derived widths (TQ-I1..I9): ``Q_W``, ``WARP_W``, ``BANK_W``, ``DSLOT_W``, ``OCC_W``, ``CGM_W``,
    ``FAST_OCC_W``.
    """
    N_Q: int = 4
    POOL: int = 16
    N_WARPS: int = 8
    BANKS: int = 4
    SECTORS: int = 4
    DSLOTS: int = 16
    ID_W: int = 8
    FAST_PATH: int = 1
    FAST_DEPTH: int = 2
    COMMIT_DEPTH: int = 4
    FREELIST: int = 1
    SEQ_W: int = 16

    def __post_init__(self):
        for name, (lo, hi) in RANGES.items():
            _check_int(name, getattr(self, name), lo, hi)
        _check_int("SEQ_W", self.SEQ_W, clog2(self.POOL) + 3, 32)

    @classmethod
    def test(cls, **changes):
        return cls(**{**TEST_DEFAULTS, **changes})

    @classmethod
    def full(cls, **changes):
        return cls(**{**FULL_DEFAULTS, **changes})

    @classmethod
    def gv(cls, **changes):
        """The parameters of the §5 golden vectors, with ``changes``."""
        return cls(**{**GV_DEFAULTS, **changes})

    def replace(self, **changes):
        return TrackqParams(**{**asdict(self), **changes})

    def as_dict(self):
        return asdict(self)

    # derived widths ---------------------------------------------------------------------------
    @property
    def Q_W(self):
        return max(1, clog2(self.N_Q))

    @property
    def WARP_W(self):
        return max(1, clog2(self.N_WARPS))

    @property
    def BANK_W(self):
        return max(1, clog2(self.BANKS))

    @property
    def DSLOT_W(self):
        return clog2(self.DSLOTS)

    @property
    def OCC_W(self):
        return self.POOL.bit_length()

    @property
    def CGM_W(self):
        return self.POOL.bit_length()

    @property
    def FAST_OCC_W(self):
        return self.FAST_DEPTH.bit_length()

    @property
    def SPAN(self):
        """The age-span limit of §4.4 STEP 1: req.ready needs seq_next − G < 2^(SEQ_W−2)."""
        return 1 << (self.SEQ_W - 2)

    def default_config(self, **changes):
        """The test-default run-time config of §3.3 with ``changes``: mode 4 (cfg_mode = 3),
        cfg_lgq = N_Q/2, cfg_cgm = 8 (POOL when POOL < 8: 8 would not fit the CGM_W-bit port),
        in-order reclaim. The full-size default cfg_cgm is 32 (pass it as a change)."""
        base = dict(cfg_mode=3, cfg_lgq=self.N_Q // 2, cfg_cgm=min(8, self.POOL), cfg_reclaim=0)
        base.update(changes)
        return Config(**base).checked(self)


@dataclass(frozen=True)
class Config:
    """Run-time config inputs (TQ-I6), as port values: ``cfg_mode`` is mode − 1."""
    cfg_mode: int = 3
    cfg_lgq: int = 2
    cfg_cgm: int = 8
    cfg_reclaim: int = 0

    def checked(self, params):
        """``self`` if every field fits its port width (TQ-I6), else ValueError naming it."""
        widths = {"cfg_mode": 2, "cfg_lgq": params.Q_W, "cfg_cgm": params.CGM_W,
                  "cfg_reclaim": 1}
        for f in dc_fields(self):
            value = getattr(self, f.name)
            width = widths[f.name]
            if isinstance(value, bool) or not isinstance(value, int) \
                    or not 0 <= value < (1 << width):
                raise ValueError(f"{f.name} = {value!r} does not fit its {width}-bit port "
                                 f"(0..{(1 << width) - 1})")
        return self

    def replace(self, **changes):
        return Config(**{**asdict(self), **changes})

    def as_dict(self):
        return asdict(self)


@dataclass(frozen=True)
class EffectiveConfig:
    """The legalised config of one cycle (§4.4 STEP 0): ``mode`` is 1..4 as acted on."""
    mode: int
    lgq: int
    cgm: int
    reclaim: int
    errors: int


def legalise(params, cfg):
    """STEP 0: the config a cycle acts on, and its ERR_CFG event (TQ-E6, TQ-E7, TQ-E8).

    - cfg_cgm outside 1..POOL is clamped into that range (TQ-E6);
    - in mode 3, cfg_lgq outside 1..N_Q−1 is clamped; mode 2 or 3 with N_Q = 1 acts as mode 1
      (TQ-E7); mode 4 with N_Q = 1 is legal;
    - cfg_reclaim = 1 with FREELIST = 0 is ignored (TQ-E8).
    Each sets ERR_CFG in every cycle it is present.
    """
    cfg.checked(params)
    err = 0
    mode = cfg.cfg_mode + 1
    cgm = cfg.cfg_cgm
    if not 1 <= cgm <= params.POOL:
        cgm = min(max(cgm, 1), params.POOL)
        err = ERR_CFG
    lgq = cfg.cfg_lgq
    if mode in (2, 3) and params.N_Q == 1:
        mode = 1
        err = ERR_CFG
    elif mode == 3 and not 1 <= lgq <= params.N_Q - 1:
        lgq = min(max(lgq, 1), params.N_Q - 1)
        err = ERR_CFG
    reclaim = cfg.cfg_reclaim
    if reclaim == FREELIST and not params.FREELIST:
        reclaim = INORDER
        err = ERR_CFG
    return EffectiveConfig(mode=mode, lgq=lgq, cgm=cgm, reclaim=reclaim, errors=err)
