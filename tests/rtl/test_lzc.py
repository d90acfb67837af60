"""RTL regression of LeadingZeroCount: Verilator against the golden model, and its tree depth."""

import pytest

from hw.common.lzc import LeadingZeroCount
from sim import registry
from sim.cocotb_run import run_testbench
from sim.structure import operator_depths

TB = "tb.common.lzc_tb"


@pytest.mark.parametrize("width", [1, 2, 3, 8, 16, 32, 48])
def test_lzc_rtl_matches_golden(width, seed):
    block = registry.get("lzc")
    run_testbench(block, block.resolve_params({"width": width}), TB, seed=seed)


@pytest.mark.parametrize("width", [2, 3, 5, 8, 16, 17, 32, 48, 100, 256])
def test_lzc_is_a_log_depth_tree(width):
    """At most ceil(log2 width) + 1 multiplexers and ceil(log2 width) ANDs on any path (a
    priority chain would be about width deep), and one multiplexer and one AND per tree node."""
    dut = LeadingZeroCount(width)
    levels = (width - 1).bit_length()
    mux_depth, muxes = operator_depths(dut, counted=("mux",))
    and_depth, ands = operator_depths(dut, counted=("&",))
    count_bits = [(id(dut.count), b) for b in range(len(dut.count))]
    assert max(mux_depth[b] for b in count_bits) <= levels + 1
    assert and_depth[(id(dut.zero), 0)] == levels
    assert muxes == width and ands == width - 1        # width - 1 nodes, plus the final mux
