"""MR-P9 on the RTL: the recorded program trace (tb/memrouter/traces/gzip.mtrace.gz) on CFG-D,
exclusive, 8 lines, without and with automatic migration (tb/memrouter/trace_tb.py)."""

import json

import pytest

from sim.cocotb_run import run_testbench
from tb.memrouter.builds import BLOCK, BUILDS

TB = "tb.memrouter.trace_tb"


def trace_run(migrate, seed, tmp_path, n):
    out = tmp_path / f"trace{migrate}.json"
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["A2"]), TB, testcase="program_trace",
                  seed=seed, label=f"trace_m{migrate}",
                  env={"MIGRATE": str(migrate), "TRACE_N": str(n), "GPUBLOCKS_RESULT": str(out)})
    return json.loads(out.read_text())


@pytest.mark.req("MR-P9", "MR-V3", "MR-F20", "MR-F21")
def test_trace_migration_raises_hbm_fraction(seed, tmp_path):
    """The first 4,000 accesses of the trace: with automatic migration (ACC and SECT triggers)
    the fraction of sectors served from HBM is higher than without; both runs pass the flat
    reference check. The five fractions and the migrations are printed."""
    static = trace_run(0, seed, tmp_path, 4000)
    moving = trace_run(1, seed, tmp_path, 4000)
    for name, res in (("static", static), ("migrating", moving)):
        print(f"MR-P9 {name}: " + ", ".join(f"{k} {res[k]:.4f}" for k in
                                            ("F_HBM", "F_NEARM", "F_LINE", "F_FILL", "F_FARD"))
              + f", migrations {res['migrations']}, requests {res['requests']}, "
                f"cycles {res['cycles']}")
    assert static["migrations"] == 0
    assert moving["migrations"] > 0
    assert moving["F_HBM"] > static["F_HBM"], (static, moving)
