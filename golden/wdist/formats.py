"""wdist enumerations and records (§3.2): commands, beats, ID records, trace records, errors.

One definition for the hardware, the golden model and the testbench. The ``*_fields(params)``
functions give the port payload layouts (first field at bit 0) as ``golden.common.fields.Fields``;
the dataclasses are what the golden model passes around. Codes the spec leaves open (query
``cause``, trace ``kind``) are fixed here and listed in ``docs/wdist.md``.
"""

from dataclasses import dataclass
from enum import IntEnum

from golden.common.fields import Fields

__all__ = ["Level", "Mode", "Kind", "Stall", "Cause", "TraceKind", "Pass", "Err", "Shape",
           "Command", "Beat", "CtaRecord", "TraceRec", "ErrBeat", "FAIL",
           "cmd_fields", "cfg_fields", "bcast_fields", "cta_id_fields", "cta_complete_fields",
           "flush_done_fields", "flush_req_fields", "raster_beat_fields", "cga_complete_fields",
           "err_fields",
           "trace_fields", "lin2xyz"]


class Level(IntEnum):
    """WD-I1 ``level``."""
    PLAIN = 0
    GPC = 1
    GPU = 2
    GPU_FLAT = 3
    CPC = 4


class Mode(IntEnum):
    LB = 0
    MC = 1


class Kind(IntEnum):
    """WD-I3 beat ``kind``."""
    GRID = 0
    LAUNCH = 1
    LAUNCH_ID = 2


class Stall(IntEnum):
    """WD-I9 ``status.stall``."""
    NONE = 0
    RUNNING = 1
    WAIT_SLOTS = 2
    WAIT_CGA_FIT = 3
    WAIT_CGA_ID = 4
    WAIT_BCAST = 5
    WAIT_ERR = 6


class Cause(IntEnum):
    """Query response ``cause`` (WD-F11); encoding [choice of this model]."""
    OK = 0
    CREDIT = 1
    SLOTS = 2


class TraceKind(IntEnum):
    """WD-I11 record kinds; encoding [choice of this model]."""
    SNAP = 0
    QUERY = 1
    SELECT = 2
    FAIL = 3


class Pass(IntEnum):
    """WD-I11 ``pass``."""
    GPC_STEP = 0
    PASS1 = 1
    PASS2 = 2
    PLAIN = 3


class Err(IntEnum):
    """WD-E1..E11 ``err.code``."""
    BAD_DIMS = 1
    BAD_CGA_SHAPE = 2
    BAD_RESOURCES = 3
    BAD_LEVEL = 4
    NEVER_FITS = 5
    COMPLETE_UNDERFLOW = 6
    COMPLETE_BAD_CGA = 7
    FLUSH_UNEXPECTED = 8
    CFG_BUSY = 9
    CFG_BAD = 10
    INTERNAL = 15


class _Fail:
    """The FAIL result of a placement engine (G-A2, G-A3)."""
    def __repr__(self):
        return "FAIL"

    def __bool__(self):
        return False


FAIL = _Fail()


def lin2xyz(k, X, Y):
    """(k mod X, (k div X) mod Y, k div (X·Y)): x fastest [seed ¶0176, ¶0229]."""
    return (k % X, (k // X) % Y, k // (X * Y))


@dataclass(frozen=True)
class Shape:
    """A CTA's resource demand (also a capacity or a used-counter vector)."""
    regs_g: int = 0
    smem_g: int = 0
    warps: int = 0
    slots: int = 0


@dataclass(frozen=True)
class Command:
    """One ``cmd`` beat (WD-I1)."""
    grid_id: int = 0
    level: int = Level.PLAIN
    mode: int = Mode.LB
    grid_x: int = 1
    grid_y: int = 1
    grid_z: int = 1
    in_x: int = 1
    in_y: int = 1
    in_z: int = 1
    out_x: int = 1
    out_y: int = 1
    out_z: int = 1
    regs_g: int = 1
    smem_g: int = 1
    warps: int = 1

    @property
    def grid(self):
        return (self.grid_x, self.grid_y, self.grid_z)

    @property
    def inner(self):
        return (self.in_x, self.in_y, self.in_z)

    @property
    def outer(self):
        return (self.out_x, self.out_y, self.out_z)

    @property
    def isz(self):
        """CTAs per innermost CGA."""
        return self.in_x * self.in_y * self.in_z

    @property
    def n(self):
        """Inner CGAs per outer CGA (GPU, CPC)."""
        return self.out_x * self.out_y * self.out_z

    @property
    def ctas(self):
        return self.grid_x * self.grid_y * self.grid_z

    @property
    def shape(self):
        return Shape(self.regs_g, self.smem_g, self.warps, 1)

    @property
    def unit_grid(self):
        """U of G-RAST: the grid counted in top-level units, per axis."""
        if self.level == Level.PLAIN:
            return self.grid
        o = self.outer if self.level in (Level.GPU, Level.CPC) else (1, 1, 1)
        return tuple(self.grid[i] // (o[i] * self.inner[i]) for i in range(3))

    @property
    def units(self):
        """Top-level units of the grid (WD-E5 ``info`` unit): CTAs for PLAIN, CGAs for GPC and
        GPU_FLAT, GPU CGAs for GPU, GPC CGAs for CPC."""
        ux, uy, uz = self.unit_grid
        return ux * uy * uz


@dataclass(frozen=True)
class Beat:
    """One ``bcast`` beat (WD-I3). ``cnt`` is a tuple of S_MAX counts (local SM order)."""
    kind: int
    grid_id: int = 0
    # GRID
    level: int = 0
    mode: int = 0
    grid: tuple = (1, 1, 1)
    inner: tuple = (1, 1, 1)
    outer: tuple = (1, 1, 1)
    # LAUNCH / LAUNCH_ID
    seq: int = 0
    gpc: int = 0
    cnt: tuple = ()
    first_rank: int = 0
    is_cga: int = 0
    gcga_first: int = 0
    gcga_last: int = 0
    end_of_cga: int = 0
    cga_id: int = 0
    # LAUNCH_ID only
    ctaid: tuple = (0, 0, 0)
    cga_cta_id: int = 0

    @staticmethod
    def grid_beat(cmd):
        return Beat(Kind.GRID, cmd.grid_id, level=int(cmd.level), mode=int(cmd.mode),
                    grid=cmd.grid, inner=cmd.inner, outer=cmd.outer)

    def key(self):
        """The fields WD-V7 compares (all but ``cga_id``)."""
        return (self.kind, self.grid_id, self.level, self.mode, self.grid, self.inner, self.outer,
                self.seq, self.gpc, self.cnt, self.first_rank, self.is_cga, self.gcga_first,
                self.gcga_last, self.end_of_cga, self.ctaid, self.cga_cta_id)


@dataclass(frozen=True)
class CtaRecord:
    """One ``cta_id[s]`` record (WD-I4)."""
    grid_id: int
    seq: int
    ctaid: tuple
    is_cga: int
    cga_cta_id: int
    cga_id: int


@dataclass
class TraceRec:
    """One ``trace`` record (WD-I11); ``ts`` and ``lat`` are timing, not compared (None)."""
    kind: int
    sess: int = 0
    step: int = 0
    pass_: int = 0
    gpc: int = 0
    valid: int = 0
    cause: int = 0
    speed: int = 0
    vec: tuple = ()
    credit: int = 0
    empty: int = 0
    best: int = 0
    win_mask: int = 0
    grid_id: int = 0
    never_fits: int = 0
    ts: int = None
    lat: int = None

    def key(self):
        return (self.kind, self.sess, self.step, self.pass_, self.gpc, self.valid, self.cause,
                self.speed, self.vec, self.credit, self.empty, self.best, self.win_mask,
                self.grid_id, self.never_fits)


@dataclass(frozen=True)
class ErrBeat:
    code: int
    grid_id: int = 0
    info: int = 0


# port payload layouts ----------------------------------------------------------------------------

def cmd_fields(p):
    return Fields(("grid_id", p.GRID_ID_W), ("level", 3), ("mode", 1), ("grid_x", p.GX_W),
                  ("grid_y", p.GY_W), ("grid_z", p.GZ_W), ("in_x", 6), ("in_y", 6), ("in_z", 6),
                  ("out_x", 5), ("out_y", 5), ("out_z", 5), ("regs_g", 9), ("smem_g", 10),
                  ("warps", 7))


def cfg_fields(p):
    return Fields(("sm", p.SM_ID_W), ("enable", 1), ("regs_cap_g", 9), ("smem_cap_g", 10),
                  ("warp_cap", 7), ("slot_cap", p.FREE_W))


def bcast_fields(p):
    """LAUNCH and LAUNCH_ID fields; a GRID beat reuses cmd's ``level``/dims (overlaid here as
    separate fields for clarity: the hardware may overlay them)."""
    return Fields(*_bcast_specs(p))


def raster_beat_fields(p):
    """The broadcast as the rasterizers see it: ``bcast`` plus the grid's unit dimensions
    ``unit_x``, ``unit_y`` (U of G-RAST, valid on GRID beats). They are computed once at the
    command head, where WD-E2 already divides the grid by out×in, so that no SM needs a divider
    of grid width (docs/wdist.md)."""
    return Fields(*_bcast_specs(p), ("unit_x", p.GX_W), ("unit_y", p.GY_W))


def _bcast_specs(p):
    return (("kind", 2), ("grid_id", p.GRID_ID_W), ("level", 3), ("mode", 1),
            ("grid_x", p.GX_W), ("grid_y", p.GY_W), ("grid_z", p.GZ_W),
            ("in_x", 6), ("in_y", 6), ("in_z", 6), ("out_x", 5), ("out_y", 5), ("out_z", 5),
            ("seq", p.SEQ_W), ("gpc", p.GPC_W), ("cnt", p.CNT_W, "unsigned", p.S_MAX),
            ("first_rank", p.RANK_W), ("is_cga", 1), ("gcga_first", 1), ("gcga_last", 1),
            ("end_of_cga", 1), ("cga_id", p.GPC_CGA_ID_W), ("ctaid_x", p.GX_W),
            ("ctaid_y", p.GY_W), ("ctaid_z", p.GZ_W), ("cga_cta_id", p.RANK_W))


def cta_id_fields(p):
    return Fields(("grid_id", p.GRID_ID_W), ("seq", p.SEQ_W), ("ctaid_x", p.GX_W),
                  ("ctaid_y", p.GY_W), ("ctaid_z", p.GZ_W), ("is_cga", 1),
                  ("cga_cta_id", p.RANK_W), ("cga_id", p.GPC_CGA_ID_W))


def cta_complete_fields(p):
    return Fields(("sm", p.SM_ID_W), ("is_cga", 1), ("cga_id", p.GPC_CGA_ID_W), ("regs_g", 9),
                  ("smem_g", 10), ("warps", 7))


def flush_done_fields(p):
    return Fields(("sm", p.SM_ID_W), ("cga_id", p.GPC_CGA_ID_W))


def flush_req_fields(p):
    return Fields(("gpc", p.GPC_W), ("cga_id", p.GPC_CGA_ID_W), ("n_ctas", p.RANK_W + 1))


def cga_complete_fields(p):
    return Fields(("gpc", p.GPC_W), ("cga_id", p.GPC_CGA_ID_W), ("grid_id", p.GRID_ID_W),
                  ("seq", p.SEQ_W))


def err_fields(p):
    return Fields(("code", 4), ("grid_id", p.GRID_ID_W), ("info", 16))


def trace_fields(p):
    return Fields(("kind", 2), ("ts", 32), ("sess", 16), ("step", 8), ("pass_", 2),
                  ("gpc", p.GPC_W), ("valid", 1), ("cause", 2), ("speed", p.FREE_W),
                  ("vec", p.FREE_W, "unsigned", p.S_MAX), ("credit", 8), ("empty", 1),
                  ("best", p.FREE_W), ("win_mask", p.N_GPC), ("lat", 8),
                  ("grid_id", p.GRID_ID_W), ("never_fits", 1))
