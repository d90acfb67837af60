"""``gpublocks run``: a user's stimulus through the RTL (or the golden model alone), compared."""

import json
import shutil
import tempfile
from pathlib import Path

from sim.cocotb_run import run_testbench
from sim.errors import UsageError
from sim.paths import build_dir
from sim.stimulus import load_json

__all__ = ["run_stimulus", "run_parsed"]


def run_parsed(block, params, stim, sim="verilator", seed=0, waves=False):
    """Run an already validated stimulus; returns the result record (see docs for the schema)."""
    adapter = block.flow()
    unsupported = getattr(adapter, "rtl_unsupported", None)     # what an RTL run cannot be compared on
    reason = unsupported(stim) if unsupported and sim != "golden" else None
    if reason:
        raise UsageError(f"{block.name} RTL: {reason}")
    expected = adapter.golden(params, stim)
    record = {"block": block.name, "params": params, "sim": sim, "seed": seed}
    if sim == "golden":
        actual, problems = expected, []
    else:
        with tempfile.TemporaryDirectory() as tmp:
            stim_file, out_file = Path(tmp) / "stim.json", Path(tmp) / "rtl.json"
            stim_file.write_text(json.dumps(stim))
            res = run_testbench(block, params, adapter.TESTBENCH, testcase="run_stimulus", sim=sim,
                                seed=seed, waves=waves, label=f"run_{block.name}",
                                env={"GPUBLOCKS_STIM": str(stim_file), "GPUBLOCKS_RESULT": str(out_file)})
            actual = json.loads(out_file.read_text())
        problems = adapter.compare(expected, actual)
        record["build_seconds"] = round(res.build_seconds, 2)
        record["sim_seconds"] = round(res.test_seconds, 2)
        if res.waves:
            dest = build_dir("waves") / f"{block.name}{res.waves.suffix}"
            shutil.copy(res.waves, dest)
            record["waves"] = str(dest)
    record.update({
        "summary": adapter.summary(params, stim, actual),
        "passed": not problems,
        "mismatches": problems[:100],
        "mismatch_count": len(problems),
        "golden": expected,
        "rtl": None if sim == "golden" else actual,
    })
    return record


def run_stimulus(block, path, sim="verilator", out=None, seed=0, waves=False):
    """Validate ``path`` (UsageError naming the field), run it, write the result JSON."""
    if waves and sim == "golden":
        raise UsageError("--waves needs an RTL simulator, not --sim golden")
    adapter = block.flow()
    params, stim = adapter.parse(load_json(path), block)
    record = run_parsed(block, params, stim, sim=sim, seed=seed, waves=waves)
    out = Path(out) if out else build_dir("run") / f"{block.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1))
    record["out"] = str(out)
    return record
