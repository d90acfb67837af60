"""Elaborate a registered block to Verilog and lint it with Verilator -Wall."""

import re
import subprocess
from pathlib import Path

from amaranth.back import verilog as amaranth_verilog

from sim.errors import UsageError
from sim.paths import ROOT, build_dir
from sim.simulators import setup_verilator

__all__ = ["module_name", "convert", "write_verilog", "lint", "LINT_WAIVERS"]

LINT_WAIVERS = ROOT / "sim" / "lint_waivers.vlt"


def module_name(block, params):
    """Verilog module name: the block name, plus the parameters that differ from the defaults."""
    diff = {k: v for k, v in sorted(params.items()) if block.defaults().get(k) != v}
    suffix = "".join(f"_{k}{v}" for k, v in diff.items())
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{block.name}{suffix}")


def convert(block, params, name=None):
    """Verilog text of ``block`` at ``params`` (full parameter dict), top module ``name``."""
    component = block.build(params)
    return amaranth_verilog.convert(component, name=name or module_name(block, params),
                                    emit_src=False)


def write_verilog(block, params, out_dir=None, name=None):
    """Write ``<out_dir>/<module>.v`` (default ``build/verilog``); returns (path, module)."""
    name = name or module_name(block, params)
    out_dir = Path(out_dir) if out_dir else build_dir("verilog")
    out_dir.mkdir(parents=True, exist_ok=True)
    text = convert(block, params, name)
    path = out_dir / f"{name}.v"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path, name


def lint(path, top):
    """Run ``verilator --lint-only -Wall`` with the documented waivers; returns (ok, messages)."""
    exe = setup_verilator()
    cmd = [exe, "--lint-only", "-Wall", "--top-module", top, str(LINT_WAIVERS), str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    messages = (proc.stdout + proc.stderr).strip()
    return proc.returncode == 0, messages
