"""RTL integration of the TMA unit with its memory-side reduction unit on Verilator: ``Tma`` ->
``TmaRedUnit`` -> a memory that only reads and writes (spec tma.md §2.2 "Same package, memory
side"; tb/tma/redchain.py, tb/tma/redchain_tb.py).

Random commands with every RED_OK (op, dtype) pair as tile and im2col TENSOR_REDs and as
BLOCK_REDs, plus stores, loads, prefetches, block copies, control and rejected commands, with
random memory latency, out-of-order responses and back-pressure; checked against the golden
model (the TMA's own requests, err, done, smem, every global line written, barrier totals,
idle/outstanding) and, request by request on the memory side, against the TMA's requests:
READ/WRITE/PREFETCH unchanged, each RED a READ and, next, the WRITE of golden ``red_line``.
"""

import json

import pytest

from sim.cocotb_run import run_testbench
from tb.tma.builds import REDCHAIN as BLOCK, REDCHAIN_BUILDS as BUILDS

TB = "tb.tma.redchain_tb"


@pytest.mark.req("TMA-F41", "TMA-F42", "TMA-F43", "TMA-F44", "TMA-I11", "TMA-V13")
@pytest.mark.parametrize("testcase,fixed_seed", [("red_chain", None), ("red_chain_stress", None),
                                                 # a group of 129,383 L2 requests outran the
                                                 # bench's fixed wait budget (now per request)
                                                 ("red_chain_stress", 1374276708)])
def test_tma_redchain_random_commands(testcase, fixed_seed, seed, tmp_path):
    """About 200 commands (96 covering every RED_OK pair as tile TENSOR_RED, im2col TENSOR_RED
    and BLOCK_RED; 100 random ones weighted towards reductions; rejected ones): every RED line
    the memory writes equals golden ``red_line`` of the line its READ returned and the golden
    model's final line; nothing gets between a RED's READ and WRITE; the memory never sees a
    RED; only the golden WRITE/RED lines change. ``red_chain_stress``: longer latencies, less
    ready everywhere, command gaps."""
    seed = seed if fixed_seed is None else fixed_seed
    out = tmp_path / f"{testcase}.json"
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["default"]), TB, testcase=testcase,
                  seed=seed, env={"GPUBLOCKS_RESULT": str(out)})
    figures = json.loads(out.read_text())
    print(f"seed {seed}: " + json.dumps(figures))
    assert figures["profile"] == testcase
    assert figures["pairs"] == {"tile": 32, "im2col": 32, "block": 32}
    assert figures["rmw"] == figures["red_lines"] > 0 and figures["rejected"] > 0
    assert figures["downstream"]["requests"] == figures["requests"] + figures["red_lines"]
    assert figures["memory"]["reordered"] > 0
