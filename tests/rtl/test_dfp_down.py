"""RTL regression of hw.dfp.downconvert.DfpDownConverter on Verilator (tb.dfp.down_tb).

Builds (q_lanes, blk_max, in_w, bias_bits): the default (1, 64, 32, 1) and (4, 64, 48, 1), the
latter for the IN_W 48 vector DFP-GV21 i. Every testcase compares whole output beats with
golden.dfp.downconvert.DownConverterModel under random gaps and back-pressure, with protocol
checkers on both streams and the counters compared at the end.
"""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.dfp.down_tb"

BUILDS = {
    "q1_w32": {"q_lanes": 1, "blk_max": 64, "in_w": 32, "bias_bits": 1},
    "q4_w48": {"q_lanes": 4, "blk_max": 64, "in_w": 48, "bias_bits": 1},
}


def _run(build, seed, testcase):
    block = registry.get("dfp_downconverter")
    result = run_testbench(block, block.resolve_params(BUILDS[build]), TB, testcase=testcase,
                           seed=seed)
    assert result.tests == len(testcase.split(","))
    return result


@pytest.mark.req("DFP-GV21", "DFP-V7", "DFP-V1", "DFP-F42", "DFP-F43", "DFP-F44", "DFP-F45",
                 "DFP-F47", "DFP-C5")
@pytest.mark.parametrize("build", list(BUILDS))
def test_down_golden_vectors(build, seed):
    _run(build, seed, "golden_vectors")


@pytest.mark.req("DFP-V1", "DFP-V3", "DFP-V6", "DFP-F42", "DFP-F43", "DFP-F44", "DFP-F45",
                 "DFP-F46", "DFP-F47", "DFP-I1", "DFP-I4", "DFP-I8", "DFP-I9", "DFP-C3",
                 "DFP-C4", "DFP-C5", "DFP-C10")
@pytest.mark.parametrize("build", list(BUILDS))
def test_down_random_blocks(build, seed):
    _run(build, seed, "random_blocks")


@pytest.mark.req("DFP-V11", "DFP-I1", "DFP-I9", "DFP-V1")
def test_down_backpressure(seed):
    _run("q1_w32", seed, "backpressure")


@pytest.mark.req("DFP-V5", "DFP-F44")
@pytest.mark.parametrize("build", list(BUILDS))
def test_down_identity(build, seed):
    _run(build, seed, "identity")


@pytest.mark.req("DFP-E5", "DFP-E7", "DFP-E10", "DFP-V13", "DFP-F46")
@pytest.mark.parametrize("build", list(BUILDS))
def test_down_error_paths(build, seed):
    _run(build, seed, "error_paths,stats_clr_wins")


@pytest.mark.req("DFP-E12", "DFP-V13")
def test_down_reset_mid_block(seed):
    _run("q4_w48", seed, "reset_mid_block")


@pytest.mark.req("DFP-P6", "DFP-I9")
@pytest.mark.parametrize("build", list(BUILDS))
def test_down_throughput(build, seed):
    _run(build, seed, "throughput")
