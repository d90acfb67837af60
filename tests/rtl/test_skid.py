"""RTL regression of hw.common.skid.SkidBuffer on Verilator (tb.common.skid_tb)."""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.common.skid_tb"


@pytest.mark.parametrize("shape", [1, 8, 37, 128])
def test_skid(shape, seed):
    block = registry.get("skid")
    result = run_testbench(block, block.resolve_params({"shape": shape}), TB, seed=seed)
    assert result.tests == 3
