"""RTL regression of the DFP16 dot unit (``DfpDotUnit``) on Verilator against
``golden.dfp.dot.DotUnit``: golden vectors, error paths, random streams with back-pressure,
statistics and the cycle figures DFP-P1..P4 (testbench ``tb.dfp.dot_tb``).

Seven builds, shared between tests (several cocotb testcases per simulator run):
(LANES, ACC_W) = (1, 32), (1, 48), (4, 32), (16, 32), (16, 48) with the default pipeline,
(8, 32) with tree_reg_every 5 and fadd_cyc 4, and (8, 48) with mul_stages 1,
tree_reg_every 1, fadd_cyc 1 (DFP-C7: every build is compared with the same golden model).
"""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.dfp.dot_tb"

B1_32 = dict(lanes=1, acc_w=32)
B1_48 = dict(lanes=1, acc_w=48)
B4_32 = dict(lanes=4, acc_w=32)
B16_32 = dict(lanes=16, acc_w=32)
B16_48 = dict(lanes=16, acc_w=48)
B8_32_SLOW = dict(lanes=8, acc_w=32, tree_reg_every=5, fadd_cyc=4)
B8_48_FAST = dict(lanes=8, acc_w=48, mul_stages=1, tree_reg_every=1, fadd_cyc=1)
ALL = [B1_32, B1_48, B4_32, B16_32, B16_48, B8_32_SLOW, B8_48_FAST]


def _id(p):
    return "_".join(f"{k}{v}" for k, v in p.items())


def _run(params, testcase, seed):
    block = registry.get("dfp")
    return run_testbench(block, block.resolve_params(params), TB, testcase=testcase, seed=seed)


@pytest.mark.req("DFP-GV15", "DFP-GV16", "DFP-GV18", "DFP-GV19", "DFP-GV20", "DFP-GV22",
                 "DFP-GV28", "DFP-V7", "DFP-V12", "DFP-F24", "DFP-F26", "DFP-F27", "DFP-F28",
                 "DFP-F29", "DFP-F30", "DFP-F32", "DFP-F33", "DFP-F34", "DFP-F35", "DFP-F36",
                 "DFP-F37", "DFP-F38", "DFP-F39", "DFP-F40", "DFP-F41", "DFP-F48")
def test_dfp_dot_golden_vectors_lanes1_acc32(seed):
    _run(B1_32, "gv15,gv16,gv18,gv19,gv20,gv22,gv28", seed)


@pytest.mark.req("DFP-GV16", "DFP-GV22", "DFP-V7")
def test_dfp_dot_golden_vectors_lanes1_acc48(seed):
    _run(B1_48, "gv16,gv22", seed)


@pytest.mark.req("DFP-GV17", "DFP-GV22", "DFP-V7", "DFP-F31")
@pytest.mark.parametrize("params", [B16_32, B16_48], ids=_id)
def test_dfp_dot_golden_vectors_lanes16(params, seed):
    _run(params, "gv17,gv22", seed)


@pytest.mark.req("DFP-V14", "DFP-F36")
def test_dfp_dot_detector_edge_acc48(seed):
    _run(B16_48, "detector_edge_acc48", seed)


@pytest.mark.req("DFP-E1", "DFP-E2", "DFP-E3", "DFP-E4", "DFP-E6", "DFP-E9", "DFP-E12",
                 "DFP-F25", "DFP-F31", "DFP-V14")
@pytest.mark.parametrize("params", [B1_32, B1_48], ids=_id)
def test_dfp_dot_error_paths(params, seed):
    _run(params, "errors_e1_e2_e6,errors_e9,errors_e3_e4_chunk,errors_e12_reset", seed)


@pytest.mark.req("DFP-V1", "DFP-V2", "DFP-V6", "DFP-C1", "DFP-C2", "DFP-C7", "DFP-C8",
                 "DFP-C9", "DFP-C11", "DFP-C12", "DFP-C13", "DFP-C14", "DFP-C15", "DFP-I1",
                 "DFP-I2", "DFP-I3", "DFP-I4", "DFP-F21", "DFP-F22", "DFP-F23", "DFP-F24",
                 "DFP-F25", "DFP-F26", "DFP-F27", "DFP-F28", "DFP-F29", "DFP-F30", "DFP-F31",
                 "DFP-F32", "DFP-F33", "DFP-F34", "DFP-F35", "DFP-F36", "DFP-F37", "DFP-F38",
                 "DFP-F39", "DFP-F40", "DFP-F41", "DFP-F46", "DFP-F48", "DFP-E1", "DFP-E2",
                 "DFP-E3", "DFP-E4", "DFP-E6")
@pytest.mark.parametrize("params", ALL, ids=_id)
def test_dfp_dot_random_streams(params, seed):
    _run(params, "random_stream", seed)


@pytest.mark.req("DFP-V11", "DFP-I9", "DFP-I1")
@pytest.mark.parametrize("params", [B4_32, B16_32], ids=_id)
def test_dfp_dot_back_pressure(params, seed):
    _run(params, "back_pressure", seed)


@pytest.mark.req("DFP-F46", "DFP-I5")
def test_dfp_dot_stats_clr_priority(seed):
    _run(B1_32, "stats_clr_priority", seed)


@pytest.mark.req("DFP-P1", "DFP-P2", "DFP-P3", "DFP-P4")
@pytest.mark.parametrize("params", ALL, ids=_id)
def test_dfp_dot_cycles(params, seed):
    """Cycle testcases; the measured figures are in the sim log (``P1 ..``, ``P4 latency``)."""
    _run(params, "perf_p1,perf_p2,perf_p3,perf_p4", seed)
