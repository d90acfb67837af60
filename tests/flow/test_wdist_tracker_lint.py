"""Verilog generation and Verilator -Wall lint of ``wd_resource_tracker`` (``ResourceTracker``):
its port list and payload widths, for each test build."""

import re

import pytest

from golden.wdist.formats import cfg_fields, cta_complete_fields
from hw.wdist.tracker import CREDIT_W, shape_fields
from sim.verilog import lint, write_verilog
from tb.wdist.tracker_tb import wdist_params
from tests.rtl.test_wdist_tracker import BLOCK, BUILDS

PORTS = {"clk", "rst", "cfg__valid", "cfg__ready", "cfg__payload", "quiescent", "shape", "free",
         "commit", "commit_a", "commit_shape", "credit_dec", "credit_inc", "credit",
         "cta_complete__valid", "cta_complete__ready", "cta_complete__payload", "cc_veto",
         "cc_underflow", "completed", "err_cfg_valid", "err_cfg_code",
         "err_cc_valid", "err_cc_code", "all_used_zero", "credits_at_reset",
         "empty", "dbg_sel", "dbg_idx", "dbg_data"}

# one more corner: the smallest capacities and a single GPC of two SMs (SM_ID_W = 1, FREE_W = 1)
LINT_BUILDS = dict(BUILDS, tiny=dict(N_GPC=1, SM_PER_GPC=2, SM_PER_TPC=1, CTA_SLOTS=1,
                                     WARP_CAP=1, REG_CAP_G=1, SMEM_CAP_G=1))


def _decl(direction, name, width):
    return f"{direction} {name};" if width == 1 else f"{direction} [{width - 1}:0] {name};"


def _widths(params):
    p = wdist_params(**BLOCK.resolve_params(params))
    shape = shape_fields().width
    return [("input", "cfg__payload", cfg_fields(p).width),
            ("input", "cta_complete__payload", cta_complete_fields(p).width),
            ("input", "shape", shape), ("input", "commit_shape", shape),
            ("output", "free", p.FREE_W * p.N_SM), ("input", "commit_a", p.CNT_W * p.N_SM),
            ("input", "credit_dec", p.N_GPC), ("input", "credit_inc", p.N_GPC),
            ("output", "credit", CREDIT_W * p.N_GPC), ("output", "err_cfg_code", 4),
            ("output", "err_cc_code", 4), ("input", "dbg_sel", 4), ("input", "dbg_idx", 16),
            ("output", "dbg_data", 32), ("output", "empty", 1), ("output", "cc_underflow", 1)]


@pytest.mark.parametrize("build", list(LINT_BUILDS))
def test_tracker_lints_clean(build, tmp_path):
    """`verilator --lint-only -Wall` with the project's generator waivers only (docs/flow.md)."""
    params = BLOCK.resolve_params(LINT_BUILDS[build])
    path, module = write_verilog(BLOCK, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == PORTS
    for direction, name, width in _widths(params):
        assert _decl(direction, name, width) in text, _decl(direction, name, width)
    ok, messages = lint(path, module)
    assert ok, messages
