"""Build a registered block and run a cocotb testbench on it (used by pytest and the CLI).

Builds are cached per (simulator, module, Verilog text, options) under ``build/sim/`` and
guarded by a file lock, so parallel pytest workers share one build instead of racing on it.
"""

import hashlib
import itertools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from sim.filelock import file_lock
from sim.paths import build_dir
from sim.simulators import fst_supported, require
from sim.verilog import convert, module_name

__all__ = ["TestbenchResult", "TestbenchFailure", "build", "run_testbench", "log_tail"]

_counter = itertools.count()


@dataclass
class TestbenchResult:
    module: str
    build_dir: Path
    test_dir: Path
    log: Path
    results_xml: Path
    waves: Path | None
    build_seconds: float       # 0.0 when the cached build was reused
    test_seconds: float
    tests: int
    failed: int


class TestbenchFailure(AssertionError):
    """A cocotb test failed or the simulator crashed; carries the tail of the log."""


def _runner(sim, probes=()):
    require(sim)
    if sim == "verilator":
        from sim.verilator_runner import PortsPublicVerilator
        return PortsPublicVerilator(probes)
    from cocotb_tools.runner import get_runner
    return get_runner(sim)


def log_tail(path, lines=60):
    """The last ``lines`` lines of a log file, for an error message."""
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# What a finished Verilator build keeps: the simulation runs only the executable. The C++,
# objects and precompiled headers (about 160 MB per large model) would fill a CI disk across
# the regression's ~240 builds.
_VERILATOR_KEEP = {"build.log", "build.stamp", "runs"}


def _prune_verilator(bdir, name):
    """Delete a finished Verilator build's intermediates, keeping the executable and the Verilog."""
    keep = _VERILATOR_KEEP | {name, f"{name}.v"}
    for path in bdir.iterdir():
        if path.name not in keep and path.is_file():
            path.unlink()


def build(block, params, sim="verilator", waves=False):
    """Generate Verilog and compile the simulation model unless an identical build exists.

    Returns (runner, module name, build directory, seconds spent building).
    """
    runner = _runner(sim, block.probes)
    name = module_name(block, params)
    text = convert(block, params, name)
    build_args = []
    if sim == "verilator":
        build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"]
        if waves and fst_supported():
            build_args += ["--trace-fst", "--trace-structs"]
        elif waves:
            build_args += ["--trace-structs"]      # VCD: no lz4 header for the FST writer
    key = hashlib.sha256(json.dumps([text, build_args, waves, list(block.probes), "ports-public"])
                         .encode()).hexdigest()[:12]
    variant = f"{name}-{key}"
    bdir = build_dir("sim", sim, variant)
    stamp = bdir / "build.stamp"
    seconds = 0.0
    with file_lock(build_dir("sim", sim) / f"{variant}.lock"):
        if not stamp.exists():
            source = bdir / f"{name}.v"
            source.write_text(text)
            start = time.monotonic()
            log = bdir / "build.log"
            try:
                runner.build(sources=[source], hdl_toplevel=name, build_dir=bdir,
                             build_args=build_args, waves=waves, timescale=("1ns", "1ps"),
                             log_file=log)
            except (SystemExit, Exception) as exc:
                raise TestbenchFailure(f"{sim} build of {name} failed ({exc!r}):\n{log_tail(log)}") from None
            seconds = time.monotonic() - start
            if sim == "verilator":
                _prune_verilator(bdir, name)
            stamp.write_text(f"{seconds:.3f}\n")
            with open(build_dir("reports") / "builds.jsonl", "a") as log_handle:
                log_handle.write(json.dumps({"sim": sim, "module": name, "waves": waves,
                                             "seconds": round(seconds, 2)}) + "\n")
    return runner, name, bdir, seconds


def run_testbench(block, params, testbench, testcase=None, sim="verilator", seed=0,
                  waves=False, env=None, label=None):
    """Run cocotb module ``testbench`` (optionally one ``testcase``) against ``block``.

    ``env`` adds environment variables for the testbench; the seed and the parameter set always
    travel as ``GPUBLOCKS_SEED`` and ``GPUBLOCKS_PARAMS``. Raises :class:`TestbenchFailure` when a
    test fails, with the log tail in the message.
    """
    runner, name, bdir, build_seconds = build(block, params, sim=sim, waves=waves)
    tag = label or testcase or "all"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in tag)[:60]
    tdir = bdir / "runs" / f"{safe}-{os.getpid()}-{next(_counter)}"
    tdir.mkdir(parents=True, exist_ok=True)
    results = tdir / "results.xml"
    log = tdir / "sim.log"
    extra = {"GPUBLOCKS_SEED": str(seed), "GPUBLOCKS_PARAMS": json.dumps(params)}
    extra.update(env or {})
    start = time.monotonic()
    crashed = None
    try:
        runner.test(test_module=testbench, hdl_toplevel=name, hdl_toplevel_lang="verilog",
                    build_dir=bdir, test_dir=tdir,
                    testcase=testcase, seed=seed, extra_env=extra, waves=waves,
                    results_xml=str(results), log_file=log)
    except (SystemExit, RuntimeError) as exc:   # failed tests exit; a crashed simulator raises
        crashed = exc
    test_seconds = time.monotonic() - start
    from cocotb_tools.check_results import get_results
    try:
        tests, failed = get_results(results)
    except (RuntimeError, OSError):
        raise TestbenchFailure(f"{testbench} on {name}: simulator ended without results "
                               f"({crashed!r}); seed {seed}\n{log_tail(log)}") from None
    if failed or crashed is not None or tests == 0:
        raise TestbenchFailure(f"{testbench} on {name}: {failed} of {tests} cocotb tests failed; "
                               f"seed {seed}; log {log}\n{log_tail(log)}")
    wave_file = None
    if waves:
        wave_file = next((p for p in (tdir / "dump.fst", tdir / "dump.vcd") if p.exists()), None)
    return TestbenchResult(name, bdir, tdir, log, results, wave_file, build_seconds,
                           test_seconds, tests, failed)
