"""RTL regression of the ``SingleFifo`` baseline on Verilator (tb/trackq/fifo_tb.py)."""

import pytest

from golden.trackq.params import TrackqParams
from hw.trackq.fifo import SingleFifo
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.trackq.fifo_tb"

BLOCK = Block(
    name="trackq_fifo", kind="test", summary="SingleFifo baseline (test builds)",
    spec="trackq.md §4.5", top=SingleFifo,
    params=tuple(Param(k, v, "TQ-C", k) for k, v in TrackqParams.test().as_dict().items()),
)

BUILDS = {"gv": TrackqParams.gv().as_dict(),
          "pool4_cd1": TrackqParams.test(POOL=4, COMMIT_DEPTH=1).as_dict()}


def run(build, seed, testcase, **env):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, env={k: str(v) for k, v in env.items()})


@pytest.mark.req("TQ-I13", "TQ-F46", "TQ-F47", "TQ-V15", "TQ-GV1", "TQ-GV17")
@pytest.mark.parametrize("build", list(BUILDS))
def test_single_fifo_matches_golden(build, seed):
    """Lockstep with SingleFifoModel on random equivalence-domain traffic and the SingleFifo
    vectors; req.ready, pop and resp also equal TrackingQueuesModel in mode 1 (TQ-V15)."""
    run(build, seed, "golden_vectors,random_lockstep", TQ_RUNS=30, TQ_NREQ=40)


@pytest.mark.parametrize("name,value", [("POOL", 1), ("COMMIT_DEPTH", 0), ("DSLOTS", 5000)])
def test_single_fifo_rejects_bad_parameters(name, value):
    with pytest.raises(ValueError, match=name):
        SingleFifo(**{name: value})
