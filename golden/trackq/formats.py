"""trackq records, enums, error flags and counters (spec trackq.md §3.2, TQ-I1..I11).

One definition, three users: ``hw/trackq`` turns the :class:`~golden.common.fields.Fields` returned
here into Amaranth ``StructLayout``s (``hw.common.layout.struct_layout``); the golden model and
``tb/trackq`` pack and unpack the same integers with them. Field order is the spec's, first field
at bit 0.
"""

from dataclasses import asdict, dataclass
from enum import IntEnum

from golden.common.fields import Fields

__all__ = [
    "Cls", "LG", "TEX", "TTU", "CLS_RSVD", "Src", "SRC_TQ", "SRC_STATUS", "SRC_FAST",
    "Reclaim", "INORDER", "FREELIST",
    "ERR_CLS", "ERR_FAST_TEX", "ERR_FAST_MISS", "ERR_TEX_SPLIT", "ERR_INVAL_LIVE", "ERR_CFG",
    "ERR_NAMES", "ERR_W", "COUNTERS", "COUNTER_W", "COUNTER_MASK",
    "Req", "Fill", "Inval", "Resp", "Pop", "Cmt", "make_req",
    "req_fields", "fill_fields", "inval_fields", "resp_fields", "pop_fields", "cmt_fields",
    "status_fields", "counter_fields",
]


class Cls(IntEnum):
    """Traffic class, ``req.cls`` / ``resp.cls`` (TQ-I1). 3 is reserved (TQ-E1)."""
    LG = 0
    TEX = 1
    TTU = 2
    RSVD = 3


LG, TEX, TTU, CLS_RSVD = Cls.LG, Cls.TEX, Cls.TTU, Cls.RSVD


class Src(IntEnum):
    """Source of a delivered entry, ``resp.src`` / ``cmt.src`` (TQ-I5, TQ-I8)."""
    TQ = 0
    STATUS = 1
    FAST = 2


SRC_TQ, SRC_STATUS, SRC_FAST = Src.TQ, Src.STATUS, Src.FAST


class Reclaim(IntEnum):
    """Pool reclaim policy, ``cfg_reclaim`` / ``reclaim_mode`` (TQ-I6, TQ-I9)."""
    INORDER = 0
    FREELIST = 1


INORDER, FREELIST = Reclaim.INORDER, Reclaim.FREELIST

# Sticky error flags, ``err`` (TQ-I11)
ERR_CLS = 1 << 0
ERR_FAST_TEX = 1 << 1
ERR_FAST_MISS = 1 << 2
ERR_TEX_SPLIT = 1 << 3
ERR_INVAL_LIVE = 1 << 4
ERR_CFG = 1 << 5
ERR_W = 6
ERR_NAMES = {ERR_CLS: "ERR_CLS", ERR_FAST_TEX: "ERR_FAST_TEX", ERR_FAST_MISS: "ERR_FAST_MISS",
             ERR_TEX_SPLIT: "ERR_TEX_SPLIT", ERR_INVAL_LIVE: "ERR_INVAL_LIVE", ERR_CFG: "ERR_CFG"}

# 32-bit wrapping counters (TQ-I10), in the spec's order
COUNTERS = ("cnt_req_stall", "cnt_pool_full", "cnt_resp_stall", "cnt_pop", "cnt_commit",
            "cnt_interlock", "cnt_fast", "cnt_err")
COUNTER_W = 32
COUNTER_MASK = (1 << COUNTER_W) - 1


# ---------------------------------------------------------------------------------------------
# Layouts


def req_fields(p):
    """``req`` payload (TQ-I1): 76 bits at full size."""
    return Fields(("id", p.ID_W), ("warp", p.WARP_W), ("cls", 2),
                  ("dslot", p.DSLOT_W, "unsigned", p.BANKS),
                  ("need", p.SECTORS, "unsigned", p.BANKS),
                  ("eoi", 1), ("eog", 1), ("is_status", 1), ("fast_path", 1))


def fill_fields(p):
    """``fill`` payload (TQ-I3)."""
    return Fields(("bank", p.BANK_W), ("dslot", p.DSLOT_W), ("sector", 2))


def inval_fields(p):
    """``inval`` payload (TQ-I4)."""
    return Fields(("bank", p.BANK_W), ("dslot", p.DSLOT_W))


def resp_fields(p):
    """``resp`` payload (TQ-I5)."""
    return Fields(("id", p.ID_W), ("warp", p.WARP_W), ("cls", 2), ("src", 2), ("q", p.Q_W),
                  ("eoi", 1), ("eog", 1))


def pop_fields(p):
    """``pop`` observation payload (TQ-I7)."""
    return Fields(("q", p.Q_W), ("id", p.ID_W))


def cmt_fields(p):
    """``cmt`` observation payload (TQ-I8)."""
    return Fields(("src", 2), ("q", p.Q_W), ("id", p.ID_W))


def status_fields(p):
    """The status outputs of TQ-I9 as one record (``occ`` is an N_Q-element array)."""
    return Fields(("occ", p.OCC_W, "unsigned", p.N_Q), ("st_occ", p.OCC_W),
                  ("fast_occ", p.FAST_OCC_W), ("pool_used", p.OCC_W), ("pool_full", 1),
                  ("ready_vec", p.N_Q), ("lock_valid", 1), ("lock_q", p.Q_W),
                  ("reclaim_mode", 1))


def counter_fields():
    """The counters of TQ-I10, 32 bits each, in the spec's order."""
    return Fields(*[(name, COUNTER_W) for name in COUNTERS])


# ---------------------------------------------------------------------------------------------
# Records


def _fit(name, value, width):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < (1 << width):
        raise ValueError(f"{name} = {value!r} does not fit in {width} bits")


@dataclass(frozen=True)
class Req:
    """One ``req`` payload (TQ-I1). ``dslot`` and ``need`` have one element per tag bank."""
    id: int
    warp: int
    cls: int
    dslot: tuple
    need: tuple
    eoi: int = 1
    eog: int = 0
    is_status: int = 0
    fast_path: int = 0

    def checked(self, p):
        """``self`` if it is a legal payload for ``p``, else ValueError naming the field.

        Every field must fit its port width. A used bank (need[b] != 0) must name a dslot below
        DSLOTS (the SVT has DSLOTS rows); an unused bank's dslot is ignored by the block.
        """
        _fit("req.id", self.id, p.ID_W)
        _fit("req.warp", self.warp, p.WARP_W)
        _fit("req.cls", self.cls, 2)
        for name in ("eoi", "eog", "is_status", "fast_path"):
            _fit(f"req.{name}", getattr(self, name), 1)
        for name in ("dslot", "need"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or len(value) != p.BANKS:
                raise ValueError(f"req.{name} must be a tuple of BANKS = {p.BANKS} elements, "
                                 f"got {value!r}")
        for b in range(p.BANKS):
            _fit(f"req.dslot[{b}]", self.dslot[b], p.DSLOT_W)
            _fit(f"req.need[{b}]", self.need[b], p.SECTORS)
            if self.need[b] and self.dslot[b] >= p.DSLOTS:
                raise ValueError(f"req.dslot[{b}] = {self.dslot[b]} is not below DSLOTS = "
                                 f"{p.DSLOTS} on a used bank")
        return self

    def pack(self, p):
        return req_fields(p).pack(**{k: (list(v) if isinstance(v, tuple) else int(v))
                                     for k, v in asdict(self).items()})

    @classmethod
    def unpack(cls, p, word):
        v = req_fields(p).unpack(word)
        return cls(**{k: (tuple(x) if isinstance(x, list) else x) for k, x in v.items()})

    def replace(self, **changes):
        return Req(**{**asdict(self), **changes})


def make_req(id, warp=0, cls=LG, sectors=(), banks=4, eoi=1, eog=0, is_status=0, fast_path=0):
    """A :class:`Req` needing ``sectors``, a list of (bank, dslot, sector); unused banks get
    dslot 0 and need 0. Two different dslots in one bank cannot be expressed (ValueError)."""
    dslot = [0] * banks
    need = [0] * banks
    for b, d, s in sectors:
        if need[b] and dslot[b] != d:
            raise ValueError(f"bank {b} already names dslot {dslot[b]}, cannot also need {d}")
        dslot[b] = d
        need[b] |= 1 << s
    return Req(id=id, warp=warp, cls=int(cls), dslot=tuple(dslot), need=tuple(need), eoi=eoi,
               eog=eog, is_status=is_status, fast_path=fast_path)


@dataclass(frozen=True)
class Fill:
    """One ``fill`` payload (TQ-I3): sector ``sector`` of dslot ``dslot`` in tag bank ``bank``."""
    bank: int
    dslot: int
    sector: int

    def checked(self, p):
        _fit("fill.bank", self.bank, p.BANK_W)
        _fit("fill.dslot", self.dslot, p.DSLOT_W)
        _fit("fill.sector", self.sector, 2)
        if self.bank >= p.BANKS:
            raise ValueError(f"fill.bank = {self.bank} is not below BANKS = {p.BANKS}")
        if self.dslot >= p.DSLOTS:
            raise ValueError(f"fill.dslot = {self.dslot} is not below DSLOTS = {p.DSLOTS}")
        return self


@dataclass(frozen=True)
class Inval:
    """One ``inval`` payload (TQ-I4): clears all sectors of dslot ``dslot`` in bank ``bank``."""
    bank: int
    dslot: int

    def checked(self, p):
        _fit("inval.bank", self.bank, p.BANK_W)
        _fit("inval.dslot", self.dslot, p.DSLOT_W)
        if self.bank >= p.BANKS:
            raise ValueError(f"inval.bank = {self.bank} is not below BANKS = {p.BANKS}")
        if self.dslot >= p.DSLOTS:
            raise ValueError(f"inval.dslot = {self.dslot} is not below DSLOTS = {p.DSLOTS}")
        return self


@dataclass(frozen=True)
class Resp:
    """One ``resp`` payload (TQ-I5)."""
    id: int
    warp: int
    cls: int
    src: int
    q: int
    eoi: int
    eog: int

    def pack(self, p):
        return resp_fields(p).pack(**asdict(self))


@dataclass(frozen=True)
class Pop:
    """One ``pop`` observation (TQ-I7)."""
    q: int
    id: int


@dataclass(frozen=True)
class Cmt:
    """One ``cmt`` observation (TQ-I8)."""
    src: int
    q: int
    id: int
