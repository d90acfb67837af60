"""Verilog generation, Verilator -Wall lint and parameter checks of the dfp stream parts:
DfpQuantizer, DfpDequantizer and DfpDownConverter, at every parameter set the RTL tests build
(plus the extremes of each range)."""

import re

import pytest

from sim import registry
from sim.verilog import lint, write_verilog

BUILDS = [
    ("dfp_quantizer", {}),
    ("dfp_quantizer", {"q_lanes": 4}),
    ("dfp_quantizer", {"bias_bits": 2}),
    ("dfp_quantizer", {"q_lanes": 16, "blk_max": 1024}),
    ("dfp_quantizer", {"q_lanes": 2, "blk_max": 2, "bias_bits": 4}),     # one-beat blocks
    ("dfp_quantizer", {"blk_max": 48}),                                  # depth not a power of 2
    ("dfp_dequantizer", {}),
    ("dfp_dequantizer", {"q_lanes": 4}),
    ("dfp_dequantizer", {"q_lanes": 16}),
    ("dfp_downconverter", {}),
    ("dfp_downconverter", {"q_lanes": 4, "in_w": 48}),
    ("dfp_downconverter", {"in_w": 16, "blk_max": 1, "bias_bits": 4}),
    ("dfp_downconverter", {"q_lanes": 8, "blk_max": 1024, "in_w": 40}),
]

PORTS = {
    "dfp_quantizer": ["i_fp__valid", "i_fp__ready", "i_fp__payload", "o_q__valid", "o_q__ready",
                      "o_q__payload", "cfg", "stats_clr", "stats", "clk", "rst"],
    "dfp_dequantizer": ["i_q__valid", "i_q__ready", "i_q__payload", "o_fp__valid",
                        "o_fp__ready", "o_fp__payload", "clk", "rst"],
    "dfp_downconverter": ["i_v__valid", "i_v__ready", "i_v__payload", "o_q__valid",
                          "o_q__ready", "o_q__payload", "cfg", "stats_clr", "stats", "clk",
                          "rst"],
}


def _id(build):
    name, params = build
    return name + "".join(f"_{k}{v}" for k, v in params.items())


def _verilog(name, params, tmp_path):
    block = registry.get(name)
    return write_verilog(block, block.resolve_params(params), out_dir=tmp_path)


@pytest.mark.req("DFP-I5", "DFP-I6", "DFP-I7", "DFP-I8")
@pytest.mark.parametrize("build", BUILDS, ids=_id)
def test_verilog_ports_keep_their_names(build, tmp_path):
    name, params = build
    path, module = _verilog(name, params, tmp_path)
    header = re.search(rf"module {module}\(([^)]*)\)", path.read_text()).group(1)
    assert {p.strip() for p in header.split(",")} == set(PORTS[name])


@pytest.mark.parametrize("build", BUILDS, ids=_id)
def test_verilog_lints_clean(build, tmp_path):
    name, params = build
    path, module = _verilog(name, params, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


BAD = [
    ("dfp_quantizer", {"q_lanes": 3}, "q_lanes"),
    ("dfp_quantizer", {"q_lanes": 32}, "q_lanes"),
    ("dfp_quantizer", {"blk_max": 0}, "blk_max"),
    ("dfp_quantizer", {"blk_max": 1025}, "blk_max"),
    ("dfp_quantizer", {"q_lanes": 4, "blk_max": 66}, "blk_max"),
    ("dfp_quantizer", {"bias_bits": 0}, "bias_bits"),
    ("dfp_quantizer", {"bias_bits": 5}, "bias_bits"),
    ("dfp_dequantizer", {"q_lanes": 0}, "q_lanes"),
    ("dfp_dequantizer", {"q_lanes": 5}, "q_lanes"),
    ("dfp_downconverter", {"q_lanes": 6}, "q_lanes"),
    ("dfp_downconverter", {"blk_max": 2000}, "blk_max"),
    ("dfp_downconverter", {"q_lanes": 8, "blk_max": 20}, "blk_max"),
    ("dfp_downconverter", {"in_w": 15}, "in_w"),
    ("dfp_downconverter", {"in_w": 49}, "in_w"),
    ("dfp_downconverter", {"bias_bits": 9}, "bias_bits"),
]


@pytest.mark.req("DFP-C3", "DFP-C4", "DFP-C5", "DFP-C6")
@pytest.mark.parametrize("name,params,param", BAD,
                         ids=[f"{n}-{p}" + "".join(str(v) for v in d.values()) for n, d, p in BAD])
def test_bad_parameters_raise_value_error(name, params, param):
    cls = registry.get(name).component_class()
    full = {**registry.get(name).defaults(), **params}
    with pytest.raises(ValueError, match=rf"\b{param}\b") as info:
        cls(**full)
    legal = {"q_lanes": "1, 2, 4, 8, 16", "blk_max": "1..1024", "bias_bits": "1..4",
             "in_w": "16..48"}[param]
    assert legal in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["dfp_quantizer", "dfp_dequantizer", "dfp_downconverter"])
def test_bool_parameter_is_rejected(name):
    cls = registry.get(name).component_class()
    with pytest.raises(ValueError, match="q_lanes"):
        cls(**{**registry.get(name).defaults(), "q_lanes": True})
