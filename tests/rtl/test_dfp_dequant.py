"""RTL regression of hw.dfp.dequantizer.DfpDequantizer on Verilator (tb.dfp.dequant_tb).

Builds q_lanes 1 and 4; every output beat is compared whole with golden.dfp.quant.dequant_lzd
under random gaps and back-pressure, with protocol checkers on both streams.
"""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.dfp.dequant_tb"


def _run(q_lanes, seed, testcase):
    block = registry.get("dfp_dequantizer")
    result = run_testbench(block, block.resolve_params({"q_lanes": q_lanes}), TB,
                           testcase=testcase, seed=seed)
    assert result.tests == len(testcase.split(","))
    return result


@pytest.mark.req("DFP-GV12", "DFP-V7", "DFP-F16", "DFP-F17", "DFP-F18", "DFP-E11", "DFP-V13")
@pytest.mark.parametrize("q_lanes", [1, 4])
def test_dequant_golden_vectors(q_lanes, seed):
    _run(q_lanes, seed, "golden_vectors")


@pytest.mark.req("DFP-V1", "DFP-F16", "DFP-F17", "DFP-F18", "DFP-I1", "DFP-I7", "DFP-I9",
                 "DFP-C3")
@pytest.mark.parametrize("q_lanes", [1, 4])
def test_dequant_random(q_lanes, seed):
    _run(q_lanes, seed, "random_beats")


@pytest.mark.req("DFP-V11", "DFP-I9")
def test_dequant_backpressure(seed):
    _run(1, seed, "backpressure")


@pytest.mark.req("DFP-V5")
@pytest.mark.parametrize("q_lanes", [1, 4])
def test_dequant_round_trip(q_lanes, seed):
    _run(q_lanes, seed, "round_trip")


@pytest.mark.req("DFP-P5")
@pytest.mark.parametrize("q_lanes", [1, 4])
def test_dequant_latency(q_lanes, seed):
    _run(q_lanes, seed, "latency")
