"""Verilog generation and Verilator -Wall lint of the per-GPC GPM ``Gpm`` (hw/wdist/gpm.py):
its port list and payload widths, for each test build."""

import re

import pytest

from golden.wdist.formats import bcast_fields, cta_complete_fields, flush_done_fields
from golden.wdist.params import WdistParams
from hw.wdist.gpm import gpm_cga_complete_fields, gpm_flush_req_fields
from sim.verilog import lint, write_verilog
from tests.rtl.test_wdist_gpm import BLOCK, BUILDS

PORTS = {"clk", "rst", "beat_valid", "beat", "beat_mine", "beat_take", "beat_cga_id",
         "beat_stall", "cta_complete__valid", "cta_complete__ready", "cta_complete__payload",
         "cc_mine", "cc_underflow", "cc_bad_cga", "dsmem_flush_done__valid",
         "dsmem_flush_done__ready", "dsmem_flush_done__payload", "fd_mine", "flush_req__valid",
         "flush_req__ready", "flush_req__payload", "cga_complete__valid", "cga_complete__ready",
         "cga_complete__payload", "credit_ret", "err_cc_valid", "err_fd_valid", "free_ids",
         "alloc_ids", "idle"}


def _decl(direction, name, width):
    return f"{direction} {name};" if width == 1 else f"{direction} [{width - 1}:0] {name};"


@pytest.mark.req("WD-I6", "WD-I7", "WD-I8")
@pytest.mark.parametrize("build", list(BUILDS))
def test_gpm_lints_clean(build, tmp_path):
    """`verilator --lint-only -Wall` with the project's generator waivers only; ports and
    payload widths as WD-I3, I5..I8 give them (``flush_req`` / ``cga_complete`` without
    ``gpc``, which the top adds)."""
    params = BLOCK.resolve_params(BUILDS[build])
    path, module = write_verilog(BLOCK, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == PORTS
    n = params["N_GPC"]
    p = WdistParams(N_GPC=n, SM_PER_GPC=(params["SM_PER_GPC"],) * n,
                    GPC_CGA_ID_W=params["GPC_CGA_ID_W"], CTA_SLOTS=params["CTA_SLOTS"],
                    MAX_CGA_CTAS=params["MAX_CGA_CTAS"], MAX_OUTER=params["MAX_OUTER"],
                    MAX_FLAT_CTAS=params["MAX_FLAT_CTAS"], GRID_ID_W=params["GRID_ID_W"],
                    SEQ_W=params["SEQ_W"])
    w = p.GPC_CGA_ID_W
    for decl in [("input", "beat", bcast_fields(p).width),
                 ("input", "cta_complete__payload", cta_complete_fields(p).width),
                 ("input", "dsmem_flush_done__payload", flush_done_fields(p).width),
                 ("output", "flush_req__payload", gpm_flush_req_fields(p).width),
                 ("output", "cga_complete__payload", gpm_cga_complete_fields(p).width),
                 ("output", "beat_cga_id", w), ("output", "free_ids", w + 1),
                 ("output", "alloc_ids", w + 1)]:
        assert _decl(*decl) in text, _decl(*decl)
    ok, messages = lint(path, module)
    assert ok, messages
