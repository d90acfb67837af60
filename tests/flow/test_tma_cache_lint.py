"""Verilog generation and Verilator -Wall lint of the TMA request queue and descriptor cache
(hw/tma/reqqueue.py, hw/tma/desccache.py): each alone at default, smallest and largest
parameters, and chained in the test top; their port lists and widths."""

import re

import pytest

from golden.tma.formats import SEQ_W, cmd_fields, desc_rd_req_fields, desc_rd_resp_fields
from golden.tma.jobs import setup_in_fields
from golden.tma.params import TmaParams
from hw.tma.desccache import TmaDescCache
from hw.tma.reqqueue import TmaReqQueue
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog
from tests.rtl.test_tma_desccache import BLOCK as CACHE_TOP

_PARAMS = (Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
           Param("id_w", 8, "1..16", "ID_W"), Param("nb_w", 20, "1..28", "NB_W"))
QUEUE = Block(name="tma_reqqueue", kind="test", summary="TmaReqQueue", spec="tma.md §2.2",
              top=TmaReqQueue, params=(Param("q_depth", 4, "2..16", "Q_DEPTH"),) + _PARAMS)
CACHE = Block(name="tma_desccache", kind="test", summary="TmaDescCache", spec="tma.md §4.12",
              top=TmaDescCache, params=(Param("dc_entries", 4, "2..16", "DC_ENTRIES"),) + _PARAMS)

NARROW = dict(addr_w=40, smem_aw=11, id_w=1, nb_w=1)
CASES = [(QUEUE, {}), (QUEUE, dict(NARROW, q_depth=2)), (QUEUE, dict(q_depth=3)),
         (QUEUE, dict(q_depth=16, id_w=16, nb_w=28, smem_aw=24)),
         (CACHE, {}), (CACHE, dict(NARROW, dc_entries=2)), (CACHE, dict(dc_entries=5)),
         (CACHE, dict(dc_entries=16)),
         (CACHE_TOP, {}), (CACHE_TOP, dict(q_depth=2, dc_entries=2, addr_w=40, smem_aw=11,
                                           id_w=3, nb_w=6))]


@pytest.mark.parametrize("block,params", CASES,
                         ids=[f"{b.name}-{'_'.join(f'{k}{v}' for k, v in p.items()) or 'default'}"
                              for b, p in CASES])
def test_tma_cache_lints_clean(block, params, tmp_path):
    path, module = write_verilog(block, block.resolve_params(params), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


def _ports(text, module):
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    return {x.strip() for x in header.split(",")}


def test_tma_cache_ports(tmp_path):
    """Ports follow the shared layouts of golden.tma.formats / golden.tma.jobs; the cache output
    is exactly the Setup input."""
    p = TmaParams()
    cw = cmd_fields(p).width
    path, module = write_verilog(QUEUE, QUEUE.resolve_params({}), out_dir=tmp_path)
    text = path.read_text()
    assert _ports(text, module) == {"clk", "rst", "head_seq"} | {
        f"{s}__{k}" for s in ("cmd", "head") for k in ("valid", "ready", "payload")
    } | {"next__valid", "next__payload"}
    for decl in (f"input [{cw - 1}:0] cmd__payload;", f"output [{cw - 1}:0] head__payload;",
                 f"output [{cw - 1}:0] next__payload;", f"output [{SEQ_W - 1}:0] head_seq;"):
        assert decl in text, decl
    path, module = write_verilog(CACHE, CACHE.resolve_params({}), out_dir=tmp_path)
    text = path.read_text()
    assert _ports(text, module) == {"clk", "rst", "next__valid", "next__payload"} | {
        f"{s}__{k}" for s in ("head", "o", "desc_rd_req", "desc_rd_resp")
        for k in ("valid", "ready", "payload")
    }
    for decl in (f"input [{cw - 1}:0] head__payload;",
                 f"output [{setup_in_fields(p).width - 1}:0] o__payload;",
                 f"output [{desc_rd_req_fields(p).width - 1}:0] desc_rd_req__payload;",
                 f"input [{desc_rd_resp_fields().width - 1}:0] desc_rd_resp__payload;"):
        assert decl in text, decl
