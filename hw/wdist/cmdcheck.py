"""Command checks at the head of the command FIFO (WD-E1..E4, WD-F28) and the unit grid.

A command's error code is the lowest that applies (§3.4). The CGA-shape check needs each grid
dimension divided by out×in of its axis; the quotients are the unit grid U of G-RAST that the
rasterizers need on the GRID beat (``unit_x``, ``unit_y``), so this one divider serves both and
no SM divides by a grid-wide value. The division is serial: one restoring step per grid bit on
all three axes at once (max(GX_W, GY_W, GZ_W) cycles, 32 at defaults), and only for the CGA
levels; a PLAIN command's unit grid is its grid and it is checked in one cycle.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import Err, Level, cmd_fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, gt_const, is_zero, nonzero
from hw.common.params import reject
from hw.common.serialdiv import div_step

__all__ = ["CommandCheck"]


class CommandCheck(wiring.Component):
    """Validate one command at a time and compute its unit grid.

    Parameters
    ----------
    params : WdistParams
        The build (widths, capacities, MAX_CGA_CTAS, MAX_OUTER, MAX_FLAT_CTAS, CPC_PER_GPC,
        DISTRIBUTOR).
    levels : iterable of Level
        The levels this build implements; any other valid level code is BAD_LEVEL (WD-E4: "an
        unimplemented SHOULD level"). Default: all five.

    Members
    -------
    i : In(stream.Signature(cmd_fields))
        The command FIFO head. Taken when the checker is idle.
    o : Out(stream.Signature(...))
        ``cmd`` (the command as received), ``err`` (0 = legal, else the WD-E code), ``unit_x``,
        ``unit_y``, ``unit_z`` (grid ÷ (O·I) per axis for the CGA levels, the grid for PLAIN;
        valid when ``err`` = 0).
    """

    def __init__(self, params, levels=tuple(Level)):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        self.p = params
        self.levels = frozenset(Level(v) for v in levels)
        self.cmd_layout = struct_layout(cmd_fields(params))
        self.out_layout = data.StructLayout({
            "cmd": self.cmd_layout, "err": 4,
            "unit_x": params.GX_W, "unit_y": params.GY_W, "unit_z": params.GZ_W})
        super().__init__({"i": In(stream.Signature(self.cmd_layout)),
                          "o": Out(stream.Signature(self.out_layout))})

    def elaborate(self, platform):
        p = self.p
        m = Module()
        widths = (p.GX_W, p.GY_W, p.GZ_W)
        steps = max(widths)
        c = Signal(self.cmd_layout)                 # the command being checked
        busy = Signal()
        left = Signal(range(steps + 1))
        out = self.o

        m.d.comb += self.i.ready.eq(~busy & ~out.valid)
        level = c.level
        is_lvl = {lv: eq_const(level, lv) for lv in Level}
        cga = is_lvl[Level.GPC] | is_lvl[Level.GPU] | is_lvl[Level.GPU_FLAT] | is_lvl[Level.CPC]
        grid = (c.grid_x, c.grid_y, c.grid_z)
        inner = (c.in_x, c.in_y, c.in_z)
        outer = (c.out_x, c.out_y, c.out_z)

        # WD-E1: a zero grid dimension, or a zero in/out dimension at a CGA level
        zero_dims = is_zero(c.grid_x) | is_zero(c.grid_y) | is_zero(c.grid_z)
        zero_shape = nonzero(Cat(*[is_zero(v) for v in inner + outer]))
        bad_dims = zero_dims | (cga & zero_shape)
        # WD-E2 parts that need no division
        isz = inner[0] * inner[1] * inner[2]
        osz = outer[0] * outer[1] * outer[2]
        too_big = Mux(is_lvl[Level.GPU_FLAT], gt_const(isz, p.MAX_FLAT_CTAS),
                      gt_const(isz, p.MAX_CGA_CTAS)) | gt_const(osz, p.MAX_OUTER)
        outer_not_one = (is_lvl[Level.GPC] | is_lvl[Level.GPU_FLAT]) & (
            ~eq_const(c.out_x, 1) | ~eq_const(c.out_y, 1) | ~eq_const(c.out_z, 1))
        # WD-E3
        bad_res = (is_zero(c.warps) | gt_const(c.warps, p.WARP_CAP)
                   | gt_const(c.regs_g, p.REG_CAP_G) | gt_const(c.smem_g, p.SMEM_CAP_G))
        # WD-E4
        allowed = 0
        for lv in Level:
            ok = lv in self.levels
            if lv == Level.CPC and p.CPC_PER_GPC == 0:
                ok = False
            if p.DISTRIBUTOR == "legacy" and lv in (Level.GPU, Level.GPU_FLAT, Level.CPC):
                ok = False
            if ok:
                allowed = allowed | is_lvl[lv]
        bad_level = ~allowed

        # the serial division grid / (O·I) on all three axes (divisibility and unit grid)
        div = [Signal(11, name=f"div_{a}") for a in "xyz"]
        dvd = [Signal(steps, name=f"dvd_{a}") for a in "xyz"]
        rem = [Signal(11, name=f"rem_{a}") for a in "xyz"]
        quo = [Signal(steps, name=f"quo_{a}") for a in "xyz"]
        with m.If(busy & nonzero(left)):
            for k in range(3):
                q, nxt = div_step(rem[k], dvd[k][-1], div[k])
                m.d.sync += [rem[k].eq(nxt), quo[k].eq(Cat(q, quo[k][:-1])),
                             dvd[k].eq(dvd[k] << 1)]
            m.d.sync += left.eq(left - 1)
        divides = is_zero(Cat(*rem))

        # accept: latch, and start the division for a CGA level with nonzero divisors
        with m.If(self.i.valid & self.i.ready):
            src = self.i.payload
            lv_cga = ~eq_const(src.level, Level.PLAIN) & ~gt_const(src.level, Level.CPC)
            lv_outer = eq_const(src.level, Level.GPU) | eq_const(src.level, Level.CPC)
            s_in = (src.in_x, src.in_y, src.in_z)
            s_out = (src.out_x, src.out_y, src.out_z)
            s_grid = (src.grid_x, src.grid_y, src.grid_z)
            run = lv_cga & is_zero(Cat(*[is_zero(v) for v in s_in + s_out]))
            m.d.sync += [c.eq(src), busy.eq(1), left.eq(Mux(run, steps, 0))]
            for k in range(3):
                m.d.sync += [div[k].eq(Mux(lv_outer, s_out[k], 1) * s_in[k]),
                             dvd[k].eq(s_grid[k]), rem[k].eq(0), quo[k].eq(0)]

        # done: present the result
        with m.If(busy & is_zero(left) & ~out.valid):
            bad_shape = cga & ~bad_dims & (~divides | too_big | outer_not_one)
            code = Mux(bad_dims, Err.BAD_DIMS,
                       Mux(bad_shape, Err.BAD_CGA_SHAPE,
                           Mux(bad_res, Err.BAD_RESOURCES,
                               Mux(bad_level, Err.BAD_LEVEL, 0))))
            m.d.sync += [out.valid.eq(1), busy.eq(0), out.payload.cmd.eq(c),
                         out.payload.err.eq(code)]
            for k, name in enumerate(("unit_x", "unit_y", "unit_z")):
                m.d.sync += getattr(out.payload, name).eq(Mux(cga, quo[k], grid[k]))
        with m.If(out.valid & out.ready):
            m.d.sync += out.valid.eq(0)
        return m
