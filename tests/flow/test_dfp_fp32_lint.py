"""Verilog generation and Verilator -Wall lint of the dfp FP32 units (hw/dfp/fp32.py).

Each unit is linted on its own, at every parameter value the RTL tests build (and the rest of
the small legal ranges), with no waiver beyond the project's generator waivers.
"""

import re

import pytest

from hw.dfp.fp32 import DfpToFp32, Fp32Accumulator, Fp32Adder
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog


def _block(cls, params):
    return Block(name=f"dfp_{cls.__name__.lower()}", kind="test", summary=cls.__name__,
                 spec="dfp.md §4.5, §4.6", top=cls,
                 params=tuple(Param(k, v, "-", k) for k, v in params.items()))


CASES = (
    [(DfpToFp32, {"acc_w": w, "stages": s}) for w in (32, 40, 48) for s in (0, 1, 2)]
    + [(Fp32Adder, {"stages": s}) for s in (0, 1, 2, 3)]
    + [(Fp32Accumulator, {"fadd_cyc": f}) for f in (1, 2, 3, 4)]
)

PORTS = {
    DfpToFp32: lambda p: {"i_valid": "input", f"[{p['acc_w'] - 1}:0] acc": "input",
                          "[11:0] es": "input", "o_valid": "output", "[31:0] fp32": "output"},
    Fp32Adder: lambda p: {"i_valid": "input", "[31:0] x": "input", "[31:0] y": "input",
                          "o_valid": "output", "[31:0] sum": "output"},
    Fp32Accumulator: lambda p: {"clear": "input", "add_valid": "input", "[31:0] x": "input",
                                "busy": "output", "[31:0] sum": "output"},
}


def _id(case):
    cls, params = case
    return cls.__name__ + "-" + "-".join(f"{k}{v}" for k, v in params.items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_verilog_lints_clean_and_keeps_port_names(case, tmp_path):
    cls, params = case
    block = _block(cls, params)
    path, module = write_verilog(block, params, out_dir=tmp_path,
                                 name=_id(case).lower().replace("-", "_"))
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    ports = {p.strip() for p in header.split(",")}
    for decl, direction in PORTS[cls](params).items():
        assert f"{direction} {decl};" in text, decl
        assert decl.split()[-1] in ports, decl
    registered = params.get("stages", 1) != 0          # the accumulator's sum is a register
    assert ("clk" in ports) == registered, "clk/rst exist exactly when there are registers"
    ok, messages = lint(path, module)
    assert ok, messages
