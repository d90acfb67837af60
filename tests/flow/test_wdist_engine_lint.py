"""Verilog generation and Verilator -Wall lint of the wdist placement engine ``PlaceEngine`` and
the mock GPC ``MockGpc``: their port lists and payload widths."""

import re

import pytest

from hw.wdist.engine import engine_in_fields, engine_out_fields, n_width
from hw.wdist.mock_gpc import CREDIT_W, query_fields, resp_fields
from sim.verilog import lint, write_verilog
from tests.rtl.test_wdist_engine import ENGINE, MOCK

ENGINE_PORTS = {"clk", "rst", "i__valid", "i__ready", "i__payload", "o__valid", "o__ready",
                "o__payload", "dbg_step", "dbg_probe", "dbg_vol", "dbg_more", "dbg_cand"}
MOCK_PORTS = {"clk", "rst", "snap", "snap_free", "snap_credit", "q__valid", "q__ready",
              "q__payload", "resp__valid", "resp__ready", "resp__payload", "op", "op_kind",
              "op_cga", "op_a", "fs", "f", "c", "busy", "dbg_step", "dbg_probe", "dbg_vol",
              "dbg_more", "dbg_cand"}

ENGINE_BUILDS = {
    "s8_t1": dict(n_sm=8, sm_per_tpc=1),
    "s8_t2": dict(n_sm=8, sm_per_tpc=2),
    "s4_t2_w3": dict(n_sm=4, sm_per_tpc=2, free_w=3, cnt_w=4),
    "s32_t2": dict(n_sm=32, sm_per_tpc=2),
    "s2_w1": dict(n_sm=2, sm_per_tpc=1, free_w=1, cnt_w=1),
    "s1": dict(n_sm=1, sm_per_tpc=1),
}
MOCK_BUILDS = {
    "s8_t2": dict(n_sm=8, sm_per_tpc=2),
    "s2_t1_w1": dict(n_sm=2, sm_per_tpc=1, free_w=1, cnt_w=1),
    "s32_t4": dict(n_sm=32, sm_per_tpc=4),
}


def _decl(direction, name, width):
    return f"{direction} {name};" if width == 1 else f"{direction} [{width - 1}:0] {name};"


def _verilog(block, params, ports, widths, tmp_path):
    path, module = write_verilog(block, block.resolve_params(params), out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == ports
    for direction, name, width in widths:
        assert _decl(direction, name, width) in text, _decl(direction, name, width)
    return path, module


def _engine_widths(params):
    p = ENGINE.resolve_params(params)
    s, w, c = p["n_sm"], p["free_w"], p["cnt_w"]
    return [("input", "i__payload", engine_in_fields(s, w).width),
            ("output", "o__payload", engine_out_fields(s, w, c).width),
            ("output", "dbg_vol", n_width(s, w)), ("output", "dbg_probe", w + 1)]


def _mock_widths(params):
    p = MOCK.resolve_params(params)
    s, w, c = p["n_sm"], p["free_w"], p["cnt_w"]
    return [("input", "q__payload", query_fields(s, w).width),
            ("output", "resp__payload", resp_fields(s, w, c).width),
            ("input", "snap_free", s * w), ("input", "snap_credit", CREDIT_W),
            ("input", "op_a", s * c), ("output", "fs", s * w), ("output", "f", s * w),
            ("output", "c", CREDIT_W)]


@pytest.mark.parametrize("build", list(ENGINE_BUILDS))
def test_engine_lints_clean(build, tmp_path):
    """`verilator --lint-only -Wall` with the project's generator waivers only (docs/flow.md)."""
    params = ENGINE_BUILDS[build]
    path, module = _verilog(ENGINE, params, ENGINE_PORTS, _engine_widths(params), tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.parametrize("build", list(MOCK_BUILDS))
def test_mock_gpc_lints_clean(build, tmp_path):
    params = MOCK_BUILDS[build]
    path, module = _verilog(MOCK, params, MOCK_PORTS, _mock_widths(params), tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


def test_engine_global_fill_lints_clean(tmp_path):
    """The 128-SM engine of the plain-grid global fill (about 0.7 MB of Verilog, seconds)."""
    params = dict(n_sm=128, sm_per_tpc=1)
    path, module = _verilog(ENGINE, params, ENGINE_PORTS, _engine_widths(params), tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
