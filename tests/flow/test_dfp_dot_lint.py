"""Verilog generation and Verilator -Wall lint of ``DfpDotUnit``, and its parameter checks."""

import re

import pytest

from golden.dfp.formats import (CONFIG_FIELDS, DOT_STATS, op_beat_fields, result_fields,
                                stats_fields)
from hw.dfp.dot import DfpDotUnit
from hw.dfp.stats import SaturatingCounter
from sim import registry
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

BUILDS = [
    {},
    {"lanes": 1, "acc_w": 32},
    {"lanes": 2, "acc_w": 40, "mul_stages": 1, "tree_reg_every": 5, "fadd_cyc": 4},
    {"lanes": 8, "acc_w": 48, "mul_stages": 1, "tree_reg_every": 1, "fadd_cyc": 1},
    {"lanes": 16, "acc_w": 48, "tree_reg_every": 3, "fadd_cyc": 2},
]

PORTS = ["i_op__valid", "i_op__ready", "i_op__payload", "o_res__valid", "o_res__ready",
         "o_res__payload", "cfg", "clr", "stats_clr", "stats", "dbg_acc", "dbg_acc_valid",
         "dbg_acc_mode", "clk", "rst"]


def _verilog(params, tmp_path):
    block = registry.get("dfp")
    return write_verilog(block, block.resolve_params(params), out_dir=tmp_path)


@pytest.mark.req("DFP-C1", "DFP-C2", "DFP-C7", "DFP-I2", "DFP-I3", "DFP-I4", "DFP-I5")
@pytest.mark.parametrize("params", BUILDS, ids=lambda p: "_".join(f"{k}{v}" for k, v in p.items())
                         or "default")
def test_dfp_dot_verilog_lints_clean(params, tmp_path):
    path, module = _verilog(params, tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {p.strip() for p in header.split(",")} == set(PORTS)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.req("DFP-I2", "DFP-I3", "DFP-I4", "DFP-I5")
def test_dfp_dot_port_widths(tmp_path):
    """Port widths follow the shared layouts of golden.dfp.formats."""
    path, module = _verilog({"lanes": 4, "acc_w": 40}, tmp_path)
    text = path.read_text()
    widths = {"input": {"i_op__payload": op_beat_fields(4).width, "cfg": CONFIG_FIELDS.width},
              "output": {"o_res__payload": result_fields(40).width,
                         "stats": stats_fields(DOT_STATS).width, "dbg_acc": 40}}
    for direction, ports in widths.items():
        for name, width in ports.items():
            decl = f"{direction} [{width - 1}:0] {name};"
            assert decl in text, decl


@pytest.mark.parametrize("name,value", [
    ("lanes", 3), ("lanes", 32), ("lanes", True), ("acc_w", 31), ("acc_w", 49),
    ("mul_stages", 0), ("mul_stages", 3), ("tree_reg_every", 0), ("tree_reg_every", 6),
    ("fadd_cyc", 0), ("fadd_cyc", 5), ("acc_w", "32"),
])
def test_dfp_dot_rejects_bad_parameters(name, value):
    with pytest.raises(ValueError, match=name):
        DfpDotUnit(**{name: value})


def test_saturating_counter_lints_clean(tmp_path):
    block = Block(name="satcnt", kind="test", summary="saturating counter", spec="-",
                  top=SaturatingCounter, params=(Param("width", 32, "1..64", "bits"),
                                                 Param("inc_width", 16, "1..width", "bits")))
    path, module = write_verilog(block, {"width": 32, "inc_width": 16}, out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
