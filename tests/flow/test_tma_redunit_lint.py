"""Verilog generation and Verilator -Wall lint of the memory-side reduction unit
``hw.tma.TmaRedUnit`` (TMA-I11, I13) and of the shared float adder ``hw.common.fparith``, with the
unit's port names and widths."""

import re

import pytest

from golden.tma.formats import l2_req_fields, l2_resp_fields
from golden.tma.params import TmaParams
from hw.common.fparith import FloatAdder
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog
from tb.tma.builds import REDUNIT


class _Adder(FloatAdder):
    def __init__(self, fmt=0, stages=1):
        ew, fw, nan, ftz = [(8, 23, 0x7FFFFFFF, True), (5, 10, 0x7FFF, False),
                            (8, 7, 0x7FFF, False)][fmt]
        super().__init__(ew, fw, nan, ftz=ftz, stages=stages)


ADDER = Block(name="fp_adder", kind="test", summary="FloatAdder", spec="tma.md §4.9",
              top=_Adder, params=(Param("fmt", 0, "0 F32-FTZ, 1 F16, 2 BF16", "-"),
                                  Param("stages", 1, "0..1", "-")))

CASES = [{}, dict(addr_w=40, trk_entries=4, lanes=1, stages=0),
         dict(trk_entries=256, lanes=4, stages=0)]
ADDER_CASES = [dict(fmt=f, stages=s) for f in range(3) for s in range(2)]


def _lint(block, params, tmp_path):
    path, module = write_verilog(block, block.resolve_params(params), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


PORTS = {f"{s}__{k}" for s in ("up_req", "up_resp", "dn_req", "dn_resp")
         for k in ("valid", "ready", "payload")} | {"clk", "rst"}


@pytest.mark.req("TMA-I13")
@pytest.mark.parametrize("params", CASES,
                         ids=["_".join(f"{k}{v}" for k, v in p.items()) or "default" for p in CASES])
def test_tma_redunit_lints_clean(params, tmp_path):
    _lint(REDUNIT, params, tmp_path)


@pytest.mark.parametrize("params", ADDER_CASES, ids=[f"fmt{p['fmt']}_stages{p['stages']}"
                                                     for p in ADDER_CASES])
def test_float_adder_lints_clean(params, tmp_path):
    """hw.common.fparith.FloatAdder as F32-FTZ, F16 and BF16, combinational and pipelined."""
    _lint(ADDER, params, tmp_path)


@pytest.mark.req("TMA-I11", "TMA-I13")
@pytest.mark.parametrize("params", [{}, dict(addr_w=48, trk_entries=16)], ids=["default", "a48t16"])
def test_tma_redunit_port_names_and_widths(params, tmp_path):
    params = REDUNIT.resolve_params(params)
    path, module = write_verilog(REDUNIT, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == PORTS
    p = TmaParams(ADDR_W=params["addr_w"], TRK_ENTRIES=params["trk_entries"])
    req, resp = l2_req_fields(p).width, l2_resp_fields(p).width
    for decl in (f"input [{req - 1}:0] up_req__payload;", f"output [{req - 1}:0] dn_req__payload;",
                 f"output [{resp - 1}:0] up_resp__payload;",
                 f"input [{resp - 1}:0] dn_resp__payload;"):
        assert decl in text, decl
