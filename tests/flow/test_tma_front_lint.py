"""Verilog generation and Verilator -Wall lint of the TMA front end: ``TmaSetup`` and
``TmaReqGen`` alone (default and narrow parameters) and chained in the test top."""

import re

import pytest

from golden.tma.formats import err_fields
from golden.tma.jobs import job_fields, piece_fields, setup_in_fields
from golden.tma.params import TmaParams
from hw.tma.reqgen import TmaReqGen
from hw.tma.setup import TmaSetup
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog
from tests.rtl.test_tma_reqgen import BLOCK as FRONT

_PARAMS = (Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
           Param("nb_w", 20, "1..28", "NB_W"))
SETUP = Block(name="tma_setup", kind="test", summary="TmaSetup", spec="tma.md §3.4, §4.4",
              top=TmaSetup, params=_PARAMS + (Param("id_w", 8, "1..16", "ID_W"),))
REQGEN = Block(name="tma_reqgen", kind="test", summary="TmaReqGen", spec="tma.md §4.5, §4.7",
               top=TmaReqGen, params=_PARAMS + (Param("id_w", 8, "1..16", "ID_W"),))

NARROW = dict(addr_w=40, smem_aw=11, nb_w=6)
CASES = [(SETUP, {}), (SETUP, dict(NARROW, id_w=1)), (REQGEN, {}), (REQGEN, dict(NARROW, id_w=1)),
         (REQGEN, dict(addr_w=48, smem_aw=24, nb_w=28)), (FRONT, {})]


@pytest.mark.parametrize("block,params", CASES,
                         ids=[f"{b.name}-{'_'.join(f'{k}{v}' for k, v in p.items()) or 'default'}"
                              for b, p in CASES])
def test_tma_front_lints_clean(block, params, tmp_path):
    path, module = write_verilog(block, block.resolve_params(params), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


def test_tma_front_port_widths(tmp_path):
    """Ports follow the shared layouts of golden.tma.jobs / golden.tma.formats."""
    p = TmaParams()
    path, module = write_verilog(SETUP, SETUP.resolve_params({}), out_dir=tmp_path)
    text = path.read_text()
    for decl in (f"input [{setup_in_fields(p).width - 1}:0] i__payload;",
                 f"output [{job_fields(p).width - 1}:0] job__payload;",
                 f"output [{err_fields(p).width - 1}:0] err__payload;"):
        assert decl in text, decl
    path, module = write_verilog(REQGEN, REQGEN.resolve_params({}), out_dir=tmp_path)
    text = path.read_text()
    assert f"output [{piece_fields(p).width - 1}:0] piece__payload;" in text
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == {
        f"{s}__{k}" for s in ("job", "open", "piece", "fill", "fin") for k in ("valid", "ready", "payload")
    } | {"clk", "rst"}
