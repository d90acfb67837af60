"""ECP5 cell counts of one component (Yosys ``synth_ecp5``), for tests that assert how a
structure maps to the FPGA (block RAM, no per-bit emulation registers)."""

import re
import subprocess
import sys

from amaranth.back import rtlil

__all__ = ["ecp5_cell_counts"]


def ecp5_cell_counts(component, name, workdir):
    """{cell type: count} of ``component`` synthesized with ``synth_ecp5`` in ``workdir``."""
    (workdir / f"{name}.il").write_text(rtlil.convert(component, name=name))
    cmd = [sys.executable, "-m", "sim.yowasp_stack", "yosys", "-q", "-p",
           f"read_rtlil {name}.il; synth_ecp5 -top {name}; tee -q -o stat.txt stat"]
    subprocess.run(cmd, cwd=workdir, check=True, capture_output=True, timeout=900)
    stat = (workdir / "stat.txt").read_text()
    return {cell: int(n) for n, cell in re.findall(r"^\s+(\d+)\s+(\w+)\s*$", stat, re.M)}
