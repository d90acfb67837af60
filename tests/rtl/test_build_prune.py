"""A finished Verilator build keeps only what a simulation runs, and is reused as it is."""

from sim import registry
from sim.cocotb_run import run_testbench


def test_build_keeps_executable_only_and_is_reused(tmp_path, monkeypatch, seed):
    monkeypatch.setenv("GPUBLOCKS_BUILD", str(tmp_path))
    block = registry.get("arbiter")
    params = block.resolve_params({"n": 4})
    first = run_testbench(block, params, "tb.common.arbiter_tb", testcase="golden_vector_tq_gv16",
                          seed=seed)
    assert first.build_seconds > 0
    left = {p.name for p in first.build_dir.iterdir()}
    assert left == {first.module, f"{first.module}.v", "build.log", "build.stamp", "runs"}, left
    again = run_testbench(block, params, "tb.common.arbiter_tb", testcase="exhaustive", seed=seed)
    assert again.build_dir == first.build_dir and again.build_seconds == 0.0
