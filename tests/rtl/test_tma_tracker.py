"""RTL regression of the TMA tracker (hw/tma/tracker.py) on Verilator.

The testbench (tb/tma/tracker_tb.py) drives random READ/WRITE/RED/PREFETCH pieces with random
gaps into ``TmaTracker``, answers through an L2 model with random 1..64-cycle (then long) latency,
out-of-order responses, random ``ready`` and random bytes in unrequested sectors, and replays the
observed handshakes to check the request sequence, tag distinctness, placements, acknowledgements,
the ``outstanding`` counter and the absence of tag leaks. Builds: TRK_ENTRIES 4, 32 and 256.
"""

import pytest

from golden.tma.params import TmaParams
from hw.common.params import reject
from hw.tma.tracker import TmaTracker
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.tma.tracker_tb"


class TrackerTop(TmaTracker):
    """``TmaTracker`` with integer parameters (the flow passes ints)."""

    def __init__(self, trk_entries=32, addr_w=64):
        try:
            params = TmaParams(TRK_ENTRIES=trk_entries, ADDR_W=addr_w)
        except ValueError as exc:
            reject(self, str(exc))
        super().__init__(params)


BLOCK = Block(
    name="tma_tracker", kind="test", summary="TmaTracker test top", spec="tma.md §2.2 Tracker",
    top=TrackerTop,
    params=(Param("trk_entries", 32, "power of two, 4..256", "TRK_ENTRIES (TMA-C6)"),
            Param("addr_w", 64, "40..64", "ADDR_W (TMA-C1)")),
)

BUILDS = {"trk4": dict(trk_entries=4, addr_w=48), "trk32": dict(trk_entries=32),
          "trk256": dict(trk_entries=256, addr_w=40)}


def _run(build, seed, testcase):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed)


@pytest.mark.req("TMA-F27", "TMA-F28", "TMA-F29", "TMA-I4", "TMA-I5", "TMA-V6", "TMA-V11")
@pytest.mark.parametrize("build", list(BUILDS))
def test_tracker_random_traffic(build, seed):
    """Request order, distinct tags, placements, acks and outstanding under random traffic."""
    _run(build, seed, "random_traffic")


@pytest.mark.req("TMA-F27", "TMA-C6", "TMA-V8")
@pytest.mark.parametrize("build", list(BUILDS))
def test_tracker_table_full_and_no_tag_leak(build, seed):
    """TRK_ENTRIES requests with every tag once, the next stalls; drains to outstanding 0."""
    _run(build, seed, "table_full_no_leak")


@pytest.mark.parametrize("kwargs,name", [
    (dict(trk_entries=3), "TRK_ENTRIES"), (dict(trk_entries=2), "TRK_ENTRIES"),
    (dict(trk_entries=512), "TRK_ENTRIES"), (dict(addr_w=39), "ADDR_W"),
])
def test_tracker_parameters_are_checked(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TrackerTop(**kwargs)


def test_tracker_rejects_a_non_params_object():
    with pytest.raises(ValueError, match="params"):
        TmaTracker(params={"TRK_ENTRIES": 4})
