"""Verilog generation and Verilator -Wall lint of the prefix popcount and the leading-zero count."""

import re

import pytest

from sim import registry
from sim.verilog import lint, write_verilog

PORTS = {
    ("prefix_popcount", 1): ["input i", "output o", "output total"],
    ("prefix_popcount", 5): ["input [4:0] i", "output [14:0] o", "output [2:0] total"],
    ("prefix_popcount", 16): ["input [15:0] i", "output [79:0] o", "output [4:0] total"],
    ("prefix_popcount", 64): ["input [63:0] i", "output [447:0] o", "output [6:0] total"],
    ("lzc", 1): ["input i", "output count", "output zero"],
    ("lzc", 16): ["input [15:0] i", "output [4:0] count", "output zero"],
    ("lzc", 32): ["input [31:0] i", "output [5:0] count", "output zero"],
    ("lzc", 48): ["input [47:0] i", "output [5:0] count", "output zero"],
}

def _verilog(name, value, tmp_path):
    block = registry.get(name)
    param = block.params[0].name
    return write_verilog(block, block.resolve_params({param: value}), out_dir=tmp_path)


@pytest.mark.parametrize("name,value", list(PORTS))
def test_verilog_ports_keep_their_names(name, value, tmp_path):
    path, module = _verilog(name, value, tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {p.strip() for p in header.split(",")} == {d.split()[-1] for d in PORTS[name, value]}
    for decl in PORTS[name, value]:
        assert f"{decl};" in text, decl
    assert "always" not in text, "a combinational part has no processes or registers"


@pytest.mark.parametrize("name,value", list(PORTS))
def test_verilog_lints_clean(name, value, tmp_path):
    path, module = _verilog(name, value, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
