"""cocotb testbench of ``CommandCheck`` (hw/wdist/cmdcheck.py) against
``golden.wdist.validate.command_error`` and ``Command.unit_grid``: random legal and illegal
commands of every level code (0..7) with random gaps and back-pressure; every result in order.
"""

import cocotb

from golden.wdist.formats import Command, cmd_fields
from golden.wdist.params import WdistParams
from golden.wdist.validate import command_error
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, finish

CMD_NAMES = cmd_fields(WdistParams()).names


def build_params():
    d = dict(env.params())
    d["DISTRIBUTOR"] = "legacy" if d.pop("LEGACY", 0) else "shadow"
    return WdistParams(**d)


def random_command(rng, p, grid_id):
    """Mostly legal commands; each field is sometimes pushed out of its legal range."""
    level = rng.choice([0, 1, 2, 3, 4] * 4 + [5, 6, 7])
    inner = [rng.choice([1, 1, 2, 3, 4, 8]) for _ in range(3)]
    outer = [rng.choice([1, 1, 2, 3]) for _ in range(3)] if level in (2, 4) else [1, 1, 1]
    if rng.random() < 0.1:
        outer[rng.randrange(3)] = rng.randint(2, 31)
    if rng.random() < 0.1:
        inner[rng.randrange(3)] = rng.randint(0, 63)
    if rng.random() < 0.05:
        outer[rng.randrange(3)] = 0
    units = [rng.randint(1, 5) for _ in range(3)]
    grid = [units[i] * outer[i] * inner[i] for i in range(3)]
    if rng.random() < 0.15 or 0 in grid:
        grid = [rng.randint(0, 40) for _ in range(3)]
    if rng.random() < 0.05:
        grid[0] = rng.randrange(1 << p.GX_W)
    lims = [(1 << p.GX_W) - 1, (1 << p.GY_W) - 1, (1 << p.GZ_W) - 1]
    grid = [min(g, lim) for g, lim in zip(grid, lims)]
    warps = rng.choice([rng.randint(1, p.WARP_CAP)] * 8 + [0, rng.randint(0, 127)])
    regs = rng.choice([rng.randint(0, p.REG_CAP_G)] * 8 + [rng.randint(0, 511)])
    smem = rng.choice([rng.randint(0, p.SMEM_CAP_G)] * 8 + [rng.randint(0, 1023)])
    return Command(grid_id=grid_id, level=level, mode=rng.randrange(2), grid_x=grid[0],
                   grid_y=grid[1], grid_z=grid[2], in_x=inner[0], in_y=inner[1], in_z=inner[2],
                   out_x=outer[0], out_y=outer[1], out_z=outer[2], regs_g=regs, smem_g=smem,
                   warps=warps)


def expected(p, cmd):
    err = command_error(p, cmd) or 0
    units = cmd.unit_grid if err == 0 else None
    return (tuple(getattr(cmd, n) for n in CMD_NAMES), int(err), units)


@cocotb.test()
async def random_commands(dut):
    start_clock(dut)
    await reset(dut)
    p = build_params()
    rng = env.rng(0)
    fields = cmd_fields(p)
    sb = Scoreboard("o")

    def observe(t):
        v = t.value
        cmd = fields.unpack(v & ((1 << fields.width) - 1))
        v >>= fields.width
        err = v & 0xF
        v >>= 4
        ux = v & ((1 << p.GX_W) - 1)
        v >>= p.GX_W
        uy = v & ((1 << p.GY_W) - 1)
        uz = v >> p.GY_W
        sb.observe((tuple(cmd[n] for n in CMD_NAMES), err, (ux, uy, uz) if err == 0 else None),
                   t.cycle)

    drv = StreamDriver(dut, "i", dut.clk, fields, gap_prob=rng.choice((0.0, 0.4)))
    StreamMonitor(dut, "o", dut.clk, ready_prob=rng.choice((0.5, 1.0)), callback=observe)
    checkers = [StreamProtocolChecker(dut, "i", dut.clk), StreamProtocolChecker(dut, "o", dut.clk)]
    n = int(env.params().get("N", 0)) or 300
    codes = {}
    for k in range(n):
        cmd = random_command(rng, p, k % (1 << p.GRID_ID_W))
        exp = expected(p, cmd)
        codes[exp[1]] = codes.get(exp[1], 0) + 1
        sb.expect(exp)
        drv.append({name: getattr(cmd, name) for name in CMD_NAMES})
    await finish(dut.clk, drv, [sb], checkers, timeout=50 * n + 500)
    missing = {0, 1, 2, 3, 4} - set(codes)
    assert not missing, f"the random commands never produced codes {missing}: {codes}"
    dut._log.info("CommandCheck: %d commands, codes %s (seed %d)", n, dict(sorted(codes.items())),
                  env.seed())
