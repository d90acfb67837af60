"""RTL regression of the per-SM rasterizers (``RasterArray``, hw/wdist/raster*.py) on Verilator
against G-RAST (tb/wdist/raster_tb.py)."""

import pytest

from golden.wdist.params import WdistParams
from hw.wdist.raster import Rasterizer
from hw.wdist.raster_array import RasterArray
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.wdist.raster_tb"


def raster_array(**params):
    """Test top: RasterArray of the WdistParams built from integer parameters."""
    return RasterArray(WdistParams(**params))


BLOCK = Block(
    name="wdist_raster", kind="test",
    summary="wd_raster x N_SM behind the lock-step fork (test builds)",
    spec="wdist.md G-RAST, WD-F25..F27", top=raster_array,
    params=(Param("N_GPC", 2, "1..16", "GPCs"), Param("SM_PER_GPC", 4, "2..32", "SMs per GPC"),
            Param("CTA_SLOTS", 8, "1..63", "CTA slots"),
            Param("DELTA_W", 12, "see WD-C13", "delta"),
            Param("RASTER_FIFO_DEPTH", 4, "2..16", "runs"), Param("GX_W", 16, "1..32", "grid x"),
            Param("GY_W", 8, "1..16", "grid y"), Param("GZ_W", 8, "1..16", "grid z")),
)

# "fold": the smallest legal DELTA_W for 4 SMs x 4 slots (6: folds every 64 units) and the
# smallest run FIFO; "default": spec widths on 2 x 4 SMs.
BUILDS = {
    "fold": dict(CTA_SLOTS=4, DELTA_W=6, RASTER_FIFO_DEPTH=2),
    "default": dict(GX_W=32, GY_W=16, GZ_W=16, CTA_SLOTS=32),
}


def run(build, seed, testcase, **env):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, env={k: str(v) for k, v in env.items()})


@pytest.mark.req("WD-F25", "WD-F26", "WD-F27", "WD-V8", "WD-I4")
@pytest.mark.parametrize("build", list(BUILDS))
def test_raster_random_streams(build, seed):
    """Random beat streams of every level and legacy LAUNCH_ID grids, random gaps and
    back-pressure: every record equals G-RAST, per-SM order, each grid a permutation."""
    run(build, seed, "random_streams")


@pytest.mark.req("WD-GV2", "WD-GV9", "WD-GV10", "WD-GV11", "WD-V16")
def test_raster_golden_vectors(seed):
    run("default", seed, "golden_vectors")


@pytest.mark.req("WD-P5")
@pytest.mark.parametrize("build", list(BUILDS))
def test_raster_id_rate(build, seed):
    """CTA_SLOTS IDs of one beat on consecutive cycles, the first within DELTA_W + 4."""
    run(build, seed, "id_rate")


def test_rasterizer_rejects_bad_params():
    with pytest.raises(ValueError, match="WdistParams"):
        Rasterizer({"N_GPC": 2})
