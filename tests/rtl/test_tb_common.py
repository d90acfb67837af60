"""RTL tests of the shared testbench library: the memory model served through the test-only
stream loopback harness (tb.common.harness) on Verilator (tb.common.memory_tb)."""

import json

import pytest

from sim.cocotb_run import run_testbench
from tb.common.harness import HARNESS_BLOCK
from tb.common.memory_tb import DEFAULT_CONFIG, memtb_fields

TB = "tb.common.memory_tb"

CONFIGS = {
    # 8-byte words, random reorder, outstanding limit 6
    "random_limit6": {},
    # same build, reordering only through different latencies, tight limit
    "by_latency_limit2": {"order": "by_latency", "max_outstanding": 2, "min_latency": 3,
                          "max_latency": 9},
    # 32-byte sectors, in order, no limit (the tag pool of 16 bounds it), long latency
    "in_order_32B": {"data_bytes": 32, "order": "in_order", "max_outstanding": None,
                     "min_latency": 2, "max_latency": 20, "requests": 200, "beats": 4},
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_memory_model_through_harness(name, seed):
    cfg = dict(DEFAULT_CONFIG, **CONFIGS[name])
    req, resp = memtb_fields(cfg)
    params = {"req_width": req.width, "resp_width": resp.width}
    run_testbench(HARNESS_BLOCK, HARNESS_BLOCK.resolve_params(params), TB, seed=seed,
                  env={"MEMTB_CONFIG": json.dumps(cfg)}, label=f"memtb-{name}")
