"""wdist build parameters (WD-C1..C22), their legal ranges and the derived widths of §3.2.

Parameters are checked at construction with a ``ValueError`` that names the parameter and its
legal range, as the hardware constructors do. The SM map of §3.3 (global index, TPCs, CPCs)
lives here because every other module needs it.
"""

from dataclasses import asdict, dataclass

__all__ = ["WdistParams", "clog2", "RANGES", "BENCH"]


def clog2(n):
    """⌈log2 n⌉ for n >= 1 (0 for n = 1)."""
    return (n - 1).bit_length()


RANGES = {
    "N_GPC": (1, 16), "SM_PER_TPC": (1, 4), "REG_CAP_G": (1, 256), "SMEM_CAP_G": (1, 1023),
    "WARP_CAP": (1, 64), "CTA_SLOTS": (1, 63), "MAX_CGA_CTAS": (1, 32), "MAX_OUTER": (1, 16),
    "GPC_CGA_ID_W": (1, 8), "CGA_CREDIT_PER_SM": (1, 4), "SEQ_W": (1, 16), "GX_W": (1, 32),
    "GY_W": (1, 16), "GZ_W": (1, 16), "GRID_ID_W": (1, 16), "SESSION_MAX_STEPS": (1, 255),
    "CMD_FIFO_DEPTH": (1, 16), "RASTER_FIFO_DEPTH": (2, 16), "TRACE": (0, 1),
    "MAX_FLAT_CTAS": (1, 256),
}

# §3.5 benchmark machine: 16 GPCs x 8 SMs, default capacities.
BENCH = dict(N_GPC=16, SM_PER_GPC=(8,) * 16)


def _check_int(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")


@dataclass(frozen=True)
class WdistParams:
    """Build parameters of one ``wd_top`` (§3.3). ``SM_PER_GPC=None`` means (8,) x N_GPC."""
    N_GPC: int = 4
    SM_PER_GPC: tuple = None
    SM_PER_TPC: int = 2
    REG_CAP_G: int = 256
    SMEM_CAP_G: int = 912
    WARP_CAP: int = 64
    CTA_SLOTS: int = 32
    MAX_CGA_CTAS: int = 16
    MAX_OUTER: int = 16
    GPC_CGA_ID_W: int = 8
    CGA_CREDIT_PER_SM: int = 1
    SEQ_W: int = 8
    DELTA_W: int = 12
    GX_W: int = 32
    GY_W: int = 16
    GZ_W: int = 16
    GRID_ID_W: int = 8
    SESSION_MAX_STEPS: int = 8
    CMD_FIFO_DEPTH: int = 4
    RASTER_FIFO_DEPTH: int = 4
    TRACE: int = 1
    DISTRIBUTOR: str = "shadow"
    CPC_PER_GPC: int = 0
    MAX_FLAT_CTAS: int = 64

    def __post_init__(self):
        for name, (lo, hi) in RANGES.items():
            _check_int(name, getattr(self, name), lo, hi)
        spg = self.SM_PER_GPC
        if spg is None:
            spg = (8,) * self.N_GPC
        if isinstance(spg, int) and not isinstance(spg, bool):
            spg = (spg,) * self.N_GPC
        try:
            spg = tuple(spg)
        except TypeError:
            raise ValueError(f"SM_PER_GPC must be a tuple of {self.N_GPC} integers, got {spg!r}")
        if len(spg) != self.N_GPC:
            raise ValueError(f"SM_PER_GPC must hold N_GPC = {self.N_GPC} entries, got {len(spg)}")
        for s in spg:
            _check_int("SM_PER_GPC", s, 2, 32)
            if s % self.SM_PER_TPC:
                raise ValueError(f"SM_PER_GPC entries must be multiples of SM_PER_TPC = "
                                 f"{self.SM_PER_TPC}, got {s}")
        object.__setattr__(self, "SM_PER_GPC", spg)
        lo = clog2(max(spg) * self.CTA_SLOTS + 1) + 1
        _check_int("DELTA_W", self.DELTA_W, lo, 64)
        if self.DISTRIBUTOR not in ("shadow", "legacy"):
            raise ValueError(f"DISTRIBUTOR must be 'shadow' or 'legacy', got {self.DISTRIBUTOR!r}")
        _check_int("CPC_PER_GPC", self.CPC_PER_GPC, 0, 16)
        if self.CPC_PER_GPC:
            for s in spg:
                if (s // self.SM_PER_TPC) % self.CPC_PER_GPC:
                    raise ValueError(f"CPC_PER_GPC must be 0 or divide SM_PER_GPC[g] / SM_PER_TPC "
                                     f"for every g, got {self.CPC_PER_GPC} with {spg}")

    def replace(self, **changes):
        d = asdict(self)
        d.update(changes)
        if "N_GPC" in changes and "SM_PER_GPC" not in changes:
            d["SM_PER_GPC"] = None
        return WdistParams(**d)

    def as_dict(self):
        d = asdict(self)
        d["SM_PER_GPC"] = list(self.SM_PER_GPC)
        return d

    # derived widths (§3.2) -------------------------------------------------------------------
    @property
    def N_SM(self):
        return sum(self.SM_PER_GPC)

    @property
    def S_MAX(self):
        return max(self.SM_PER_GPC)

    @property
    def SM_ID_W(self):
        return max(1, clog2(self.N_SM))

    @property
    def GPC_W(self):
        return max(1, clog2(self.N_GPC))

    @property
    def FREE_W(self):
        return self.CTA_SLOTS.bit_length()

    @property
    def CNT_W(self):
        return self.FREE_W

    @property
    def RANK_W(self):
        return max(1, clog2(max(self.MAX_OUTER * self.MAX_CGA_CTAS, self.MAX_FLAT_CTAS)))

    # SM map (§3.3) ---------------------------------------------------------------------------
    def base(self, g):
        """Global index of GPC g's local SM 0."""
        return sum(self.SM_PER_GPC[:g])

    def sms(self, g):
        """Global SM indices of GPC g."""
        b = self.base(g)
        return range(b, b + self.SM_PER_GPC[g])

    def gpc_of(self, s):
        """(g, local index) of global SM s."""
        for g in range(self.N_GPC):
            if s < self.base(g) + self.SM_PER_GPC[g]:
                return g, s - self.base(g)
        raise ValueError(f"SM {s} is outside 0..{self.N_SM - 1}")

    def tpcs(self, n_sms):
        """Local SM groups (TPCs) of a GPC (or CPC) of ``n_sms`` SMs."""
        t = self.SM_PER_TPC
        return [list(range(i, i + t)) for i in range(0, n_sms, t)]

    def cpcs(self, g):
        """Local SM ranges of GPC g's CPCs (CPC_PER_GPC > 0)."""
        if not self.CPC_PER_GPC:
            raise ValueError("CPC_PER_GPC is 0: level CPC is disabled")
        size = self.SM_PER_GPC[g] // self.CPC_PER_GPC
        return [range(c * size, (c + 1) * size) for c in range(self.CPC_PER_GPC)]

    def credit_reset(self, g):
        """WD-F3: SM_PER_GPC[g] x CGA_CREDIT_PER_SM."""
        return self.SM_PER_GPC[g] * self.CGA_CREDIT_PER_SM
