"""Elaborate a registered block to Verilog and lint it with Verilator -Wall."""

import re
import subprocess
from pathlib import Path

from amaranth.back import verilog as amaranth_verilog

from sim.errors import UsageError
from sim.paths import ROOT, build_dir
from sim.simulators import setup_verilator

__all__ = ["module_name", "convert", "write_verilog", "debug_alias_lines", "lint", "LINT_WAIVERS"]

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


_MODULE = re.compile(r"^module\s+(\S+)\s*\(([^)]*)\)")
_WIRE = re.compile(r"^\s+wire\s+(?:\[[^\]]+\]\s+)?(\\?[^\s;]+)\s*;")
_CONNECTION = re.compile(r"^\s+\.(\\?[^\s(]+)\s*\(")


def _base(name):
    return re.sub(r"\$\d+$", "", name.lstrip("\\"))


def debug_alias_lines(text):
    """Line numbers of the debug copies Amaranth declares and never reads, so lint waives them.

    Two kinds, both assigned and never read:

    - port aliases: when a parent drives or reads a submodule's port signal, Amaranth declares
      that signal, under the port's name, in the parent (a non-port wire whose name is a port
      name of an instance in the same module);
    - field views: each field of a ``data.Struct``/``Array`` signal ``s`` gets a wire ``s.field``
      (a wire whose name, up to its first dot, is a signal or port of the same module).
    """
    lines = text.splitlines()
    result = []
    wires, connections, ports = {}, set(), set()

    def flush():
        declared = {name.lstrip("\\") for name in wires} | ports
        for name, number in wires.items():
            plain = name.lstrip("\\")
            if _base(name) in connections and name not in ports:
                result.append(number)
            elif "." in plain and plain.split(".", 1)[0] in declared:
                result.append(number)

    for number, line in enumerate(lines, 1):
        if (match := _MODULE.match(line)):
            flush()
            wires, connections = {}, set()
            ports = {p.strip() for p in match.group(2).split(",")}
        elif (match := _WIRE.match(line)):
            wires[match.group(1)] = number
        elif (match := _CONNECTION.match(line)):
            connections.add(_base(match.group(1)))
    flush()
    return sorted(result)


def lint(path, top):
    """Run ``verilator --lint-only -Wall`` with the documented waivers; returns (ok, messages)."""
    exe = setup_verilator()
    path = Path(path)
    alias = path.with_suffix(".alias.vlt")
    rules = "".join(f'lint_off -rule UNUSEDSIGNAL -file "*{path.name}" -lines {n}-{n}\n'
                    for n in debug_alias_lines(path.read_text()))
    alias.write_text("`verilator_config\n// generated: Amaranth debug aliases (sim/verilog.py: debug_alias_lines)\n" + rules)
    cmd = [exe, "--lint-only", "-Wall", "--top-module", top, str(LINT_WAIVERS), str(alias), str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    messages = (proc.stdout + proc.stderr).strip()
    return proc.returncode == 0, messages
