"""RTL regression of ``TrackingQueues`` on Verilator, cycle by cycle against the golden model.

Builds (each cached by Verilog hash): the §5 vector parameter sets (N_Q = 4, POOL = 16,
FAST_DEPTH = 4 and the variants N_Q = 3, POOL = 4, FAST_PATH = 0, COMMIT_DEPTH = 1) and the
(N_Q, POOL) pairs of TQ-V14 with COMMIT_DEPTH 1/2/4. Every build runs every golden vector that
uses its parameters and closed-loop random runs (tb/trackq/tq_tb.py). The full-size build is in
tests/rtl/test_trackq_full.py.
"""

import pytest

from golden.trackq.params import TrackqParams
from hw.trackq.top import TrackingQueues
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.trackq.tq_tb"

BLOCK = Block(
    name="trackq_top", kind="test", summary="TrackingQueues (test builds)",
    spec="trackq.md", top=TrackingQueues,
    params=tuple(Param(k, v, "TQ-C", k) for k, v in TrackqParams.test().as_dict().items()),
)

BUILDS = {
    "gv": TrackqParams.gv().as_dict(),
    "gv_nq3": TrackqParams.gv(N_Q=3).as_dict(),
    "gv_pool4": TrackqParams.gv(POOL=4).as_dict(),
    "gv_nofast": TrackqParams.gv(FAST_PATH=0).as_dict(),
    "gv_cd1": TrackqParams.gv(COMMIT_DEPTH=1).as_dict(),
    "nq2_pool4_cd2": TrackqParams.test(N_Q=2, POOL=4, COMMIT_DEPTH=2).as_dict(),
    "nq8_pool16_cd1": TrackqParams.test(N_Q=8, POOL=16, COMMIT_DEPTH=1).as_dict(),
    "nq6_pool8_cd2_nofl": TrackqParams.test(N_Q=6, POOL=8, COMMIT_DEPTH=2, FREELIST=0,
                                            FAST_DEPTH=1).as_dict(),
}


def run(build, seed, testcase, **env):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, env={k: str(v) for k, v in env.items()})


VECTOR_BUILDS = ["gv", "gv_nq3", "gv_pool4", "gv_nofast", "gv_cd1"]


@pytest.mark.req("TQ-V1", "TQ-GV1", "TQ-GV2", "TQ-GV3", "TQ-GV4", "TQ-GV5", "TQ-GV6", "TQ-GV7",
                 "TQ-GV8", "TQ-GV9", "TQ-GV10", "TQ-GV11", "TQ-GV12", "TQ-GV13", "TQ-GV14",
                 "TQ-GV15", "TQ-GV17", "TQ-GV18", "TQ-P1", "TQ-P2", "TQ-P3", "TQ-P4", "TQ-P6")
@pytest.mark.parametrize("build", VECTOR_BUILDS)
def test_trackq_golden_vectors(build, seed):
    """Every TQ-GV vector of its build, lockstep with the golden model and against the printed
    tables, on the RTL's port values."""
    run(build, seed, "golden_vectors")


@pytest.mark.req("TQ-V1", "TQ-V2", "TQ-V3", "TQ-V4", "TQ-V5", "TQ-V6", "TQ-V7", "TQ-V8", "TQ-V9",
                 "TQ-V10", "TQ-V11", "TQ-V12", "TQ-V13", "TQ-V14")
@pytest.mark.parametrize("build", list(BUILDS))
def test_trackq_random_lockstep(build, seed):
    """TQ-V14 random regression: 50 closed-loop runs (seeds drawn from the printed test seed)
    per build; every cycle compared with the golden model, TraceChecker on the RTL's ports."""
    run(build, seed, "random_lockstep", TQ_RUNS=50, TQ_NREQ=40)


PARAM_CASES = [("N_Q", 0), ("N_Q", 65), ("POOL", 1), ("POOL", 4097), ("N_WARPS", 0),
               ("BANKS", 9), ("SECTORS", 8), ("DSLOTS", 1), ("ID_W", 33), ("FAST_PATH", 2),
               ("FAST_DEPTH", 0), ("COMMIT_DEPTH", 65), ("FREELIST", 2), ("SEQ_W", 6),
               ("SEQ_W", 33), ("N_Q", True), ("POOL", "16")]


@pytest.mark.req("TQ-C17", "TQ-C1", "TQ-C2", "TQ-C3", "TQ-C4", "TQ-C5", "TQ-C6", "TQ-C7",
                 "TQ-C8", "TQ-C9", "TQ-C10", "TQ-C11", "TQ-C12")
@pytest.mark.parametrize("name,value", PARAM_CASES)
def test_trackq_rejects_bad_parameters(name, value):
    """Illegal build parameters raise ValueError naming the parameter; no hardware is built."""
    with pytest.raises(ValueError, match=name):
        TrackingQueues(**{name: value})
