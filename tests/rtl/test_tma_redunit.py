"""RTL regression of the memory-side reduction unit ``hw.tma.TmaRedUnit`` on Verilator
(tb/tma/redunit_tb.py): every RED_OK (op, dtype) pair on edge cases and on >= 10 000 random
operand pairs against golden ``red_line`` (TMA-V12), READ / WRITE / PREFETCH pass-through,
out-of-order downstream responses with random latency, random gaps and back-pressure on every
stream, the TMA-F43 monitor on ``dn_req``, and the documented cycles per RED line.
"""

import json

import pytest

from hw.tma import TmaRedUnit
from sim.cocotb_run import run_testbench
from tb.tma.builds import REDUNIT as BLOCK, REDUNIT_BUILDS as BUILDS

TB = "tb.tma.redunit_tb"


def _run(build, seed, testcase, tmp_path):
    out = tmp_path / f"{testcase}.json"
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase, seed=seed,
                  env={"GPUBLOCKS_RESULT": str(out)})
    figures = json.loads(out.read_text())
    print(json.dumps(figures))
    return figures


@pytest.mark.req("TMA-V12", "TMA-F44", "TMA-F42", "TMA-F41", "TMA-I11")
@pytest.mark.parametrize("build", list(BUILDS))
def test_redunit_edge_cases(build, seed, tmp_path):
    """Every (op, dtype) pair of RED_OK on every combination of its edge values."""
    figures = _run(build, seed, "arith_edges", tmp_path)
    assert figures["red"] == figures["rmw"] > 0


@pytest.mark.req("TMA-V16", "TMA-F44", *[f"TMA-GV{k}" for k in range(37, 73)])
def test_redunit_reduction_vectors(seed, tmp_path):
    """TMA-GV37..GV72, one RED each: the memory ends up holding the spec's result."""
    figures = _run("default", seed, "vectors", tmp_path)
    assert figures["vectors"] == sorted(f"GV{k}" for k in range(37, 73))


@pytest.mark.req("TMA-V12", "TMA-F44", "TMA-F42", "TMA-F41")
def test_redunit_random_operands(seed, tmp_path):
    """>= 10 000 random operand pairs per (op, dtype) pair, random be per element."""
    figures = _run("default", seed, "arith_random", tmp_path)
    assert len(figures["pairs"]) == 32 and min(figures["pairs"].values()) >= 10_000


@pytest.mark.req("TMA-F42", "TMA-F43", "TMA-I11", "TMA-I13", "TMA-I4", "TMA-I5")
@pytest.mark.parametrize("build", list(BUILDS))
def test_redunit_mixed_traffic(build, seed, tmp_path):
    """Pass-through, ordering and read-modify-write on shared lines under random latency,
    out-of-order responses and back-pressure on every stream."""
    figures = _run(build, seed, "mixed_traffic", tmp_path)
    assert min(figures[k] for k in ("red", "read", "write", "prefetch")) > 0


def test_redunit_throughput(seed, tmp_path):
    """Cycles per RED line = 2 + L + 16 / lanes + stages; READ pass-through at 1 per cycle."""
    figures = _run("default", seed, "throughput", tmp_path)
    assert figures["red_cycles_L1"] == [12] and figures["pass_cycles_per_request"] == 1.0


@pytest.mark.parametrize("kwargs,name", [
    (dict(addr_w=39), "ADDR_W"), (dict(trk_entries=6), "TRK_ENTRIES"),
    (dict(trk_entries=512), "TRK_ENTRIES"), (dict(lanes=3), "lanes"), (dict(lanes=32), "lanes"),
    (dict(stages=2), "stages"),
])
def test_redunit_parameters_are_checked(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TmaRedUnit(**kwargs)
