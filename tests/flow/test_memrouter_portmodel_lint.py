"""Verilog generation and Verilator -Wall lint of the memory port model (``PortModel``,
hw/memrouter/portmodel.py): port list and widths (MR-I3, MR-I4, MR-I10) at a few builds."""

import re

import pytest

from hw.memrouter.portmodel import mreq_fields, mrsp_fields
from sim.verilog import lint, write_verilog
from tests.rtl.test_memrouter_portmodel import BLOCK

PORTS = {"clk", "rst", "mreq__valid", "mreq__ready", "mreq__payload", "mrsp__valid",
         "mrsp__ready", "mrsp__payload", "poison_addr__0", "poison_addr__1", "poison_addr__2",
         "poison_addr__3", "poison_en", "bd_addr", "bd_rdata", "bd_we", "bd_wdata", "bd_be"}

# default: the HBM port at MR-C29/C30 defaults (64 frames); tiny: every size at its minimum
# (1-request queue, 1-beat output buffer, LAT 2, rate 1/1, one 512-byte frame); wide: every
# size at its maximum except the capacity; odd: the RTL test's odd build.
LINT_BUILDS = {
    "default": dict(),
    "tiny": dict(j=4, BW_NUM=1, BW_DEN=1, LAT=2, PQ_DEPTH=1, OUT_DEPTH=1, FRAMES=1, LOG2G=9,
                 MTAG_W=4, DEV_W=9),
    "wide": dict(j=2, BW_NUM=63, BW_DEN=64, LAT=1024, PQ_DEPTH=64, OUT_DEPTH=1024, FRAMES=1,
                 LOG2G=16, MTAG_W=16, DEV_W=32),
    "odd": dict(j=1, BW_NUM=3, BW_DEN=5, LAT=1, PQ_DEPTH=3, OUT_DEPTH=2, FRAMES=3, LOG2G=9,
                MTAG_W=4, DEV_W=12),
}


@pytest.mark.req("MR-I3", "MR-I4", "MR-I10", "MR-C29", "MR-C30")
@pytest.mark.parametrize("build", list(LINT_BUILDS))
def test_portmodel_verilog_ports_and_lint(build, tmp_path):
    """Converts; the port list and widths; `verilator --lint-only -Wall` with the project's
    generator waivers only (docs/flow.md)."""
    params = BLOCK.resolve_params(LINT_BUILDS[build])
    path, module = write_verilog(BLOCK, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\((.*?)\);", text, re.S).group(1)
    assert {p.strip() for p in header.split(",")} == PORTS
    sectors = params["FRAMES"] << (params["LOG2G"] - 5)
    widths = {"input": {"mreq__payload": mreq_fields(params["MTAG_W"], params["DEV_W"]).width,
                        "poison_addr__0": params["DEV_W"], "poison_en": 4,
                        "bd_addr": (sectors - 1).bit_length(), "bd_wdata": 256, "bd_be": 32},
              "output": {"mrsp__payload": mrsp_fields(params["MTAG_W"]).width,
                         "bd_rdata": 256}}
    for direction, items in widths.items():
        for name, width in items.items():
            decl = f"{direction} {name};" if width == 1 else f"{direction} [{width - 1}:0] {name};"
            assert decl in text, decl
    ok, messages = lint(path, module)
    assert ok, messages
