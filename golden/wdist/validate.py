"""Command checks at the head of the FIFO (WD-E1..E4, WD-F28).

A bad command is dropped with one ``err`` beat carrying the lowest applicable code and its
``grid_id``; nothing else changes. In/out dimensions are not examined for PLAIN (they have no
meaning there).
"""

from golden.wdist.formats import Err, Level

__all__ = ["command_error", "check_fits_ports"]


def _prod(t):
    return t[0] * t[1] * t[2]


def command_error(p, cmd):
    """The Err code for ``cmd`` under ``params`` ``p``, or None when it is legal."""
    errs = []
    level = cmd.level
    cga = level in (Level.GPC, Level.GPU, Level.GPU_FLAT, Level.CPC)
    if 0 in cmd.grid or (cga and (0 in cmd.inner or 0 in cmd.outer)):
        errs.append(Err.BAD_DIMS)
    elif cga:
        for i in range(3):
            if cmd.grid[i] % (cmd.outer[i] * cmd.inner[i]):
                errs.append(Err.BAD_CGA_SHAPE)
        limit = p.MAX_FLAT_CTAS if level == Level.GPU_FLAT else p.MAX_CGA_CTAS
        if _prod(cmd.inner) > limit or _prod(cmd.outer) > p.MAX_OUTER:
            errs.append(Err.BAD_CGA_SHAPE)
        if level in (Level.GPC, Level.GPU_FLAT) and cmd.outer != (1, 1, 1):
            errs.append(Err.BAD_CGA_SHAPE)
    if not 1 <= cmd.warps <= p.WARP_CAP or cmd.regs_g > p.REG_CAP_G or cmd.smem_g > p.SMEM_CAP_G:
        errs.append(Err.BAD_RESOURCES)
    if level not in tuple(Level):
        errs.append(Err.BAD_LEVEL)
    elif level == Level.CPC and p.CPC_PER_GPC == 0:
        errs.append(Err.BAD_LEVEL)
    elif p.DISTRIBUTOR == "legacy" and level in (Level.GPU, Level.GPU_FLAT, Level.CPC):
        errs.append(Err.BAD_LEVEL)
    return min(errs) if errs else None


_WIDTHS = {"level": 3, "mode": 1, "in_x": 6, "in_y": 6, "in_z": 6, "out_x": 5, "out_y": 5,
           "out_z": 5, "regs_g": 9, "smem_g": 10, "warps": 7}


def check_fits_ports(p, cmd):
    """ValueError naming the field when a value cannot exist on the ``cmd`` port (WD-I1)."""
    widths = dict(_WIDTHS, grid_id=p.GRID_ID_W, grid_x=p.GX_W, grid_y=p.GY_W, grid_z=p.GZ_W)
    for name, w in widths.items():
        v = getattr(cmd, name)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < (1 << w):
            raise ValueError(f"cmd.{name}: {v!r} does not fit {w} bits")
