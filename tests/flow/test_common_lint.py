"""Verilog generation and Verilator -Wall lint of the prefix popcount, the leading-zero count and
the multi-write FIFO."""

import re

import pytest

from sim import registry
from sim.errors import UsageError
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

# MultiWriteFifo builds (width, depth, ports): default, non-power-of-two depth, smallest, wider,
# depth < ports, the largest depth and port count
MWFIFO = [(8, 4, 4), (5, 3, 2), (1, 1, 1), (16, 6, 3), (3, 2, 5), (32, 64, 8)]


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


def _mwfifo_verilog(width, depth, ports, tmp_path):
    block = registry.get("mwfifo")
    params = block.resolve_params({"width": width, "depth": depth, "ports": ports})
    return write_verilog(block, params, out_dir=tmp_path)


@pytest.mark.parametrize("width,depth,ports", MWFIFO)
def test_mwfifo_verilog_ports(width, depth, ports, tmp_path):
    path, module = _mwfifo_verilog(width, depth, ports, tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)

    def vec(n):
        return f"[{n - 1}:0] " if n > 1 else ""
    decls = ["input clk", "input rst", "input r_en", "output r_rdy", f"output {vec(width)}r_data",
             f"output {vec(depth.bit_length())}level"]
    for k in range(ports):
        decls += [f"input w_en_{k}", f"input {vec(width)}w_data_{k}", f"output w_ok_{k}"]
    assert {p.strip() for p in header.split(",")} == {d.split()[-1] for d in decls}
    for decl in decls:
        assert f"{decl};" in text, decl


@pytest.mark.parametrize("width,depth,ports", MWFIFO)
def test_mwfifo_verilog_lints_clean(width, depth, ports, tmp_path):
    path, module = _mwfifo_verilog(width, depth, ports, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.parametrize("override, words", [({"width": 0}, "width"), ({"depth": 65}, "depth"),
                                              ({"depth": 0}, "depth"), ({"ports": 9}, "ports"),
                                              ({"ports": 0}, "ports")])
def test_mwfifo_rejects_bad_parameters(override, words):
    block = registry.get("mwfifo")
    with pytest.raises(UsageError, match=words):
        block.check_params(block.resolve_params(override))


@pytest.mark.parametrize("width,depth", [(64, 64), (5, 3), (1, 2), (27, 1024)])
def test_memfifo_verilog_lints_clean(width, depth, tmp_path):
    block = registry.get("memfifo")
    path, module = write_verilog(block, block.resolve_params({"width": width, "depth": depth}),
                                 out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.parametrize("override, words", [({"width": 0}, "width"), ({"depth": 1}, "depth"),
                                              ({"depth": 65537}, "depth")])
def test_memfifo_rejects_bad_parameters(override, words):
    block = registry.get("memfifo")
    with pytest.raises(UsageError, match=words):
        block.check_params(block.resolve_params(override))
