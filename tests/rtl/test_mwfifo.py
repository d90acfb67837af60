"""RTL regression of hw.common.mwfifo.MultiWriteFifo on Verilator (tb.common.mwfifo_tb)."""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.common.mwfifo_tb"

# (width, depth, ports): the default build, a non-power-of-two depth, the smallest build (depth
# 1: it lost a write made while reading at full until its slot index stopped wrapping mod 2;
# seed 1555828812 found it), a wider one, and depth < ports (a cycle of writes overfills it)
BUILDS = [(8, 4, 4), (5, 3, 2), (1, 1, 1), (16, 6, 3), (3, 2, 5)]


@pytest.mark.parametrize("width,depth,ports", BUILDS)
def test_mwfifo(width, depth, ports, seed):
    block = registry.get("mwfifo")
    params = block.resolve_params({"width": width, "depth": depth, "ports": ports})
    result = run_testbench(block, params, TB, seed=seed)
    assert result.tests == 5
