"""TMA configuration parameters (spec tma.md §3.3, TMA-C1..C9, C11).

The golden model takes ADDR_W, SMEM_AW, DC_ENTRIES, SWZ_TABLE and NAN_PATTERN with the hardware's
defaults (TMA-C11); the other parameters (ID_W, Q_DEPTH, TRK_ENTRIES, NB_W) set field widths, the
request FIFO depth and the tracker size of the transaction model. Every parameter is checked at
construction with a ``ValueError`` naming it and its legal range, as the hardware constructors do.
"""

from dataclasses import dataclass, fields as dc_fields

from golden.tma.formats import DEFAULT_NAN_PATTERN, ESIZE, FLOAT_DTYPES, DType
from golden.tma.swizzle import check_swz_table, default_swz_table

__all__ = ["TmaParams", "RANGES", "check_nan_pattern"]

RANGES = {"ADDR_W": (40, 64), "SMEM_AW": (11, 24), "ID_W": (1, 16), "Q_DEPTH": (2, 16),
          "DC_ENTRIES": (2, 16), "TRK_ENTRIES": (4, 256), "NB_W": (1, 28)}


def check_nan_pattern(pattern):
    """``pattern`` normalised to ``{DType: int}``; ValueError unless it has exactly the float
    dtypes as keys and each value fits in the dtype's esize bytes (TMA-C9)."""
    if not hasattr(pattern, "items"):
        raise ValueError(f"NAN_PATTERN must be a mapping dtype -> pattern, got {pattern!r}")
    out = {}
    for dt, value in pattern.items():
        dt = DType(int(dt))
        if dt not in FLOAT_DTYPES:
            raise ValueError(f"NAN_PATTERN key {dt.name} is not a float dtype")
        bits = 8 * ESIZE[dt]
        if not isinstance(value, int) or not 0 <= value < 1 << bits:
            raise ValueError(f"NAN_PATTERN[{dt.name}] = {value!r} must be a {bits}-bit value")
        out[dt] = value
    if set(out) != set(FLOAT_DTYPES):
        missing = sorted(d.name for d in FLOAT_DTYPES - set(out))
        raise ValueError(f"NAN_PATTERN lacks {', '.join(missing)}")
    return out


@dataclass(frozen=True, eq=False)
class TmaParams:
    """Parameters of one TMA instance (defaults of §3.3)."""
    ADDR_W: int = 64
    SMEM_AW: int = 18
    ID_W: int = 8
    Q_DEPTH: int = 4
    DC_ENTRIES: int = 4
    TRK_ENTRIES: int = 32
    NB_W: int = 20
    SWZ_TABLE: object = None
    NAN_PATTERN: object = None

    def __post_init__(self):
        for name, (lo, hi) in RANGES.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
        if self.TRK_ENTRIES & (self.TRK_ENTRIES - 1):
            raise ValueError(f"TRK_ENTRIES must be a power of two in 4..256, got {self.TRK_ENTRIES}")
        table = default_swz_table() if self.SWZ_TABLE is None else self.SWZ_TABLE
        object.__setattr__(self, "SWZ_TABLE", check_swz_table(table))
        nan = DEFAULT_NAN_PATTERN if self.NAN_PATTERN is None else self.NAN_PATTERN
        object.__setattr__(self, "NAN_PATTERN", check_nan_pattern(nan))

    @property
    def TAG_W(self):
        return self.TRK_ENTRIES.bit_length() - 1

    @property
    def SMEM_SIZE(self):
        return 1 << self.SMEM_AW

    @property
    def ADDR_SPACE(self):
        return 1 << self.ADDR_W

    def replace(self, **changes):
        values = {f.name: getattr(self, f.name) for f in dc_fields(self)}
        values.update(changes)
        return TmaParams(**values)

    @classmethod
    def of_build(cls, q):
        """The parameters of a ``hw.tma.Tma`` build from its registry parameters (lower case,
        missing ones at their defaults)."""
        return cls(ADDR_W=q.get("addr_w", 64), SMEM_AW=q.get("smem_aw", 18), ID_W=q.get("id_w", 8),
                   Q_DEPTH=q.get("q_depth", 4), DC_ENTRIES=q.get("dc_entries", 4),
                   TRK_ENTRIES=q.get("trk_entries", 32), NB_W=q.get("nb_w", 20))

    def __eq__(self, other):
        return isinstance(other, TmaParams) and all(
            getattr(self, f.name) == getattr(other, f.name) for f in dc_fields(self))

    __hash__ = None
