"""RTL regression of hw.dfp.quantizer.DfpQuantizer on Verilator (tb.dfp.quant_tb).

Builds (q_lanes, blk_max, bias_bits): the default (1, 64, 1), four lanes (4, 64, 1), two bias
bits (1, 64, 2), the widest (16, 1024, 1), and (2, 6, 1) whose 3-beat buffers (not a power of
two) make BLK_MAX cuts and buffer turnarounds frequent. Every testcase compares whole output beats with
golden.dfp.quant.QuantizerModel under random valid gaps and back-pressure, with protocol
checkers on both streams and the counters compared at the end.
"""


import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.dfp.quant_tb"

BUILDS = {
    "q1": {"q_lanes": 1, "blk_max": 64, "bias_bits": 1},
    "q4": {"q_lanes": 4, "blk_max": 64, "bias_bits": 1},
    "bias2": {"q_lanes": 1, "blk_max": 64, "bias_bits": 2},
    "q16_blk1024": {"q_lanes": 16, "blk_max": 1024, "bias_bits": 1},
    "q2_blk6": {"q_lanes": 2, "blk_max": 6, "bias_bits": 1},      # 3-beat buffers, frequent cuts
}
VECTOR_BUILDS = ["q1", "q4", "bias2", "q16_blk1024"]


def _run(build, seed, testcase):
    block = registry.get("dfp_quantizer")
    result = run_testbench(block, block.resolve_params(BUILDS[build]), TB, testcase=testcase,
                           seed=seed)
    assert result.tests == len(testcase.split(","))
    return result


@pytest.mark.req("DFP-V7", "DFP-V1", "DFP-GV1", "DFP-GV3", "DFP-GV5", "DFP-GV6", "DFP-GV7",
                 "DFP-GV8", "DFP-GV9", "DFP-GV10", "DFP-GV11", "DFP-GV29", "DFP-F4", "DFP-F5",
                 "DFP-F6", "DFP-F7", "DFP-F8", "DFP-F9", "DFP-F10", "DFP-F11", "DFP-F12",
                 "DFP-F14", "DFP-F15", "DFP-F47", "DFP-C6", "DFP-C16")
@pytest.mark.parametrize("build", VECTOR_BUILDS)
def test_quant_golden_vectors(build, seed):
    _run(build, seed, "golden_vectors")


@pytest.mark.req("DFP-V1", "DFP-V3", "DFP-F4", "DFP-F5", "DFP-F9", "DFP-F10", "DFP-F11",
                 "DFP-F12", "DFP-F13", "DFP-F14", "DFP-F15", "DFP-F46", "DFP-F47", "DFP-I1",
                 "DFP-I4", "DFP-I6", "DFP-I9", "DFP-C3", "DFP-C4", "DFP-C6", "DFP-C10",
                 "DFP-C16")
@pytest.mark.parametrize("build", list(BUILDS))
def test_quant_random_blocks(build, seed):
    _run(build, seed, "random_blocks")


@pytest.mark.req("DFP-V11", "DFP-I1", "DFP-I9", "DFP-V1")
@pytest.mark.parametrize("build", ["q1", "q4"])
def test_quant_backpressure(build, seed):
    _run(build, seed, "backpressure")


@pytest.mark.req("DFP-V5")
@pytest.mark.parametrize("build", ["q1", "q4"])
def test_quant_round_trip(build, seed):
    _run(build, seed, "round_trip")


@pytest.mark.req("DFP-E5", "DFP-E7", "DFP-E8", "DFP-V13", "DFP-F13", "DFP-F46")
@pytest.mark.parametrize("build", ["q1", "q16_blk1024"])
def test_quant_error_paths(build, seed):
    _run(build, seed, "error_paths,stats_clr_wins")


@pytest.mark.req("DFP-E12", "DFP-V13")
def test_quant_reset_mid_block(seed):
    _run("q4", seed, "reset_mid_block")


@pytest.mark.req("DFP-P6", "DFP-I9")
@pytest.mark.parametrize("build", ["q1", "q16_blk1024", "q2_blk6"])
def test_quant_throughput(build, seed):
    _run(build, seed, "throughput")
