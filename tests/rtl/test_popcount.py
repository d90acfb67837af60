"""RTL regression of PrefixPopcount: Verilator against the golden model, and its adder structure."""

import pytest
# The AST node classes are not re-exported by amaranth.hdl in 0.5 (pinned ~= 0.5.0 in pyproject).

from hw.common.popcount import PrefixPopcount
from sim import registry
from sim.cocotb_run import run_testbench
from sim.structure import operator_depths

TB = "tb.common.popcount_tb"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16, 48, 64])
def test_prefix_popcount_rtl_matches_golden(n, seed):
    block = registry.get("prefix_popcount")
    run_testbench(block, block.resolve_params({"n": n}), TB, seed=seed)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 17, 48, 64, 100, 256, 1000, 1024])
def test_prefix_popcount_is_log_depth_and_work_efficient(n):
    """Longest input-to-output path: ceil(log2 n) adders to total, <= 2*ceil(log2 n) - 2 to any
    o[k]; fewer than 2n adders in all (a ripple count would be n - 1 deep)."""
    dut = PrefixPopcount(n)
    depth, count = operator_depths(dut)
    levels = (n - 1).bit_length()
    o_depth = max(depth.get((id(dut.o), b), 0) for b in range(len(dut.o)))
    total_depth = max(depth[(id(dut.total), b)] for b in range(len(dut.total)))
    assert total_depth == levels, f"total is {total_depth} adders deep, expected {levels}"
    assert o_depth <= max(0, 2 * levels - 2), f"o is {o_depth} adders deep for n={n}"
    assert count < 2 * n, f"{count} adders for n={n}"
