"""Full-size ``TrackingQueues`` (N_Q = 48, POOL = 512, DSLOTS = 256; TQ-C full defaults) on
Verilator: closed-loop random runs in lockstep with the golden model (tb/trackq/tq_tb.py).
The Verilog is about 1.5 MB: conversion takes about 2 minutes and the Verilator build a few
more (cached by Verilog hash), so the test is marked slow (`pytest -m slow`)."""

import pytest

from golden.trackq.params import TrackqParams
from hw.trackq.top import TrackingQueues
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.trackq.tq_tb"

BLOCK = Block(
    name="trackq_full", kind="test", summary="TrackingQueues at full size",
    spec="trackq.md", top=TrackingQueues,
    params=tuple(Param(k, v, "TQ-C", k) for k, v in TrackqParams.full().as_dict().items()),
)


@pytest.mark.slow
@pytest.mark.req("TQ-V1", "TQ-C1", "TQ-C2")
def test_trackq_full_size_random_lockstep(seed):
    """Random closed-loop runs at full size, every port compared with the golden model every
    cycle; TraceChecker on the RTL's ports."""
    run_testbench(BLOCK, BLOCK.defaults(), TB, testcase="random_lockstep", seed=seed,
                  env={"TQ_RUNS": "4", "TQ_NREQ": "300"})
