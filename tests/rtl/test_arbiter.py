"""RTL regression of the round-robin arbiter on Verilator, cycle by cycle against the golden model."""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.common.arbiter_tb"


def _run(n, seed, testcase):
    block = registry.get("arbiter")
    return run_testbench(block, block.resolve_params({"n": n}), TB, testcase=testcase, seed=seed)


@pytest.mark.req("TQ-GV16", "TQ-V16", "TQ-F45")
def test_arbiter_golden_vector_tq_gv16(seed):
    _run(4, seed, "golden_vector_tq_gv16")


@pytest.mark.req("TQ-V16", "TQ-F45", "TQ-I12")
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_arbiter_exhaustive_small_n(n, seed):
    _run(n, seed, "ports,exhaustive")


@pytest.mark.req("TQ-F45", "TQ-I12")
@pytest.mark.parametrize("n", [3, 8, 48, 64])
def test_arbiter_random_lockstep_and_fairness(n, seed):
    _run(n, seed, "ports,random_lockstep,fairness")
