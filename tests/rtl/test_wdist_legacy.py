"""RTL regression of the legacy baseline distributor (hw/wdist/legacy.py) on Verilator against
golden G-LEGACY (tb/wdist/legacy_tb.py), and its Verilator -Wall lint."""

import pytest

from golden.wdist.params import WdistParams
from hw.wdist.legacy import Legacy
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

TB = "tb.wdist.legacy_tb"


def legacy(**params):
    """Test top: Legacy of the WdistParams built from integer parameters."""
    return Legacy(WdistParams(DISTRIBUTOR="legacy", **params))


BLOCK = Block(
    name="wdist_legacy", kind="test", summary="wd_legacy baseline (test builds)",
    spec="wdist.md G-LEGACY, WD-F30", top=legacy,
    params=(Param("N_GPC", 2, "1..16", "GPCs"), Param("SM_PER_GPC", 4, "2..32", "SMs per GPC"),
            Param("CTA_SLOTS", 8, "1..63", "CTA slots"), Param("WARP_CAP", 64, "1..64", "warps")),
)

BUILDS = {"2x4": {}, "4x8": dict(N_GPC=4, SM_PER_GPC=8, CTA_SLOTS=32)}


@pytest.mark.req("WD-F30", "WD-V14")
@pytest.mark.parametrize("build", list(BUILDS))
def test_legacy_matches_golden(build, seed):
    """Random PLAIN and level-GPC (LB, MC) grids, waits and NEVER_FITS, bcast back-pressure:
    every LAUNCH_ID beat, FAIL event and result equals G-LEGACY."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase="random_grids",
                  seed=seed)


@pytest.mark.req("WD-F30", "WD-V14")
def test_legacy_regression_seed_1110305565():
    """A grid whose first attempt waits and then fits: the wait must end with the GRID beat,
    not a second wait (the testbench then completed CTAs twice and the placements diverged)."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["2x4"]), TB, testcase="random_grids",
                  seed=1110305565)


@pytest.mark.req("WD-P8")
def test_legacy_plain_fill_one_cta_per_cycle(seed):
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["4x8"]), TB, testcase="plain_fill_rate",
                  seed=seed)


@pytest.mark.parametrize("build", list(BUILDS))
def test_legacy_lints_clean(build, tmp_path):
    path, module = write_verilog(BLOCK, BLOCK.resolve_params(BUILDS[build]), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


def test_legacy_rejects_bad_params():
    with pytest.raises(ValueError, match="params"):
        Legacy(None)


@pytest.mark.req("WD-F30", "WD-V14")
def test_legacy_regression_seed_1164508889():
    """The last LAUNCH_ID beat is still held by back-pressure after the last result: the closed
    loop must drain it (it stopped 8 cycles after the result and saw 49 of 50 beats)."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["2x4"]), TB, testcase="random_grids",
                  seed=1164508889)
