"""RTL regression of the wdist command checker (hw/wdist/cmdcheck.py) on Verilator against
golden.wdist.validate (tb/wdist/cmdcheck_tb.py), and its Verilator -Wall lint."""

import pytest

from golden.wdist.params import WdistParams
from hw.wdist.cmdcheck import CommandCheck
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

TB = "tb.wdist.cmdcheck_tb"


def command_check(LEGACY=0, **params):
    """Test top: CommandCheck of the WdistParams built from integer parameters."""
    return CommandCheck(WdistParams(DISTRIBUTOR="legacy" if LEGACY else "shadow", **params))


BLOCK = Block(
    name="wdist_cmdcheck", kind="test", summary="wdist command checks and unit grid (test builds)",
    spec="wdist.md WD-E1..E4, WD-F28", top=command_check,
    params=(Param("N_GPC", 2, "1..16", "GPCs"), Param("SM_PER_GPC", 4, "2..32", "SMs per GPC"),
            Param("CPC_PER_GPC", 0, "0, 1, 2", "CPCs per GPC"),
            Param("LEGACY", 0, "0, 1", "DISTRIBUTOR legacy"),
            Param("MAX_CGA_CTAS", 16, "1..32", "inner limit"),
            Param("GX_W", 32, "1..32", "grid x"), Param("GY_W", 16, "1..16", "grid y")),
)

BUILDS = {
    "default": {},
    "cpc": dict(CPC_PER_GPC=2, MAX_CGA_CTAS=8, GX_W=12, GY_W=6),
    "legacy": dict(LEGACY=1),
}


@pytest.mark.req("WD-E1", "WD-E2", "WD-E3", "WD-E4", "WD-F28")
@pytest.mark.parametrize("build", list(BUILDS))
def test_command_check_matches_golden(build, seed):
    """Random commands of every level code: the error code (lowest applicable) and the unit
    grid equal the golden model's, in order, under random gaps and back-pressure."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, seed=seed)


@pytest.mark.parametrize("build", list(BUILDS))
def test_command_check_lints_clean(build, tmp_path):
    path, module = write_verilog(BLOCK, BLOCK.resolve_params(BUILDS[build]), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


def test_command_check_rejects_bad_params():
    with pytest.raises(ValueError, match="params"):
        CommandCheck({"N_GPC": 2})
