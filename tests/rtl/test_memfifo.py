"""RTL regression of hw.common.memfifo.MemFifo on Verilator (tb.common.memfifo_tb)."""

import pytest

from sim import registry
from sim.cocotb_run import run_testbench

TB = "tb.common.memfifo_tb"

# (width, depth): the default (a memrouter QoS queue's depth), a non-power-of-two depth, the
# smallest, and a free list's shape (PT_ENTRIES deep)
BUILDS = [(64, 64), (5, 3), (1, 2), (27, 1024)]


def _run(width, depth, seed):
    block = registry.get("memfifo")
    params = block.resolve_params({"width": width, "depth": depth})
    result = run_testbench(block, params, TB, seed=seed)
    assert result.tests == 2


@pytest.mark.parametrize("width,depth", BUILDS)
def test_memfifo(width, depth, seed):
    _run(width, depth, seed)


# seeds that once failed, kept as regression cases: (width, depth, seed, what went wrong)
REGRESSION_SEEDS = [
    (1, 2, 1186206290, "the write-pressure phase ended empty, so the reset found no entries "
                       "and reset_nonempty was never covered"),
]


@pytest.mark.parametrize("width,depth,fixed_seed,why", REGRESSION_SEEDS)
def test_memfifo_regression_seed(width, depth, fixed_seed, why):
    _run(width, depth, fixed_seed)
